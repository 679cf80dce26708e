//! Flows: the 5-tuples a generator sends, their RSS hashes and queues, and how popular each one is.

use rand::Rng;
use rand_distr::Distribution;
use rand_distr::weighted::WeightedAliasIndex;
use rustc_hash::FxHashSet;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use wire::{FiveTuple, IndirectionTable, L4Proto, QueueId, RssFields, Toeplitz};

/// Destination of every generated flow (the device under test), IPv4.
pub const DST_V4: Ipv4Addr = Ipv4Addr::new(10, 255, 0, 1);
/// Destination of every generated flow (the device under test), IPv6.
pub const DST_V6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0xffff, 0, 0, 0, 0, 1);
/// Destination port of every generated flow.
pub const DST_PORT: u16 = 5001;

/// IP version of generated traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IpVersion {
    /// IPv4 (the papers' traffic).
    #[default]
    V4,
    /// IPv6.
    V6,
}

impl std::fmt::Display for IpVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IpVersion::V4 => "IPv4",
            IpVersion::V6 => "IPv6",
        })
    }
}

/// How often, and in which order, each flow is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Popularity {
    /// Every flow equally often, each packet's flow drawn at random ("select packet 5-tuples at random",
    /// shRing §5.2).
    #[default]
    Uniform,
    /// Flow of rank k (from 1) with probability proportional to k^-s (shRing §5.2 uses s = 0.99).
    Zipf(f64),
    /// Every flow equally often, in turn: flow 0, 1, ..., n - 1, then again from 0. This is what T-Rex's
    /// field engine sends with `op = "inc"` on the addresses, as the nicmem artifact's profile does
    /// (`fig9/trex/imix_lat.py`: source and destination stepped with every packet; "a different flow per
    /// packet", nicmem §6.1). T-Rex splits such a variable over its sender cores, core k of c sending k,
    /// k + c, k + 2c, ...; their packets merge on the wire, which this order takes as exact turns.
    Stepped,
}

/// One generated flow as a receiver sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowInfo {
    /// Addresses, ports and protocol.
    pub tuple: FiveTuple,
    /// Toeplitz hash of the tuple (Microsoft key, addresses and ports).
    pub hash: u32,
    /// Queue the round-robin indirection table of [`FlowSet::queues`] queues steers it to.
    pub queue: QueueId,
}

/// The flows of a generator, indexed by the `flow` field of its packets. IPv4 flows are held in 20
/// bytes each rather than a [`FlowInfo`]'s 48 (a million flows are a sizeable part of a simulated
/// run's memory).
#[derive(Debug, Clone)]
pub struct FlowSet {
    flows: Stored,
    queues: usize,
}

/// How a [`FlowSet`] holds its flows.
#[derive(Debug, Clone)]
enum Stored {
    /// Every flow IPv4.
    V4(Vec<PackedV4>),
    /// Any flows.
    Any(Vec<FlowInfo>),
}

/// An IPv4 [`FlowInfo`], packed.
#[derive(Debug, Clone, Copy)]
struct PackedV4 {
    src: [u8; 4],
    dst: [u8; 4],
    hash: u32,
    src_port: u16,
    dst_port: u16,
    queue: QueueId,
    proto: u8,
}

impl PackedV4 {
    fn pack(f: &FlowInfo) -> Option<PackedV4> {
        let t = &f.tuple;
        match (t.src, t.dst) {
            (IpAddr::V4(src), IpAddr::V4(dst)) => Some(PackedV4 {
                src: src.octets(),
                dst: dst.octets(),
                hash: f.hash,
                src_port: t.src_port,
                dst_port: t.dst_port,
                queue: f.queue,
                proto: t.proto,
            }),
            _ => None,
        }
    }

    fn unpack(&self) -> FlowInfo {
        FlowInfo {
            tuple: FiveTuple {
                src: IpAddr::from(self.src),
                dst: IpAddr::from(self.dst),
                src_port: self.src_port,
                dst_port: self.dst_port,
                proto: self.proto,
            },
            hash: self.hash,
            queue: self.queue,
        }
    }
}

const _: () = assert!(std::mem::size_of::<PackedV4>() == 20);

impl FlowSet {
    /// Flows in index order and the number of queues their `queue` refers to.
    pub fn new(flows: Vec<FlowInfo>, queues: usize) -> FlowSet {
        let packed: Option<Vec<PackedV4>> = flows.iter().map(PackedV4::pack).collect();
        FlowSet { flows: packed.map_or(Stored::Any(flows), Stored::V4), queues }
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        match &self.flows {
            Stored::V4(f) => f.len(),
            Stored::Any(f) => f.len(),
        }
    }

    /// Whether there are no flows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Flow `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<FlowInfo> {
        match &self.flows {
            Stored::V4(f) => f.get(i).map(PackedV4::unpack),
            Stored::Any(f) => f.get(i).copied(),
        }
    }

    /// All flows, in index order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = FlowInfo> + '_ {
        (0..self.len()).map(|i| self.get(i).expect("an index below the length"))
    }

    /// Queues of the indirection table the `queue` fields were computed with (1 without steering).
    pub fn queues(&self) -> usize {
        self.queues
    }

    /// Number of flows per queue.
    pub fn per_queue(&self) -> Vec<usize> {
        let mut n = vec![0; self.queues];
        for f in self.iter() {
            n[usize::from(f.queue)] += 1;
        }
        n
    }
}

/// Picks a flow index within a group according to a [`Popularity`].
#[derive(Debug, Clone)]
pub enum Picker {
    /// Uniform over `0..n`.
    Uniform(usize),
    /// Weighted (Zipf), sampled by the alias method in constant time.
    Weighted(WeightedAliasIndex<f64>),
    /// `next`, then the one after it, cycling over `0..n`.
    Stepped {
        /// Items.
        n: usize,
        /// The next index to give.
        next: usize,
    },
}

impl Picker {
    /// A picker over `n >= 1` items.
    pub fn new(popularity: Popularity, n: usize) -> Picker {
        match popularity {
            Popularity::Zipf(s) if n > 1 => {
                let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
                WeightedAliasIndex::new(w).map_or(Picker::Uniform(n), Picker::Weighted)
            }
            Popularity::Stepped => Picker::Stepped { n, next: 0 },
            _ => Picker::Uniform(n),
        }
    }

    /// The next index.
    #[inline]
    pub fn pick<R: Rng>(&mut self, rng: &mut R) -> usize {
        match self {
            Picker::Uniform(n) => rng.random_range(0..*n),
            Picker::Weighted(a) => a.sample(rng),
            Picker::Stepped { n, next } => {
                let i = *next;
                *next = if i + 1 == *n { 0 } else { i + 1 };
                i
            }
        }
    }
}

/// An endless, seeded stream of distinct client flows towards [`DST_V4`]/[`DST_V6`]:[`DST_PORT`], each
/// with its RSS hash and queue.
pub struct Candidates<'a, R> {
    rng: &'a mut R,
    seen: FxHashSet<(IpAddr, u16)>,
    ip: IpVersion,
    proto: L4Proto,
    toeplitz: Toeplitz,
    reta: IndirectionTable,
}

impl<'a, R: Rng> Candidates<'a, R> {
    /// Candidates for `queues` queues under the default RSS setup (Microsoft key, addresses and ports,
    /// a round-robin indirection table of `entries` entries).
    pub fn new(rng: &'a mut R, ip: IpVersion, proto: L4Proto, queues: usize, entries: usize) -> Result<Self, String> {
        let reta = IndirectionTable::round_robin_sized(queues, entries)?;
        Ok(Candidates { rng, seen: FxHashSet::default(), ip, proto, toeplitz: Toeplitz::new(Default::default()), reta })
    }

    /// The next new flow: a random client address (10.0.0.0/8 or 2001:db8::/64) and port 1024..=65535.
    pub fn draw(&mut self) -> FlowInfo {
        loop {
            let src = match self.ip {
                IpVersion::V4 => IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | (self.rng.random::<u32>() & 0x00ff_ffff))),
                IpVersion::V6 => {
                    IpAddr::V6(Ipv6Addr::from((0x2001_0db8u128 << 96) | u128::from(self.rng.random::<u64>())))
                }
            };
            let src_port = self.rng.random_range(1024..=u16::MAX);
            if self.seen.insert((src, src_port)) {
                let dst = match self.ip {
                    IpVersion::V4 => IpAddr::V4(DST_V4),
                    IpVersion::V6 => IpAddr::V6(DST_V6),
                };
                let tuple = FiveTuple { src, dst, src_port, dst_port: DST_PORT, proto: self.proto.number() };
                let hash = self.toeplitz.hash_tuple(&tuple, RssFields::IpPorts);
                return FlowInfo { tuple, hash, queue: self.reta.queue(hash) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn zipf_skews_towards_low_ranks() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut p = Picker::new(Popularity::Zipf(1.0), 100);
        let n = 200_000;
        let mut c = vec![0usize; 100];
        for _ in 0..n {
            c[p.pick(&mut rng)] += 1;
        }
        // P(rank 1) = 1 / H(100) = 0.1928; rank 2 half of it.
        let h: f64 = (1..=100).map(|k| 1.0 / k as f64).sum();
        assert!((c[0] as f64 / n as f64 - 1.0 / h).abs() < 0.005, "{}", c[0]);
        assert!((c[0] as f64 / c[1] as f64 - 2.0).abs() < 0.1);
    }

    #[test]
    fn stepped_gives_every_index_in_turn_and_draws_nothing() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let untouched = rng.clone();
        let mut p = Picker::new(Popularity::Stepped, 3);
        let got: Vec<usize> = (0..7).map(|_| p.pick(&mut rng)).collect();
        assert_eq!(got, [0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(rng, untouched, "a stepped order takes nothing from the random stream");
    }

    #[test]
    fn candidates_are_distinct_and_hashed() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut c = Candidates::new(&mut rng, IpVersion::V6, L4Proto::Tcp, 4, wire::reta::RETA_SIZE).unwrap();
        let flows: Vec<_> = (0..1000).map(|_| c.draw()).collect();
        let set: std::collections::HashSet<_> = flows.iter().map(|f| f.tuple).collect();
        assert_eq!(set.len(), 1000);
        let t = Toeplitz::new(Default::default());
        for f in &flows {
            assert_eq!(f.hash, t.hash_tuple(&f.tuple, RssFields::IpPorts));
            assert_eq!(usize::from(f.queue), f.hash as usize % 128 % 4);
        }
    }
}
