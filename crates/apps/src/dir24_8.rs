//! DIR-24-8 longest-prefix match for IPv4 (Gupta, Lin and McKeown, "Routing lookups in hardware at memory
//! access speeds", 1998), the scheme of DPDK's `rte_lpm` that DPDK l3fwd (and COREC §4's l3fwd) uses:
//! a 2^24-entry table indexed by the top 24 address bits, whose entries either hold a next hop or point to
//! a 256-entry group indexed by the last byte. A lookup is one or two memory reads.

use ifaces::Probe;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Entry flag: the low 15 bits index a group of the second-level table.
const EXT: u16 = 0x8000;
/// Largest next-hop index (entries store hop + 1; 0 means no route).
pub const MAX_HOP: u16 = 0x7FFE;
/// Entries per second-level group.
const GROUP: usize = 256;

/// A route: prefix, prefix length and next-hop index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Network address (bits beyond `len` are ignored).
    pub prefix: Ipv4Addr,
    /// Prefix length, 0 to 32.
    pub len: u8,
    /// Next-hop index, at most [`MAX_HOP`].
    pub hop: u16,
}

impl Route {
    fn masked(&self) -> u32 {
        if self.len == 0 { 0 } else { u32::from(self.prefix) & (u32::MAX << (32 - u32::from(self.len))) }
    }

    /// Whether `addr` falls within the route's prefix.
    pub fn covers(&self, addr: u32) -> bool {
        self.len == 0 || (addr ^ self.masked()) >> (32 - u32::from(self.len)) == 0
    }
}

/// The two-level table.
#[derive(Debug, Clone)]
pub struct Dir24_8 {
    tbl24: Vec<u16>,
    tbl8: Vec<u16>,
}

impl Dir24_8 {
    /// Build the table from `routes`; of two routes with the same prefix and length the later wins.
    /// Fails if a route is invalid or more than 32767 /25-/32 groups would be needed.
    pub fn build(routes: &[Route]) -> Result<Dir24_8, String> {
        let mut unique = BTreeMap::new();
        for r in routes {
            if r.len > 32 || r.hop > MAX_HOP {
                return Err(format!(
                    "route {}/{} via {}: length must be <= 32, hop <= {MAX_HOP}",
                    r.prefix, r.len, r.hop
                ));
            }
            unique.insert((r.len, r.masked()), r.hop);
        }
        // A zeroed vector is mapped lazily, so the 32 MiB first level costs only the pages routes touch.
        let mut t = Dir24_8 { tbl24: vec![0; 1 << 24], tbl8: Vec::new() };
        // Shorter prefixes first, so each longer one overwrites the part of them it covers.
        for (&(len, prefix), &hop) in &unique {
            let value = hop + 1;
            if len <= 24 {
                let start = (prefix >> 8) as usize;
                t.tbl24[start..start + (1 << (24 - len))].fill(value);
                continue;
            }
            let i = (prefix >> 8) as usize;
            if t.tbl24[i] & EXT == 0 {
                let group = t.tbl8.len() / GROUP;
                if group >= EXT as usize {
                    return Err(format!("more than {} routes longer than /24 in distinct /24s", EXT));
                }
                t.tbl8.resize(t.tbl8.len() + GROUP, t.tbl24[i]);
                t.tbl24[i] = EXT | group as u16;
            }
            let start = usize::from(t.tbl24[i] & !EXT) * GROUP + (prefix & 0xFF) as usize;
            t.tbl8[start..start + (1 << (32 - len))].fill(value);
        }
        Ok(t)
    }

    /// The memory of both levels ([`crate::App::tables`]).
    pub fn tables(&self) -> Vec<std::ops::Range<usize>> {
        vec![crate::span(self.tbl24.as_ptr(), self.tbl24.len()), crate::span(self.tbl8.as_ptr(), self.tbl8.len())]
    }

    /// The next hop for `addr`, reporting the one or two table reads.
    #[inline]
    pub fn lookup<P: Probe>(&self, p: &mut P, addr: u32) -> Option<u16> {
        let e = &self.tbl24[(addr >> 8) as usize];
        p.read(e);
        let mut v = *e;
        if v & EXT != 0 {
            let e8 = &self.tbl8[usize::from(v & !EXT) * GROUP + (addr & 0xFF) as usize];
            p.read(e8);
            v = *e8;
        }
        v.checked_sub(1)
    }
}

/// Parse a routing table: one `a.b.c.d/len hop` per line; `#` starts a comment.
pub fn parse_routes(text: &str) -> Result<Vec<Route>, String> {
    let mut routes = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = || format!("line {}: '{line}' is not 'a.b.c.d/len hop' (e.g. 10.0.0.0/8 3)", n + 1);
        let mut words = line.split_whitespace();
        let (net, hop) = (words.next().ok_or_else(bad)?, words.next().ok_or_else(bad)?);
        let (addr, len) = net.split_once('/').ok_or_else(bad)?;
        let route = Route {
            prefix: addr.parse().map_err(|_| bad())?,
            len: len.parse().ok().filter(|l| *l <= 32).ok_or_else(bad)?,
            hop: hop.parse().ok().filter(|h| *h <= MAX_HOP).ok_or_else(bad)?,
        };
        if words.next().is_some() {
            return Err(bad());
        }
        routes.push(route);
    }
    Ok(routes)
}

/// A generated table: a default route to hop 0 and `n` random prefixes over `hops` next hops, with the
/// length mix of Internet tables (most /24, then /16-/23, some longer than /24).
pub fn generate_routes(n: usize, hops: u16, seed: u64) -> Vec<Route> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut routes = vec![Route { prefix: Ipv4Addr::UNSPECIFIED, len: 0, hop: 0 }];
    for _ in 0..n {
        let len = match rng.random_range(0..10) {
            0..=5 => 24,
            6..=7 => rng.random_range(16..24),
            _ => rng.random_range(25..=32),
        };
        routes.push(Route { prefix: Ipv4Addr::from(rng.random::<u32>()), len, hop: rng.random_range(0..hops.max(1)) });
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::*;
    use ifaces::NoProbe;
    use proptest::prelude::*;

    /// The oracle: the longest covering prefix, the later of equal ones.
    fn naive(routes: &[Route], addr: u32) -> Option<u16> {
        let mut best: Option<(u8, u16)> = None;
        for r in routes {
            if r.covers(addr) && best.is_none_or(|(l, _)| r.len >= l) {
                best = Some((r.len, r.hop));
            }
        }
        best.map(|(_, h)| h)
    }

    #[test]
    fn nested_prefixes() {
        let text = "10.0.0.0/8 1\n10.1.0.0/16 2 # comment\n10.1.2.0/24 3\n10.1.2.128/25 4\n10.1.2.129/32 5\n";
        let t = Dir24_8::build(&parse_routes(text).unwrap()).unwrap();
        let mut p = NoProbe::new();
        let at = |s: &str| u32::from(s.parse::<Ipv4Addr>().unwrap());
        assert_eq!(t.lookup(&mut p, at("10.9.9.9")), Some(1));
        assert_eq!(t.lookup(&mut p, at("10.1.9.9")), Some(2));
        assert_eq!(t.lookup(&mut p, at("10.1.2.1")), Some(3));
        assert_eq!(t.lookup(&mut p, at("10.1.2.130")), Some(4));
        assert_eq!(t.lookup(&mut p, at("10.1.2.129")), Some(5));
        assert_eq!(t.lookup(&mut p, at("11.0.0.1")), None);
        assert!(parse_routes("10.0.0.0/33 1").unwrap_err().starts_with("line 1:"));
        assert!(parse_routes("10.0.0.0/8").is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn matches_naive_lpm(raw in proptest::collection::vec((any::<u32>(), 8u8..=32, 0u16..100), 0..40),
                             probes in proptest::collection::vec(any::<u32>(), 64)) {
            let routes: Vec<Route> = raw.iter().map(|&(a, len, hop)| Route { prefix: a.into(), len, hop }).collect();
            let t = Dir24_8::build(&routes).unwrap();
            let mut p = NoProbe::new();
            // Probe random addresses and addresses inside (and at the edges of) each route.
            let inside = routes.iter().flat_map(|r| [r.masked(), r.masked() | u32::MAX.checked_shr(u32::from(r.len)).unwrap_or(0)]);
            for a in probes.into_iter().chain(inside) {
                prop_assert_eq!(t.lookup(&mut p, a), naive(&routes, a), "{}", Ipv4Addr::from(a));
            }
        }
    }
}
