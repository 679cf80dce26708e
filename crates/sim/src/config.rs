//! What a simulation run is given, and every way it can fail.

use crate::profile::ProfileError;
use ifaces::IfaceConfig;
use traffic::GenConfig;

/// How packet arrival times are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrivals {
    /// The generator's own send times (constant rate, or its on/off bursts).
    #[default]
    Paced,
    /// A Poisson process with the generator's mean rate (exponential gaps from the sim's seeded RNG).
    Poisson,
}

/// One simulation run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Machine profile: a built-in name (see [`crate::PROFILE_NAMES`]) or a profile file `PATH.toml`
    /// ([`crate::profile_file`]).
    pub profile: String,
    /// `;`-separated `FIELD = VALUE` assignments laid over the profile ([`crate::profile_file::overlay`]);
    /// empty for none.
    pub profile_set: String,
    /// Override of the profile's DDIO ways (0 turns DDIO off).
    pub ddio_ways: Option<usize>,
    /// Override of the profile's LLC replacement policy.
    pub llc_policy: Option<crate::cache::Policy>,
    /// Override of the profile's LLC slices: `false` indexes the LLC's sets by the low line bits as one
    /// slice; `true` keeps the profile's slice hash (and fails on a profile without one).
    pub llc_hash: Option<bool>,
    /// Override of the profile NIC's CQE compression (`nic.cqe_compression`).
    pub cqe_compress: Option<bool>,
    /// Override of the profile's receive refill policy (`nic.rx_refill`, [`ifaces::refill`]).
    pub rx_refill: Option<ifaces::RxRefill>,
    /// The receive interface's configuration; its descriptor prefetch, completion format and receive
    /// refill are the profile's NIC's.
    pub iface: IfaceConfig,
    /// Design name (see [`crate::DESIGN_NAMES`]).
    pub design: String,
    /// App name (see `apps::APP_NAMES`).
    pub app: String,
    /// App parameters (`key=value,...` on the command line).
    pub app_params: apps::AppParams,
    /// The software the app runs in (`--runtime`): its own code, or a FastClick graph.
    pub runtime: apps::Runtime,
    /// The offered traffic.
    pub traffic: GenConfig,
    /// Arrival process.
    pub arrivals: Arrivals,
    /// Virtual time during which traffic is offered, ps (the run then drains).
    pub duration_ps: u64,
    /// Start of the measurement window, ps (counters before it are discarded); with `settle`, the
    /// latest start.
    pub warmup_ps: u64,
    /// Whether the run ends its warm-up as soon as it has settled ([`crate::settle`], MSER-5), at most
    /// `warmup_ps` in, and then measures for `duration_ps - warmup_ps`; `false` warms up for exactly
    /// `warmup_ps`.
    pub settle: bool,
    /// Seed of the simulator's own random streams (arrival gaps, host noise); the traffic has its own.
    pub seed: u64,
    /// Whether cores are interrupted as the profile's host noise says ([`crate::noise`]).
    pub noise: bool,
    /// Real time whose rare interruptions the run (warm-up included) carries, ps ([`crate::noise`]; a
    /// no-drop trial of RFC 2544 lasts 60 s); `None`: the run's own length.
    pub noise_horizon_ps: Option<u64>,
    /// Which of the horizon's rare interruptions the run carries ([`crate::noise::Tail`]).
    pub noise_tail: crate::noise::Tail,
    /// Whether each core's app sees every flow RSS steers to it before the run (`apps::App::warm`), as
    /// the papers' warm-up traffic shows it every flow; `false` starts with empty flow tables.
    pub warm_tables: bool,
    /// How long every core is away at the start of the run, ps, while packets arrive: one system-wide
    /// interruption, to find out whether a configuration is bistable, i.e. whether the backlog it leaves
    /// pushes the server into the second state and the server stays there (docs/model.md, "Two states"). 0 (the
    /// default) starts every core at once. Not a model of any paper's testbed.
    pub stall_ps: u64,
    /// STREAM triad instances co-located with the NF, each on a core of its own beside the workers,
    /// sharing their LLC and DRAM ([`crate::antagonist`]; rxBisect §6.2, Figure 17). 0: none.
    pub stream_triads: usize,
    /// PageRank threads co-located with the NF ([`crate::pagerank`]; rxBisect §6.2, Figure 16). 0: none.
    pub pagerank_threads: usize,
    /// Where the STREAM triads and PageRank threads run: on cores of the NIC's socket beside the workers
    /// (the default) or on the other socket with their memory on the NIC's ([`crate::remote::Socket`]).
    pub colocated_socket: crate::remote::Socket,
    /// Where the NF's cores and their memory (rings, buffers, tables) are: on the NIC's socket (the
    /// default) or on the other one, as COREC §4.1's "different NUMA" columns run them: the NIC's DMA
    /// and the cores' doorbells then cross the links between the sockets
    /// ([`crate::machine::Machine::nic_across_sockets`]).
    pub nf_socket: crate::remote::Socket,
    /// nicmem Figure 14's copy loop on a core of its own after the workers and triads
    /// ([`crate::antagonist::CopyLoop`]); none by default.
    pub copy_loop: Option<crate::antagonist::CopySpec>,
}

impl Default for SimConfig {
    /// privRing and echo on the R640 profile, 1 ms with 100 µs warm-up, paced arrivals, the profile's noise.
    fn default() -> Self {
        SimConfig {
            profile: "r640-silver4216".into(),
            profile_set: String::new(),
            ddio_ways: None,
            llc_policy: None,
            llc_hash: None,
            cqe_compress: None,
            rx_refill: None,
            iface: IfaceConfig::default(),
            design: "privring".into(),
            app: "echo".into(),
            app_params: apps::AppParams::new(),
            runtime: apps::Runtime::Native,
            traffic: GenConfig::default(),
            arrivals: Arrivals::Paced,
            duration_ps: 1_000_000_000,
            warmup_ps: 100_000_000,
            settle: false,
            seed: 1,
            noise: true,
            noise_horizon_ps: None,
            noise_tail: crate::noise::Tail::Rare,
            warm_tables: true,
            stall_ps: 0,
            stream_triads: 0,
            pagerank_threads: 0,
            colocated_socket: crate::remote::Socket::Local,
            nf_socket: crate::remote::Socket::Local,
            copy_loop: None,
        }
    }
}

/// Why a run could not start or did not pass its end-of-run checks.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Bad profile name or impossible profile parameters.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A run parameter is impossible.
    #[error("invalid --{option}: {message}")]
    Config {
        /// The option at fault.
        option: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// No design of that name, or an interface configuration the design rejects.
    #[error(transparent)]
    Iface(#[from] ifaces::ConfigError),
    /// The app could not be built.
    #[error(transparent)]
    App(#[from] apps::AppError),
    /// The traffic generator could not be built.
    #[error("traffic: {0}")]
    Traffic(traffic::GenError),
    /// The buffer arena could not be allocated.
    #[error("buffers: {0}")]
    Arena(ifaces::arena::ArenaError),
    /// An end-of-run invariant failed (DESIGN.md, "Invariants"): the run's numbers are not reported.
    #[error("invariant '{invariant}' failed: {detail}")]
    Invariant {
        /// Which invariant: conservation, drained, no-leak, no-duplicate.
        invariant: &'static str,
        /// The counts that break it.
        detail: String,
    },
}

impl SimConfig {
    /// Check the run parameters that do not need the profile.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |option, message: String| Err(SimError::Config { option, message });
        if self.duration_ps == 0 {
            return bad("duration", "the run needs a duration above 0, e.g. 10ms".into());
        }
        if self.warmup_ps >= self.duration_ps {
            return bad(
                "warmup",
                format!(
                    "warm-up {} ns must be shorter than the duration {} ns",
                    self.warmup_ps / 1000,
                    self.duration_ps / 1000
                ),
            );
        }
        if self.noise_horizon_ps.is_some_and(|h| h < self.duration_ps) {
            return bad(
                "noise-horizon",
                "the noise horizon is the real time a run stands for; give at least the run's length, warm-up \
                 and measured duration together"
                    .into(),
            );
        }
        if self.settle && self.noise_horizon_ps.is_some() {
            return bad(
                "settle",
                "a noise horizon spreads its rare interruptions over the whole run, warm-up included, as over the \
                 real trial, so the run's length must be fixed up front; drop --settle or --noise-horizon"
                    .into(),
            );
        }
        if self.stall_ps >= self.duration_ps {
            return bad(
                "stall",
                "a stall must end before the run does; give less than the warm-up and duration together".into(),
            );
        }
        self.traffic.validate().map_err(SimError::Traffic)?;
        self.iface.validate_common()?;
        Ok(())
    }
}
