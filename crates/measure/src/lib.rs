//! Measurement primitives shared by both engines and the lab.
//!
//! - [`latency`]: per-core HdrHistogram latency recorders, merged at the end of a run, and their summary.
//! - [`reorder`]: RFC 4737 reordering metrics (ratio, extent, n-reordering) over received sequence numbers.
//! - [`flow_order`]: RFC 4737's reordered-packet test within each flow.
//! - [`seen`]: which sequence numbers were delivered, for the no-duplicate invariant.
//! - [`ndr`]: the RFC 2544 no-drop-rate search over any "run one trial at rate r" function.
//! - [`counters`]: packets, bytes and seconds turned into Mpps and Gbps (Ethernet framing counted).
//!
//! Every recorder is online and bounded in memory, and nothing here panics on its input.

pub mod counters;
pub mod flow_order;
pub mod latency;
pub mod ndr;
pub mod reorder;
pub mod seen;

pub use counters::Throughput;
pub use flow_order::{FlowOrder, FlowOrderReport};
pub use latency::{CdfPoint, LatencyHistogram, LatencySummary};
pub use ndr::{NdrConfig, NdrError, NdrResult, Resolution, Trial, TrialRecord};
pub use reorder::{ExtentSummary, ReorderReport, ReorderTracker};
pub use seen::{Seen, SeenWindow};
