//! What a core owns while it runs: its identity and its buffer cache. Packets borrow it, so a packet
//! dropped on a core returns its buffer to that core's cache (the two-level allocator of rxBisect §4.2).

use crate::arena::Arena;
use crate::pool::{CacheStats, PoolCache, SharedPool};
use crate::probe::Probe;
use crate::sync::Arc;
use std::cell::RefCell;

/// Index of a worker core (also the RSS target of its traffic).
pub type CoreId = u16;

/// Per-core state handed to the driver side and to apps: never shared between threads.
#[derive(Debug)]
pub struct CoreCtx {
    id: CoreId,
    arena: Arc<Arena>,
    cache: RefCell<PoolCache>,
}

impl CoreCtx {
    /// A core with a buffer cache of `cache_size` over `pool`.
    pub fn new(id: CoreId, cache_size: usize, pool: &Arc<SharedPool>) -> CoreCtx {
        CoreCtx { id, arena: pool.arena().clone(), cache: RefCell::new(PoolCache::new(id, cache_size, pool.clone())) }
    }

    /// This core's index.
    pub fn id(&self) -> CoreId {
        self.id
    }

    /// The host buffer arena.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// Allocate a buffer from this core's cache (owned by this core until posted, sent or freed).
    #[inline]
    pub fn alloc<P: Probe>(&self, p: &mut P) -> Option<crate::arena::BufId> {
        self.cache.borrow_mut().alloc(p)
    }

    /// Free a buffer this core holds.
    #[inline]
    pub fn free<P: Probe>(&self, p: &mut P, id: crate::arena::BufId) {
        self.cache.borrow_mut().free(p, id)
    }

    /// Allocate a fresh, empty packet (for apps that build responses, e.g. a key-value server).
    pub fn alloc_packet<P: Probe>(&self, p: &mut P) -> Option<crate::Packet<'_>> {
        let id = self.alloc(p)?;
        Some(crate::Packet::from_owned(self, id, 0))
    }

    pub(crate) fn free_unprobed(&self, id: crate::arena::BufId) {
        self.cache.borrow_mut().free_unprobed(id)
    }

    /// Allocator counters of this core.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.borrow().stats()
    }
}
