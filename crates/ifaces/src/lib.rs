//! Receive interfaces (DESIGN.md, "ifaces" layer): the seam every design and both engines plug into, and
//! the designs themselves.
//!
//! Read in this order: [`probe`] (how code reports its memory traffic), [`design`] (the device and driver
//! traits), [`privring`] (the reference design, built from [`desc`], [`cqring`], [`txring`] and
//! [`doorbell`]), then the memory it runs on: [`arena`], [`pool`], [`core`] and [`packet`].

pub mod arena;
pub mod core;
pub mod cqring;
pub mod desc;
pub mod design;
pub mod doorbell;
pub mod packet;
pub mod pool;
pub mod privring;
pub mod probe;
pub mod ringsize;
pub mod sync;
pub mod txring;

pub use crate::core::{CoreCtx, CoreId};
pub use arena::{Arena, BufId, BufLayout, Owner};
pub use design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, Drops, IfaceConfig, Metrics, Occupancy};
pub use packet::Packet;
pub use pool::SharedPool;
pub use privring::PrivRing;
pub use probe::{Access, NoProbe, Phase, Probe};
pub use ringsize::RingSize;
