//! The `rxlab` command-line front end as a library: its subcommands (one module each) and the parsers of
//! its outside input (experiment files, parameters), which the fuzz targets in `fuzz/` drive directly.
//! The binary is `src/main.rs`.

pub mod advise;
pub mod bar;
pub mod bench;
pub mod build;
pub mod cancel;
pub mod claim;
pub mod compare;
pub mod experiment;
pub mod jitter;
pub mod merge;
pub mod ndr;
pub mod params;
pub mod point;
pub mod profile_cmd;
pub mod reference;
pub mod report;
pub mod reproduce;
pub mod results;
pub mod run;
pub mod sim_speed;
pub mod soak;
pub mod space;
pub mod sweep;
pub mod trace;
pub mod traffic_args;
pub mod trials;
pub mod vs_sim;
