//! The key-value client: request frames for the traffic layer, with uniform or Zipf-distributed keys and a
//! GET/PUT mix (MICA's workloads: Zipf 0.99 skew; "tiny" 8/8 B and 128/1024 B items; rxBisect §6.1 and
//! shRing §5.2 use 95% PUT, Ensō §7.3.3 50% GET).
//!
//! Each request is sent to its key's partition as MICA's client does (MICA §4.1): UDP destination port
//! 9000 + partition and source port 5000 + partition, so that one partition is one flow and steering by
//! flow keeps a key on one core.

use super::proto::{HEADER_LEN, Op, Request, key_hash, partition};
use crate::hash::mix;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr};
use wire::{FiveTuple, FrameSpec, build_frame};

/// Client address of generated requests.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);
/// Server address of generated requests.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 2, 0, 1);
/// UDP port of partition 0 at the server; partition `i` is this plus `i`.
pub const SERVER_PORT: u16 = 9000;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientConfig {
    /// Number of distinct keys.
    pub keys: u64,
    /// Key length in bytes (8 to 255).
    pub key_len: usize,
    /// Value length of PUTs in bytes (up to what fits in a 1518 B frame).
    pub value_len: usize,
    /// Fraction of GETs (the rest are PUTs).
    pub get_ratio: f64,
    /// Zipf skew of key popularity (MICA's 0.99), or uniform if `None`.
    pub zipf: Option<f64>,
    /// Server partitions (one per core) the client steers requests to (MICA §4.1); `rxlab` sets it to
    /// the number of cores.
    pub partitions: usize,
    /// A hot area instead of Zipf or uniform popularity (nicmem §6.6, Figure 15: "varying the load
    /// directed at hot items").
    pub hot: Option<HotArea>,
}

/// The first `keys` keys take `share` of the requests, uniformly; the other keys take the rest,
/// uniformly.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotArea {
    /// Keys in the hot area (keys `0..keys`).
    pub keys: u64,
    /// Share of requests to it, 0..=1.
    pub share: f64,
}

impl Default for ClientConfig {
    /// One million "tiny" items (8 B keys and values, Ensō §7.3.3), 50% GET, uniform.
    fn default() -> Self {
        ClientConfig { keys: 1_000_000, key_len: 8, value_len: 8, get_ratio: 0.5, zipf: None, partitions: 1, hot: None }
    }
}

impl ClientConfig {
    /// Check the parameters: keys of 8 to 255 B, values that fit a UDP/IPv4 frame, a GET ratio within 0
    /// and 1 and a valid Zipf exponent.
    pub fn check(&self) -> Result<(), String> {
        self.check_field().map_err(|(field, e)| format!("kvs {field}: {e}"))
    }

    /// [`ClientConfig::check`], naming the offending field (`keys`, `partitions`, `key_len`, `value_len`,
    /// `get_ratio`, `zipf`, `hot_keys` or `hot_share`) apart from the problem.
    pub fn check_field(&self) -> Result<(), (&'static str, String)> {
        if self.keys == 0 {
            return Err(("keys", "there must be at least one key".into()));
        }
        if !(1..=usize::from(u16::MAX)).contains(&self.partitions) {
            return Err(("partitions", format!("the server needs 1 to 65535 partitions, got {}", self.partitions)));
        }
        if !(8..=255).contains(&self.key_len) {
            return Err(("key_len", format!("keys must be 8 to 255 B, got {}", self.key_len)));
        }
        let max_value = wire::frame::MAX_FRAME - wire::frame::FCS_LEN - 42 - HEADER_LEN - self.key_len;
        if self.value_len > max_value {
            return Err(("value_len", format!("values must be at most {max_value} B, got {}", self.value_len)));
        }
        if !(0.0..=1.0).contains(&self.get_ratio) {
            return Err(("get_ratio", format!("the GET ratio must be within 0 and 1, got {}", self.get_ratio)));
        }
        if let Some(h) = self.hot {
            if self.zipf.is_some() {
                return Err(("hot_keys", "a hot area replaces Zipf popularity; give one or the other".into()));
            }
            if !(1..=self.keys).contains(&h.keys) {
                return Err(("hot_keys", format!("the hot area must hold 1 to {} keys, got {}", self.keys, h.keys)));
            }
            if !(0.0..=1.0).contains(&h.share) || (h.keys == self.keys && h.share < 1.0) {
                return Err((
                    "hot_share",
                    format!("the hot area's share must be within 0 and 1 (1 if it holds every key), got {}", h.share),
                ));
            }
        }
        self.zipf_dist().map(|_| ()).map_err(|e| ("zipf", e))
    }

    fn zipf_dist(&self) -> Result<Option<Zipf<f64>>, String> {
        self.zipf.map(|s| Zipf::new(self.keys as f64, s).map_err(|e| format!("{s}: {e}"))).transpose()
    }
}

/// The request generator.
#[derive(Debug, Clone)]
pub struct Client {
    cfg: ClientConfig,
    rng: Xoshiro256PlusPlus,
    zipf: Option<Zipf<f64>>,
    seq: u64,
}

impl Client {
    /// A generator for `cfg`, seeded with `seed`.
    pub fn new(cfg: ClientConfig, seed: u64) -> Result<Client, String> {
        cfg.check()?;
        let zipf = cfg.zipf_dist()?;
        Ok(Client { cfg, rng: Xoshiro256PlusPlus::seed_from_u64(seed), zipf, seq: 0 })
    }

    /// The bytes of key number `k`: its index, then filler derived from it.
    pub fn key(&self, k: u64) -> Vec<u8> {
        let mut key = vec![0u8; self.cfg.key_len];
        key[..8].copy_from_slice(&k.to_le_bytes());
        fill(&mut key[8..], mix(k, 0x6b6579));
        key
    }

    /// The value a PUT of key `k` with request id `id` writes.
    pub fn value(&self, k: u64, id: u64) -> Vec<u8> {
        let mut v = vec![0u8; self.cfg.value_len];
        fill(&mut v, mix(k, id));
        v
    }

    /// The encoded request for `op` on key `k` with client tag `id`, and its key's partition.
    pub fn request(&self, op: Op, k: u64, id: u64) -> (Vec<u8>, usize) {
        let key = self.key(k);
        let value = if op == Op::Put { self.value(k, id) } else { Vec::new() };
        // The config was validated, so the request always encodes.
        let payload = Request { op, id, key: &key, value: &value }.encode().unwrap_or_default();
        (payload, partition(key_hash(&key), self.cfg.partitions))
    }

    /// The request frame for `op` on key `k` with client tag `id`.
    pub fn frame(&self, op: Op, k: u64, id: u64) -> Vec<u8> {
        let (payload, part) = self.request(op, k, id);
        let part = part as u16;
        let tuple = FiveTuple {
            src: IpAddr::V4(CLIENT_ADDR),
            dst: IpAddr::V4(SERVER_ADDR),
            src_port: 5000 + part,
            dst_port: SERVER_PORT + part,
            proto: 17,
        };
        let frame_len = (42 + payload.len() + wire::frame::FCS_LEN).max(wire::frame::MIN_FRAME);
        build_frame(&FrameSpec { tuple, frame_len }, &payload).unwrap_or_default()
    }

    /// The next request frame of the workload.
    pub fn next_frame(&mut self) -> Vec<u8> {
        let (op, k, id) = self.next_op();
        self.frame(op, k, id)
    }

    /// Draw the next request of the workload: operation, key number and client tag.
    pub fn next_op(&mut self) -> (Op, u64, u64) {
        let k = match &self.zipf {
            // Zipf samples ranks 1..=keys; rank 1 is the most popular key.
            Some(z) => (z.sample(&mut self.rng) as u64).clamp(1, self.cfg.keys) - 1,
            None => match self.cfg.hot {
                Some(h) if self.rng.random_bool(h.share) => self.rng.random_range(0..h.keys),
                Some(h) => self.rng.random_range(h.keys..self.cfg.keys),
                None => self.rng.random_range(0..self.cfg.keys),
            },
        };
        let op = if self.rng.random_bool(self.cfg.get_ratio) { Op::Get } else { Op::Put };
        self.seq += 1;
        (op, k, self.seq)
    }
}

/// Fill `out` with bytes of a simple generator seeded by `seed`.
fn fill(out: &mut [u8], seed: u64) {
    let mut x = seed;
    for chunk in out.chunks_mut(8) {
        x = mix(x, 0x9e37_79b9_7f4a_7c15);
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use wire::PacketView;

    #[test]
    fn mix_skew_and_partition_steering() {
        let cfg = ClientConfig { keys: 1000, get_ratio: 0.95, zipf: Some(0.99), ..ClientConfig::default() };
        let mut c = Client::new(ClientConfig { partitions: 4, ..cfg }, 3).unwrap();
        let (mut gets, mut per_key) = (0, HashMap::new());
        for _ in 0..10_000 {
            let f = c.next_frame();
            let v = PacketView::new_checked(&f[..]).unwrap();
            let r = Request::parse(v.payload()).unwrap();
            gets += usize::from(r.op == Op::Get);
            *per_key.entry(r.key.to_vec()).or_insert(0) += 1;
            let part = partition(key_hash(r.key), 4) as u16;
            assert_eq!(v.five_tuple().dst_port, SERVER_PORT + part);
        }
        assert!((9300..9700).contains(&gets), "{gets}");
        // Zipf(0.99) over 1000 keys: the most popular key takes about 13% of requests.
        let top = *per_key.values().max().unwrap();
        assert!((900..1800).contains(&top), "{top}");
        assert_eq!(c.frame(Op::Get, 0, 0).len(), 42 + 12 + 8);
        assert!(Client::new(ClientConfig { key_len: 4, ..ClientConfig::default() }, 0).is_err());
        // A hot area of 10 keys taking 90% of requests.
        let hot = Some(HotArea { keys: 10, share: 0.9 });
        let mut c = Client::new(ClientConfig { keys: 1000, hot, ..ClientConfig::default() }, 4).unwrap();
        let in_hot = (0..10_000).filter(|_| c.next_op().1 < 10).count();
        assert!((8800..9200).contains(&in_hot), "{in_hot}");
        let bad = |hot| ClientConfig { keys: 1000, hot: Some(hot), ..ClientConfig::default() }.check_field();
        assert_eq!(bad(HotArea { keys: 1001, share: 0.5 }).unwrap_err().0, "hot_keys");
        assert_eq!(bad(HotArea { keys: 10, share: 1.5 }).unwrap_err().0, "hot_share");
        assert_eq!(bad(HotArea { keys: 1000, share: 0.5 }).unwrap_err().0, "hot_share");
        assert!(Client::new(ClientConfig { key_len: 4000, ..ClientConfig::default() }, 0).is_err());
    }
}
