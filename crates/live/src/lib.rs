//! The live engine (DESIGN.md, "engines"): real threads moving real packets through a design.
//!
//! A software NIC thread plays the device, as rxBisect §5's emulator does: it draws pre-built packets
//! from the traffic layer ([`source`]), paces them, steers them with RSS and an indirection table, runs the
//! design's device side, and receives the packets the design transmits ([`sink`]); `--nic-threads N` runs N
//! of them, each an emulated port with its share of the traffic and the workers ([`port`]). One worker
//! thread per core runs the app in a poll loop ([`worker`]). A run warms up, measures, stops the source, drains
//! ([`control`]), checks the invariants of DESIGN.md and reports ([`report`]), saying when its threads
//! were off their CPUs ([`offcpu`]).

pub mod control;
pub mod feed;
pub mod handoff;
pub mod jitter;
pub mod nic;
pub mod offcpu;
pub mod pin;
pub mod port;
pub mod report;
pub mod run;
pub mod sink;
pub mod source;
pub mod worker;

pub use nic::Pace;
pub use report::LiveReport;
pub use run::{LiveConfig, LiveError, Traffic, run, run_design};
