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
    returned: RefCell<Vec<u64>>,
}

impl CoreCtx {
    /// A core with a buffer cache of `cache_size` over `pool`.
    pub fn new(id: CoreId, cache_size: usize, pool: &Arc<SharedPool>) -> CoreCtx {
        CoreCtx {
            id,
            arena: pool.arena().clone(),
            cache: RefCell::new(PoolCache::new(id, cache_size, pool.clone())),
            returned: RefCell::new(Vec::new()),
        }
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

    /// Free a buffer the device has sent: without reading it under a fast free
    /// ([`crate::IfaceConfig::tx_fast_free`]), else as any free does.
    #[inline]
    pub fn free_sent<P: Probe>(&self, p: &mut P, id: crate::arena::BufId, fast: bool) {
        let mut cache = self.cache.borrow_mut();
        if fast { cache.put(p, id) } else { cache.free(p, id) }
    }

    /// Allocate a fresh, empty packet (for apps that build responses, e.g. a key-value server).
    pub fn alloc_packet<P: Probe>(&self, p: &mut P) -> Option<crate::Packet<'_>> {
        let id = self.alloc(p)?;
        Some(crate::Packet::from_owned(self, id, 0))
    }

    /// A lent packet or segment was dropped: keep its token for the design that lent it.
    pub(crate) fn give_back(&self, token: u64) {
        self.returned.borrow_mut().push(token);
    }

    /// Move the tokens of lent memory dropped since the last call into `out` (for the design that lent
    /// it; see [`crate::packet::Backing::Lent`]).
    pub fn take_returned(&self, out: &mut Vec<u64>) {
        out.append(&mut self.returned.borrow_mut());
    }

    pub(crate) fn free_unprobed(&self, id: crate::arena::BufId) {
        self.cache.borrow_mut().free_unprobed(id)
    }

    /// Allocator counters of this core.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.borrow().stats()
    }
}
