//! The traffic layer of rxlab (DESIGN.md, "Layers"): packets and traces.
//!
//! - [`trace`]: read pcap/pcapng (streaming, [`TraceReader`]) and write them atomically ([`TraceWriter`]);
//!   [`link`] normalises other link types to Ethernet.
//! - [`Generator`]: seeded synthetic traffic from a [`GenConfig`]: sizes ([`sizes`]), flows, their
//!   popularity and order ([`flows`]), rate and bursts ([`rate`], [`units`]) and RSS steering ([`steer`]).
//!   Every packet carries a [`wire::Stamp`] (after a key-value request with [`Payload::Kvs`], after log
//!   lines with [`Payload::Logs`]); [`template`]
//!   makes each one a copy and a few patched fields.
//! - [`kvs`]: key-value requests (wire format and client) for the `kvs` app and KVS payloads.
//! - [`logs`]: syslog lines for the `logmon` app and log payloads.
//! - [`inspect`](mod@inspect): the summary `rxlab trace inspect` prints, including how RSS spreads a trace over N
//!   queues (rxBisect §3.3, Figure 4).
//!
//! Sizes follow `wire::frame`: a frame is named by its length including the 4-byte FCS, buffers and pcap
//! records hold the frame without it.

pub mod atomic;
mod chosen;
pub mod config;
pub mod flows;
pub mod generator;
pub mod hash;
pub mod inspect;
pub mod kvs;
pub mod link;
pub mod logs;
pub mod rate;
pub mod sizes;
mod source;
pub mod steer;
pub mod template;
pub mod trace;
pub mod units;
pub mod wild;

pub use config::{GenConfig, GenError, LoadSwitch, Payload};
pub use flows::{FlowInfo, FlowSet, IpVersion, Popularity};
pub use generator::{FrameBuf, Generator, PacketMeta, Stop};
pub use inspect::{InspectOptions, TraceSummary, inspect};
pub use rate::{Burst, Train};
pub use sizes::SizeSpec;
pub use steer::Steering;
pub use trace::{Container, OutputFormat, Resolution, Trace, TraceError, TracePacket, TraceReader, TraceWriter};
pub use units::Rate;
