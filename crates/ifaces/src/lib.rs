//! Receive interfaces (DESIGN.md, "ifaces" layer): the seam every design and both engines plug into, and
//! the designs themselves.
//!
//! Read in this order: [`probe`] (how code reports its memory traffic), [`design`] (the device and driver
//! traits), [`privring`] (the reference design, built from [`desc`], [`cqring`], [`txring`],
//! [`refill`] and [`doorbell`]), then the memory it runs on: [`arena`], [`pool`], [`core`] and [`packet`].
//!
//! The other designs: [`shring`] (RxArr, RxList, batched RxList, dynamic), [`rxbisect`] and [`corec`],
//! built from [`slots`], [`txset`], [`bitmap`] and [`spinlock`]; [`enso`] (streaming pipes, 004); [`nicmem`] (NIC memory, 002);
//! [`mprq`] (ConnectX's Multi-Packet RQ) and [`afxdp`] (AF_XDP with a shared UMEM), shipping designs beside
//! the papers';
//! [`designs`] lists them all by name.

pub mod afxdp;
pub mod arena;
pub mod bitmap;
pub mod core;
pub mod corec;
pub mod cqring;
pub mod desc;
pub mod design;
pub mod designs;
pub mod doorbell;
pub mod enso;
pub mod invariants;
pub mod mbuf;
pub mod mprq;
pub mod nicmem;
pub mod packet;
pub mod pool;
pub mod privring;
pub mod probe;
pub mod refill;
pub mod ringsize;
pub mod rxbisect;
pub mod shring;
pub mod slots;
pub mod spinlock;
pub mod sync;
pub mod txfetch;
pub mod txring;
pub mod txset;
pub mod wbpack;

#[cfg(all(test, loom))]
mod loom_tests;

pub use crate::core::{CoreCtx, CoreId};
pub use afxdp::{AfXdp, AfXdpConfig};
pub use arena::{Arena, BufId, BufLayout, Owner};
pub use corec::Corec;
pub use design::{
    ConfigError, Design, DeviceSide, DriverSide, DropReason, Drops, IfaceConfig, Metrics, Occupancy, Sample, Wake,
};
pub use designs::DESIGN_NAMES;
pub use enso::{Enso, EnsoChaotic, EnsoPerPacket, EnsoPrefetch};
pub use mprq::{Mprq, MprqConfig};
pub use nicmem::{NicMemHost, NicMemSplit, NmNfv, NmNfvMinus};
pub use packet::Packet;
pub use pool::SharedPool;
pub use privring::PrivRing;
pub use probe::{Access, NoProbe, Phase, Probe};
pub use refill::RxRefill;
pub use ringsize::RingSize;
pub use rxbisect::{AxPolicy, RxBisect};
pub use shring::{arr::RxArr, batched::BatchedRxList, dynamic::Dynamic, list::RxList};
pub use txring::TxFull;
