//! The traffic options shared by `rxlab trace gen` and `rxlab run`: one definition, one parser.

use crate::params::FlowOrder;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use traffic::units::parse_duration_ns;
use traffic::{Burst, GenConfig, IpVersion, LoadSwitch, Payload, Popularity, Rate, SizeSpec, Steering, Train};
use wire::L4Proto;

/// What the synthetic generator sends.
#[derive(Args, Debug, Clone)]
pub struct TrafficArgs {
    /// A named synthetic stand-in for a trace the papers replay, e.g. `caida-nyc-2018` (documented in
    /// `traffic::wild`; a stand-in, not the trace): its size mix, flow count and Zipf popularity replace
    /// the defaults of --size, --flows and --zipf, which still override them.
    #[arg(long)]
    pub traffic: Option<String>,
    /// Frame size, FCS included: 64..=1518, `imix` (64/570/1518 B at 7:4:1), `dc` (200/1400 B at 1:1,
    /// the bimodal data-centre mix), `SIZE:WEIGHT,...` (e.g. `64:2,1518:3`) or `pcap:FILE` (the sizes of
    /// a capture) [default: 64].
    #[arg(long)]
    pub size: Option<String>,
    /// Number of flows [default: 1024].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    pub flows: Option<usize>,
    /// Zipf exponent of flow popularity (default: uniform).
    #[arg(long)]
    pub zipf: Option<f64>,
    /// Order of the flows: `random` draws or `stepped`, each flow in turn as T-Rex's `op = "inc"` sends
    /// them (the nicmem artifact's profile).
    #[arg(long, value_enum, default_value = "random")]
    pub flow_order: FlowOrder,
    /// On/off bursts `ON:OFF`, e.g. `100us:50us` (bare numbers are microseconds).
    #[arg(long)]
    pub burst: Option<String>,
    /// Trains `FRAMES@LINE`, e.g. `32@100G`: frames leave in trains, back to back at the sender's line
    /// rate, as a DPDK sender's transmit bursts do (default: evenly paced).
    #[arg(long)]
    pub train: Option<String>,
    /// Send --target-percent of the packets to this queue (shRing §5.3, rxBisect §6.2).
    #[arg(long, requires = "target_percent")]
    pub target_queue: Option<usize>,
    /// Share of packets for --target-queue, 0..=100.
    #[arg(long, requires = "target_queue", allow_hyphen_values = true)]
    pub target_percent: Option<f64>,
    /// Frame size of the target queue's packets (the papers use 64 B there and 1500 B elsewhere).
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, requires = "target_queue")]
    pub target_size: Option<usize>,
    /// NIC ports, each with an equal share of the traffic and the queues and its own target queue
    /// (--target-queue within each port's queues) getting --target-percent of its packets: "a target core
    /// per NIC" (shRing §5.3, rxBisect §6.2) [default: 1].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, requires = "target_queue")]
    pub target_ports: Option<usize>,
    /// Change the target queues' load this long after the start, e.g. `250ms`: from then on they get
    /// --switch-percent of each port's packets, in frames of --switch-target-size, the flows staying the
    /// same ("we reconfigure the load generator to send a pathological load", shRing §5.3, Figure 13).
    #[arg(long, requires_all = ["target_queue", "switch_percent"])]
    pub switch_at: Option<String>,
    /// Share of packets for the target queues after --switch-at, 0..=100.
    #[arg(long, requires = "switch_at", allow_hyphen_values = true)]
    pub switch_percent: Option<f64>,
    /// Frame size of the target queues' packets after --switch-at [default: as before].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, requires = "switch_at")]
    pub switch_target_size: Option<usize>,
    /// Pick flows so that RSS puts the same number on every queue.
    #[arg(long, conflicts_with = "target_queue")]
    pub rss_even: bool,
    /// Receive queues for --target-queue or --rss-even (default RSS key, round-robin table; `rxlab run`
    /// uses --cores when this is not given).
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    pub queues: Option<usize>,
    /// TCP instead of UDP.
    #[arg(long)]
    pub tcp: bool,
    /// IPv6 instead of IPv4.
    #[arg(long)]
    pub ipv6: bool,
    /// Seed of the random stream: same arguments and seed, same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl TrafficArgs {
    /// The generator configuration at `rate`; steering over `--queues`, else over `default_queues`.
    pub fn config(&self, rate: Rate, default_queues: Option<usize>) -> Result<GenConfig> {
        let queues = self.queues.or(default_queues);
        let steering = match (self.target_queue, self.rss_even, queues) {
            (Some(queue), _, Some(queues)) => Steering::Target {
                queues,
                queue,
                percent: self.target_percent.unwrap_or(100.0),
                target_size: self.target_size,
                ports: self.target_ports.unwrap_or(1),
            },
            (None, true, Some(queues)) => Steering::RssEven { queues },
            (Some(_), _, None) | (None, true, None) => bail!("--target-queue and --rss-even need --queues"),
            (None, false, Some(_)) if self.queues.is_some() => bail!("--queues needs --target-queue or --rss-even"),
            _ => Steering::None,
        };
        let stand = self.traffic.as_deref().map(|t| flag("traffic", traffic::wild::stand(t))).transpose()?;
        let size = match (&self.size, stand) {
            (Some(s), _) => flag("size", s.parse::<SizeSpec>())?,
            (None, Some(s)) => s.size_spec(),
            (None, None) => SizeSpec::default(),
        };
        let zipf = self.zipf.or(stand.map(|s| s.zipf));
        let switch = match (&self.switch_at, self.switch_percent) {
            (Some(at), Some(percent)) => Some(LoadSwitch {
                at_ns: flag("switch-at", parse_duration_ns(at))?,
                percent,
                target_size: self.switch_target_size,
            }),
            (None, None) if self.switch_target_size.is_none() => None,
            _ => bail!("a load switch needs both --switch-at and --switch-percent"),
        };
        Ok(GenConfig {
            seed: self.seed,
            size,
            flows: self.flows.or(stand.map(|s| s.flows)).unwrap_or(1024),
            popularity: match (self.flow_order, zipf) {
                (FlowOrder::Random, s) => s.map_or(Popularity::Uniform, Popularity::Zipf),
                (FlowOrder::Stepped, None) => Popularity::Stepped,
                (FlowOrder::Stepped, Some(_)) => bail!("--zipf draws flows at random: it needs --flow-order random"),
            },
            proto: if self.tcp { L4Proto::Tcp } else { L4Proto::Udp },
            ip: if self.ipv6 { IpVersion::V6 } else { IpVersion::V4 },
            rate,
            burst: self.burst.as_deref().map(parse_burst).transpose().context("--burst")?,
            train: self.train.as_deref().map(parse_train).transpose().context("--train")?,
            steering,
            payload: Payload::Stamp,
            // The simulator puts its NIC's table in (`nic.reta_entries`); traces and the live engine's
            // software NIC use the specification's.
            reta: wire::reta::RETA_SIZE,
            switch,
        })
    }
}

/// Name the option in front of a parse error: `invalid --NAME: ...`.
pub fn flag<T>(name: &str, parsed: Result<T, String>) -> Result<T> {
    parsed.map_err(|e| anyhow!("invalid --{name}: {e}"))
}

/// `FRAMES@LINE`: frames per train and the line rate they leave at.
fn parse_train(s: &str) -> Result<Train> {
    let (n, line) = s.split_once('@').with_context(|| format!("bad train '{s}': write FRAMES@LINE, e.g. 32@100G"))?;
    let frames = n.trim().parse().map_err(|_| anyhow!("bad train '{s}': {n} is not a frame count"))?;
    Ok(Train { frames, line: line.trim().parse().map_err(anyhow::Error::msg)? })
}

/// `ON:OFF` with durations; bare numbers are microseconds.
fn parse_burst(s: &str) -> Result<Burst> {
    let (on, off) = s.split_once(':').with_context(|| format!("bad burst '{s}': write ON:OFF, e.g. 100us:50us"))?;
    let ns = |d: &str| {
        let d = d.trim();
        let with_unit = if d.ends_with(|c: char| c.is_ascii_digit()) { format!("{d}us") } else { d.to_string() };
        parse_duration_ns(&with_unit).map_err(anyhow::Error::msg)
    };
    Ok(Burst { on_ns: ns(on)?, off_ns: ns(off)? })
}
