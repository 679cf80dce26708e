//! Trace summaries: volume, rate, sizes, flows, and how RSS would spread the trace over N queues.
//!
//! The RSS view follows rxBisect §3.3 and Figure 4: hash every packet as the NIC does (Toeplitz,
//! Microsoft key, addresses and ports, round-robin 128-entry indirection table), count packets per queue
//! in fixed time windows, and report per-queue rates and the ratio of the least to the most loaded
//! queue in each window. (The paper plots the inverse, max/min, which stays at 325-433 % for its CAIDA
//! trace over 16 cores; min/max is used here because it stays finite when a queue idles.)

use crate::trace::{TraceError, TracePacket};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use wire::frame::wire_bits;
use wire::reta::RETA_SIZE;
use wire::{FiveTuple, IndirectionTable, PacketView, QueueId, RssFields, Toeplitz};

/// What to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InspectOptions {
    /// Receive queues for the RSS view, 1..=128.
    pub queues: usize,
    /// Window length of the per-queue rates, nanoseconds (> 0).
    pub window_ns: u64,
    /// How many of the largest flows to list.
    pub top: usize,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions { queues: 16, window_ns: 1_000_000, top: 10 }
    }
}

/// Why a trace could not be summarised.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// An option is out of range.
    #[error("{0}")]
    Options(String),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// Everything `rxlab trace inspect` reports. Frame sizes and bytes include the FCS (rxlab's convention).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceSummary {
    /// Packets in the trace.
    pub packets: u64,
    /// Sum of frame lengths.
    pub bytes: u64,
    /// Time from the first to the last packet, nanoseconds.
    pub duration_ns: u64,
    /// Mean packet rate: packets before the last one over the duration (0 for a single packet).
    pub mean_mpps: f64,
    /// Mean bit rate with Ethernet framing (preamble, SFD, FCS, inter-frame gap), same convention.
    pub mean_gbps: f64,
    /// Frame-size histogram (RFC 2819 etherStats buckets, plus runts and jumbo frames).
    pub sizes: Vec<SizeBucket>,
    /// Frames that are not IPv4/IPv6 or fail to parse; they are counted here and nowhere else below.
    pub non_ip: u64,
    /// Distinct 5-tuples.
    pub flows: u64,
    /// The flows with the most packets, largest first.
    pub top_flows: Vec<FlowStat>,
    /// How RSS spreads the IP packets over queues.
    pub rss: RssSpread,
}

/// Packets whose frame length lies in `min..=max` (`max` absent: no upper bound).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    /// Smallest frame length in the bucket.
    pub min: usize,
    /// Largest frame length in the bucket, if bounded.
    pub max: Option<usize>,
    /// Packets in the bucket.
    pub packets: u64,
}

/// One flow's volume.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowStat {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port (0 without one).
    pub src_port: u16,
    /// Destination port (0 without one).
    pub dst_port: u16,
    /// IP protocol number.
    pub proto: u8,
    /// Packets.
    pub packets: u64,
    /// Frame bytes.
    pub bytes: u64,
    /// Share of the IP packets.
    pub share: f64,
    /// Queue RSS steers it to.
    pub queue: QueueId,
}

impl FlowStat {
    /// The flow's 5-tuple.
    pub fn tuple(&self) -> FiveTuple {
        FiveTuple { src: self.src, dst: self.dst, src_port: self.src_port, dst_port: self.dst_port, proto: self.proto }
    }
}

/// RSS spread over queues (rxBisect §3.3, Figure 4).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RssSpread {
    /// Number of queues.
    pub queues: usize,
    /// Window length, nanoseconds.
    pub window_ns: u64,
    /// IP packets per queue over the whole trace.
    pub packets: Vec<u64>,
    /// Share of the IP packets per queue.
    pub share: Vec<f64>,
    /// Windows that hold at least one IP packet, in time order (the last one may be partial).
    pub windows: Vec<Window>,
    /// Mean over windows of the least-to-most loaded queue ratio (1 = perfectly even).
    pub mean_min_over_max: Option<f64>,
    /// Smallest per-window ratio.
    pub min_min_over_max: Option<f64>,
}

/// Per-queue rates in one window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    /// Start of the window relative to the first packet, nanoseconds.
    pub start_ns: u64,
    /// Packet rate of each queue in the window, Mpps.
    pub mpps: Vec<f64>,
    /// Rate of the least loaded queue over that of the most loaded one.
    pub min_over_max: f64,
}

/// Bucket bounds of the size histogram: runts, 64, 65-127, ..., 1024-1518, larger.
const BUCKETS: [(usize, Option<usize>); 8] = [
    (0, Some(63)),
    (64, Some(64)),
    (65, Some(127)),
    (128, Some(255)),
    (256, Some(511)),
    (512, Some(1023)),
    (1024, Some(1518)),
    (1519, None),
];

/// Summarise a stream of trace packets (e.g. a [`crate::TraceReader`]), holding only per-flow and
/// per-window counters in memory.
pub fn inspect(
    packets: impl IntoIterator<Item = Result<TracePacket, TraceError>>,
    opts: InspectOptions,
) -> Result<TraceSummary, InspectError> {
    if !(1..=RETA_SIZE).contains(&opts.queues) {
        return Err(InspectError::Options(format!("queues must be 1..={RETA_SIZE}, got {}", opts.queues)));
    }
    if opts.window_ns == 0 {
        return Err(InspectError::Options("the window must be longer than 0, e.g. 1ms".into()));
    }
    let toeplitz = Toeplitz::new(Default::default());
    let reta = IndirectionTable::round_robin(opts.queues).map_err(InspectError::Options)?;
    let (mut packets_n, mut bytes, mut bits, mut last_bits, mut non_ip) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut first, mut min_ts, mut max_ts) = (None, u64::MAX, 0u64);
    let mut sizes = [0u64; BUCKETS.len()];
    let mut flows: HashMap<FiveTuple, (u64, u64, QueueId)> = HashMap::new();
    let mut windows: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for p in packets {
        let p = p?;
        let len = p.frame_len();
        packets_n += 1;
        bytes += len as u64;
        last_bits = wire_bits(len);
        bits += last_bits;
        min_ts = min_ts.min(p.ts_ns);
        max_ts = max_ts.max(p.ts_ns);
        let t0 = *first.get_or_insert(p.ts_ns);
        sizes[BUCKETS.iter().rposition(|b| len >= b.0).unwrap_or(0)] += 1;
        let Some(tuple) = five_tuple(&p) else {
            non_ip += 1;
            continue;
        };
        let entry =
            flows.entry(tuple).or_insert_with(|| (0, 0, reta.queue(toeplitz.hash_tuple(&tuple, RssFields::IpPorts))));
        entry.0 += 1;
        entry.1 += len as u64;
        let w = windows.entry(p.ts_ns.saturating_sub(t0) / opts.window_ns).or_insert_with(|| vec![0; opts.queues]);
        w[usize::from(entry.2)] += 1;
    }
    let duration_ns = max_ts.saturating_sub(min_ts);
    let per_ns = |x: f64| if duration_ns > 0 { x / duration_ns as f64 } else { 0.0 };
    let ip_packets = packets_n - non_ip;
    let mut top: Vec<FlowStat> = flows
        .iter()
        .map(|(t, &(packets, bytes, queue))| FlowStat {
            src: t.src,
            dst: t.dst,
            src_port: t.src_port,
            dst_port: t.dst_port,
            proto: t.proto,
            packets,
            bytes,
            share: packets as f64 / ip_packets.max(1) as f64,
            queue,
        })
        .collect();
    top.sort_by(|a, b| b.packets.cmp(&a.packets).then_with(|| a.tuple().cmp(&b.tuple())));
    top.truncate(opts.top);
    Ok(TraceSummary {
        packets: packets_n,
        bytes,
        duration_ns,
        mean_mpps: per_ns(packets_n.saturating_sub(1) as f64) * 1e3,
        mean_gbps: per_ns((bits - last_bits) as f64),
        sizes: BUCKETS.iter().zip(sizes).map(|(&(min, max), packets)| SizeBucket { min, max, packets }).collect(),
        non_ip,
        flows: flows.len() as u64,
        top_flows: top,
        rss: spread(opts, &windows, ip_packets),
    })
}

/// The packet's flow, if it is IP. A frame cut short by the capture's snaplen is zero-padded back to
/// its original length first: its headers are intact, only the length fields would disagree.
fn five_tuple(p: &TracePacket) -> Option<FiveTuple> {
    let orig = (p.orig_len as usize).min(crate::source::MAX_RECORD);
    let view = if p.data.len() < orig {
        let mut padded = p.data.clone();
        padded.resize(orig, 0);
        PacketView::new_checked(&padded[..]).map(|v| *v.five_tuple())
    } else {
        PacketView::new_checked(&p.data[..]).map(|v| *v.five_tuple())
    };
    view.ok()
}

fn spread(opts: InspectOptions, windows: &BTreeMap<u64, Vec<u64>>, ip_packets: u64) -> RssSpread {
    let mut packets = vec![0u64; opts.queues];
    let windows: Vec<Window> = windows
        .iter()
        .map(|(&i, counts)| {
            for (total, c) in packets.iter_mut().zip(counts) {
                *total += c;
            }
            let (min, max) = (counts.iter().min().copied().unwrap_or(0), counts.iter().max().copied().unwrap_or(0));
            Window {
                start_ns: i * opts.window_ns,
                mpps: counts.iter().map(|&c| c as f64 * 1e3 / opts.window_ns as f64).collect(),
                min_over_max: min as f64 / max.max(1) as f64,
            }
        })
        .collect();
    let ratios = || windows.iter().map(|w| w.min_over_max);
    let mean = (!windows.is_empty()).then(|| ratios().sum::<f64>() / windows.len() as f64);
    let min = ratios().reduce(f64::min);
    RssSpread {
        queues: opts.queues,
        window_ns: opts.window_ns,
        share: packets.iter().map(|&p| p as f64 / ip_packets.max(1) as f64).collect(),
        packets,
        windows,
        mean_min_over_max: mean,
        min_min_over_max: min,
    }
}
