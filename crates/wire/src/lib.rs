//! The wire layer of rxlab (DESIGN.md, "Layers"): packet bytes and headers.
//!
//! - [`view`]: a checked view over Ethernet frames (IPv4/IPv6, UDP/TCP) and the extracted [`FiveTuple`];
//!   malformed or truncated frames are a typed [`WireError`], never a panic.
//! - [`build`]: building UDP/TCP frames, with the [`Stamp`] (sequence number and send time) that receivers
//!   use for latency and reordering.
//! - [`toeplitz`] and [`reta`]: receive-side scaling as NICs compute it (Microsoft RSS specification).
//! - [`frame`]: Ethernet framing overheads used to turn a bit rate into a packet rate.
//! - [`checksum`] and [`rewrite`]: the Internet checksum and in-place header rewrites that keep it valid
//!   by incremental update (RFC 1624).

pub mod build;
pub mod checksum;
pub mod frame;
pub mod reta;
pub mod rewrite;
pub mod stamp;
pub mod toeplitz;
pub mod tuple;
pub mod view;

pub use build::{FrameSpec, L4Proto, build_frame};
pub use reta::{IndirectionTable, QueueId};
pub use stamp::Stamp;
pub use toeplitz::{RssFields, RssKey, Toeplitz};
pub use tuple::FiveTuple;
pub use view::{PacketView, WireError};
