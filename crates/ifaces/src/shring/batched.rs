//! Batched RxList (000 §4.4, "Prefetching Solution", Figure 5b), which the paper could not build: each
//! list descriptor holds several packets, and the NIC keeps, per completion ring, the descriptor it is
//! filling for that core (the per-core "mini hwHeads"), taking a new one from the list only once it is
//! full. A core then appends to the list once per descriptor, not once per packet, and the NIC fetches
//! one descriptor per `--list-batch` packets of a core, whatever the list order.
//!
//! Layout decision: a multi-packet descriptor is `list_batch` consecutive 16-byte entries, each pointing
//! to one 2 KiB buffer (a ConnectX receive WQE with several scatter entries, or a multi-packet receive
//! queue with 2 KiB strides); the packet in slot `s` lands in entry `s`. So every packet is a whole
//! buffer, [`crate::Packet`] and the Tx path need no change, and the ring keeps `--ring` buffers in
//! `ring / list_batch` descriptors, the same I/O working set as RxArr. Packing several small packets into
//! one 2 KiB buffer would shrink the working set further but needs packets that are slices of a shared,
//! reference-counted buffer (see the crate README).
//!
//! The NIC and core logic is RxList's ([`super::list`]) with `list_batch` packets per descriptor.

use super::list::{ListNic, ListRepost, make};
use super::{ShDevice, ShDriver, Sharing};
use crate::desc::DescRing;
use crate::design::{ConfigError, Design, IfaceConfig};
use crate::pool::SharedPool;
use crate::sync::Arc;

/// The batched RxList design (`--iface rxlist-batched`).
#[derive(Debug)]
pub struct BatchedRxList;

impl Design for BatchedRxList {
    const NAME: &'static str = "rxlist-batched";
    type Device = ShDevice<ListNic>;
    type Driver = ShDriver<ListRepost>;

    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        super::buffers_needed(cfg)
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(Self::Device, Vec<Self::Driver>), ConfigError> {
        super::build::<BatchedRxList>(cfg, pool)
    }
}

impl Sharing for BatchedRxList {
    type Nic = ListNic;
    type Repost = ListRepost;

    fn segs(cfg: &IfaceConfig) -> u32 {
        cfg.list_batch
    }

    /// `list_batch` is a power of two that leaves at least one descriptor per group member plus the list's
    /// tail, so that every member can hold one open descriptor while others are still available.
    fn validate(cfg: &IfaceConfig) -> Result<(), ConfigError> {
        let b = cfg.list_batch;
        let share = super::share_of(cfg)?;
        if !b.is_power_of_two() || (cfg.ring.get() / b) < share as u32 + 1 {
            return Err(ConfigError::new(
                "list-batch",
                format!(
                    "must be a power of two leaving at least {} descriptors of the {}-entry ring, got {b}",
                    share + 1,
                    cfg.ring
                ),
            ));
        }
        Ok(())
    }

    fn make(ring: DescRing, descs: u32, cfg: &IfaceConfig, share: usize) -> (ListNic, Vec<ListRepost>) {
        make(ring, descs, cfg.list_batch, cfg, share)
    }
}
