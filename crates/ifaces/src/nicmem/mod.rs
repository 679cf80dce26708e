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

/// How much NIC memory the data movers get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NicMemCapacity {
    /// A device with this many bytes ([`PAPER_CAPACITY`] on the paper's NIC; more for a "future
    /// device", §6.6 C2): when it runs out, nmNFV's split rings spill payloads to host memory.
    Bytes(usize),
    /// As the paper evaluated nmNFV (§5, "Hardware limitations"): "we emulate a large nicmem by reusing
    /// the provided memory buffer for storing the data of multiple packets", so every primary ring is
    /// full-size and never waits for a buffer ([`crate::nicmem::split`] sizes it).
    Emulated,
}

impl std::fmt::Display for NicMemCapacity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NicMemCapacity::Bytes(b) => write!(f, "{b} B"),
            NicMemCapacity::Emulated => f.write_str("emulated"),
        }
    }
}

/// nicmem's options (`IfaceConfig::nicmem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NicMemConfig {
    /// NIC memory for payloads and hot items.
    pub capacity: NicMemCapacity,
    /// Header/data split offset H: the first H bytes go to the header (§5: 64 B).
    pub split_at: usize,
    /// nmNFV's queues with NIC memory, the first this many; the others are host queues, whole packets
    /// in host buffers as `nicmem-host` keeps them (§6.4, Figure 13: "controlling the number of nicmem
    /// queues"). `None`: every queue.
    pub queues: Option<usize>,
}

impl Default for NicMemConfig {
    /// The paper's evaluation: emulated large NIC memory, split at 64 bytes, on every queue.
    fn default() -> Self {
        NicMemConfig { capacity: NicMemCapacity::Emulated, split_at: 64, queues: None }
    }
}
