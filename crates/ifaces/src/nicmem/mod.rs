//! nicmem (paper 002): NIC memory exposed to software, and the data movers that use it.
//!
//! Read in this order: [`region`] (the NIC memory, `alloc_nicmem`, its address range and CPU access
//! counts), [`rings`] (receive rings over host or NIC memory), [`split`] (header/data split, split rings
//! and header inlining: the four configurations of §6.1, registry names `nicmem-host`, `nicmem-split`,
//! `nmnfv-`, `nmnfv`), [`kvs`] (nmKVS's hot items served zero-copy from NIC memory, §4.2.2).

pub mod kvs;
pub mod region;
pub mod rings;
pub mod split;

pub use region::{NicMem, NicMemError, PAPER_CAPACITY};
pub use split::{NicMemDesign, NicMemDevice, NicMemDriver, NicMemHost, NicMemSplit, NmNfv, NmNfvMinus};

/// nicmem's options (`IfaceConfig::nicmem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NicMemConfig {
    /// Bytes of NIC memory ([`PAPER_CAPACITY`] on the paper's NIC; more for a "future device").
    pub capacity: usize,
    /// Header/data split offset H: the first H bytes go to the header (§5: 64 B).
    pub split_at: usize,
}

impl Default for NicMemConfig {
    /// The paper's NIC: 256 KiB, split at 64 bytes.
    fn default() -> Self {
        NicMemConfig { capacity: PAPER_CAPACITY, split_at: 64 }
    }
}
