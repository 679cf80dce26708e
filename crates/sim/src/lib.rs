//! rxlab's simulation engine (DESIGN.md, "Simulation"): a deterministic, execution-driven
//! discrete-event simulation of a server (NIC, PCIe, LLC with DDIO, DRAM, N cores) that runs the real
//! receive-interface and app code in virtual time.
//!
//! Read in this order: [`run`] and [`SimConfig`] (what a run is), [`engine`] (the event loop and its
//! agents), [`probe`] (how reported accesses become time), then the hardware models it charges:
//! [`memory`] (caches, coherence and DDIO over [`cache`], the cores' [`prefetcher`]s), [`dram`], [`pcie`],
//! [`nic`], [`noise`], all
//! parameterised by a machine [`profile`]. [`report`] is what comes out ([`stages`]: where latency
//! goes); [`order`] checks deliveries and [`sampler`] feeds a design's controller.
//!
//! Designs come from the registry (`ifaces::with_design!`), so every design the seam knows runs here.
//!
//! Same configuration and seeds, same report, byte for byte: time is a `u64` of picoseconds, events at
//! equal times run in scheduling order, every random draw comes from seeded xoshiro streams, and no
//! wall-clock time enters the model.

pub mod addr;
pub mod antagonist;
pub mod cache;
pub mod config;
pub mod dram;
pub mod engine;
pub mod event;
pub mod host;
pub mod link;
pub mod machine;
pub mod memory;
pub mod nic;
pub mod noise;
pub mod order;
pub mod pagerank;
pub mod pcie;
pub mod prefetcher;
pub mod probe;
pub mod profile;
pub mod profile_file;
pub mod progress;
pub mod remote;
pub mod report;
pub mod sampler;
pub mod settle;
pub mod slices;
pub mod snoop;
pub mod stages;
pub mod storebuf;
pub mod timeline;
pub mod upi;
pub mod wc;

pub use config::{Arrivals, SimConfig, SimError};
pub use engine::run_design;
pub use ifaces::DESIGN_NAMES;
pub use probe::SimProbe;
pub use profile::{PROFILE_NAMES, Profile, ProfileError};
pub use progress::{Part, Progress, Spent};
pub use report::SimReport;

use apps::Hosted;

/// The profile a run uses: the named one or the file, with the run's field assignments and its DDIO and
/// LLC overrides applied.
pub fn resolve_profile(cfg: &SimConfig) -> Result<Profile, SimError> {
    let mut p = Profile::named_or_file(&cfg.profile)?;
    if !cfg.profile_set.is_empty() {
        p = profile_file::overlay(&p, &cfg.profile_set)?;
    }
    if let Some(ways) = cfg.ddio_ways {
        p.ddio_ways = ways;
    }
    if let Some(policy) = cfg.llc_policy {
        p.cpu.llc_policy = policy;
    }
    match cfg.llc_hash {
        Some(false) => p.cpu.llc_slices = None,
        Some(true) if p.cpu.llc_slices.is_none() => {
            return Err(SimError::Config {
                option: "llc-hash",
                message: format!("profile {} has no LLC slice hash; leave --llc-hash out or set it false", p.name),
            });
        }
        _ => {}
    }
    p.validate()?;
    Ok(p)
}

/// Run the simulation `cfg` describes.
pub fn run(cfg: &SimConfig) -> Result<SimReport, SimError> {
    run_observed(cfg, &Progress::default())
}

/// Run the simulation `cfg` describes, storing the virtual time reached into `progress` every sampling
/// period ([`sampler::PERIOD_PS`]) for a progress bar, and the CPU time of each part of the run once it
/// ends; the results are those of [`run`].
pub fn run_observed(cfg: &SimConfig, progress: &Progress) -> Result<SimReport, SimError> {
    progress.enter(Part::Setup);
    let profile = resolve_profile(cfg)?;
    ifaces::with_design!(&cfg.design, D => <D as ifaces::Design>::NAME)?;
    let apps = Hosted::for_cores(&cfg.app, &cfg.app_params, cfg.iface.cores, cfg.runtime)?;
    ifaces::with_design!(&cfg.design, D => run_design::<D, _>(cfg, &profile, apps, progress))?
}
