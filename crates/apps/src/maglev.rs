//! `maglev`: Google's Maglev load balancer as Ensō §7.3.1 runs it, the code behind both its Ensō and its
//! DPDK wrappers (enso_eval `maglev/src/maglev.hpp`): consistent hashing through a lookup table of prime
//! size built by the Maglev paper's permutation algorithm (Eisenbud et al., NSDI'16, §3.4, Pseudocode
//! 1), with a small cache of recent flows in front ([`FlowCache`]: 1024 entries per core, a full bucket
//! replacing its oldest, as the connection tracking of Maglev §3.3).
//!
//! Per packet, `Maglev::lookup` (the hot path, [`Maglev::process`] below): read the IPv4 header at its
//! fixed offset behind a 14-byte Ethernet header, with no parsing or checks; hash the source address, the
//! destination address XORed with the protocol, and the four bytes after them (the ports) with
//! `rte_jhash_32b` ([`jhash_3words`]); look that 32-bit hash up in the flow cache, and on a miss take the
//! lookup table's entry for it; write the backend's address over the destination. It updates no checksum:
//! Ensō's evaluation enables the NIC's checksum offload (§7.3), so rxlab fixes the checksums functionally
//! and charges the core nothing for them. Frames that are not IPv4 or too short, which Ensō's code would
//! hash as they are, rxlab drops and counts (`drop_malformed`), also uncharged.
//!
//! Work constants count the operations of the artifact's code at Skylake's four ALU ports: the packets
//! of a batch are independent, so the out-of-order core overlaps one packet's dependent chain with the
//! next packet's.
//!
//! Parameters: `backends=N` (default 32), `table=M` lookup-table size, a prime larger than the number of
//! backends (default 65537, the paper's), `flows=N` flow-cache entries per core (default 1024).

use crate::flow::hash_bytes;
use crate::flowcache::FlowCache;
use crate::lb::{Stats, read_common};
use crate::params::Reader;
use crate::{App, AppError};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, NoProbe, Packet, Probe};
use std::net::Ipv4Addr;
use wire::rewrite::{self, Side};
use wire::{FiveTuple, PacketView};

/// Offset of the IPv4 protocol byte in an Ethernet frame (`l3->next_proto_id`).
const PROTO_AT: usize = 14 + 9;
/// Offset of the IPv4 source address; the destination and the ports follow (`&l3->src_addr`, 3 words).
const SRC_AT: usize = 14 + 12;
/// Offset of the IPv4 destination address (`l3->dst_addr`).
const DST_AT: usize = SRC_AT + 4;
/// Bytes `lookup` reads: from the protocol byte to the end of the ports.
const READ_LEN: usize = SRC_AT + 12 - PROTO_AT;
/// Cycles of `lookup`'s hash: the protocol XOR and its undo, the three words added to jhash's initial
/// value and `__rte_jhash_final`'s 21 rotates, XORs and subtractions: 26 operations.
const JHASH_WORK: u32 = 7;
/// Cycles to reduce the hash modulo the table size, a compile-time constant in the artifact (`kSize`), so
/// a multiply-high, a shift, a multiply and a subtraction.
const MOD_WORK: u32 = 2;

/// The Maglev app on one core.
#[derive(Debug)]
pub struct Maglev {
    table: MaglevTable,
    cache: FlowCache,
    backends: Vec<Ipv4Addr>,
    stats: Stats,
}

impl App for Maglev {
    #[inline]
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            let Some(words) = key_words(&pkt) else {
                self.stats.malformed += 1;
                continue;
            };
            let addr = pkt.addr();
            p.touch(addr + PROTO_AT, READ_LEN, Access::Read);
            p.work(JHASH_WORK);
            let b = self.backend(p, jhash_3words(words));
            let backend = &self.backends[usize::from(b)];
            p.read(backend);
            if !rewrite_dst(&mut pkt, *backend) {
                self.stats.malformed += 1;
                continue;
            }
            p.touch(addr + DST_AT, 4, Access::Write);
            self.stats.forwarded += 1;
            tx.push(pkt);
        }
    }

    fn warm(&mut self, flows: &mut dyn Iterator<Item = FiveTuple>) {
        for t in flows {
            if let (std::net::IpAddr::V4(src), std::net::IpAddr::V4(dst)) = (t.src, t.dst) {
                let mut ports = [0; 4];
                ports[..2].copy_from_slice(&t.src_port.to_be_bytes());
                ports[2..].copy_from_slice(&t.dst_port.to_be_bytes());
                self.backend(&mut NoProbe::default(), jhash_3words(words(src.octets(), dst.octets(), t.proto, ports)));
            }
        }
        self.stats = Stats::default();
    }

    fn tables(&self) -> Vec<std::ops::Range<usize>> {
        let mut t = self.cache.tables();
        t.push(crate::span(self.table.entries.as_ptr(), self.table.entries.len()));
        t
    }

    fn metrics(&self) -> Metrics {
        self.stats.metrics(self.cache.len())
    }
}

impl Maglev {
    /// The backend of a flow hash: the cached one, or the lookup table's, then cached
    /// (`get_cached_hash_value`).
    #[inline]
    fn backend<P: Probe>(&mut self, p: &mut P, hash: u32) -> u16 {
        let table = &self.table;
        let (b, hit) = self.cache.get_or_insert(p, hash, |p| table.backend(p, hash));
        if hit {
            self.stats.hits += 1;
        } else {
            self.stats.new_flows += 1;
        }
        b
    }
}

/// The three words `lookup` hashes, as an x86 core loads them: the source address, the destination
/// address XORed with the protocol, and the four bytes after them; `None` for a frame too short or not
/// IPv4.
fn key_words(f: &[u8]) -> Option<[u32; 3]> {
    if f.len() < SRC_AT + 12 || f[12..14] != [0x08, 0x00] {
        return None;
    }
    let at = |o: usize| [f[o], f[o + 1], f[o + 2], f[o + 3]];
    Some(words(at(SRC_AT), at(DST_AT), f[PROTO_AT], at(DST_AT + 4)))
}

fn words(src: [u8; 4], dst: [u8; 4], proto: u8, ports: [u8; 4]) -> [u32; 3] {
    [u32::from_le_bytes(src), u32::from_le_bytes(dst) ^ u32::from(proto), u32::from_le_bytes(ports)]
}

/// DPDK's `rte_jhash_32b(k, 3, 0)`: Bob Jenkins' lookup3 over three words (`__rte_jhash_2hashes` with
/// both initial values 0, then `__rte_jhash_final`).
pub fn jhash_3words(k: [u32; 3]) -> u32 {
    let init = 0xdead_beef_u32.wrapping_add(12);
    let (mut a, mut b, mut c) = (init.wrapping_add(k[0]), init.wrapping_add(k[1]), init.wrapping_add(k[2]));
    // Each step of `__rte_jhash_final`: x ^= y; x -= rot(y, r).
    let mix = |x: u32, y: u32, r: u32| (x ^ y).wrapping_sub(y.rotate_left(r));
    c = mix(c, b, 14);
    a = mix(a, c, 11);
    b = mix(b, a, 25);
    c = mix(c, b, 16);
    a = mix(a, c, 4);
    b = mix(b, a, 14);
    mix(c, b, 24)
}

/// Write `backend` over the destination address with valid checksums (the NIC's offload in Ensō's
/// setup); `false` if the frame is not a complete IPv4 packet.
fn rewrite_dst(pkt: &mut [u8], backend: Ipv4Addr) -> bool {
    PacketView::new_checked(pkt).is_ok_and(|mut v| rewrite::set_ipv4_addr(&mut v, Side::Dst, backend).is_ok())
}

/// The Maglev lookup table: entry `i` is the backend of hashes congruent to `i`.
#[derive(Debug, Clone)]
pub struct MaglevTable {
    entries: Vec<u16>,
}

impl MaglevTable {
    /// Populate a table of size `m` (a prime) for backends named `names` (Maglev §3.4, Pseudocode 1): each
    /// backend walks its own permutation of the table, `(offset + j * skip) mod m`, and the backends take
    /// turns claiming their next still-empty entry until the table is full.
    pub fn build(names: &[String], m: usize) -> Result<MaglevTable, String> {
        if names.is_empty() || names.len() > usize::from(u16::MAX) || names.len() >= m || !is_prime(m as u64) {
            return Err(format!("the table size must be a prime larger than the {} backends, got {m}", names.len()));
        }
        let m64 = m as u64;
        // offset = h1(name) mod M, skip = h2(name) mod (M - 1) + 1 (Maglev §3.4).
        let perm: Vec<(u64, u64)> = names
            .iter()
            .map(|n| (hash_bytes(n.as_bytes(), 0x6d61676c) % m64, hash_bytes(n.as_bytes(), 0x65762131) % (m64 - 1) + 1))
            .collect();
        let mut next = vec![0u64; names.len()];
        let mut entries = vec![u16::MAX; m];
        let mut filled = 0;
        'fill: loop {
            for (i, &(offset, skip)) in perm.iter().enumerate() {
                let mut c = (offset + next[i] * skip) % m64;
                while entries[c as usize] != u16::MAX {
                    next[i] += 1;
                    c = (offset + next[i] * skip) % m64;
                }
                entries[c as usize] = i as u16;
                next[i] += 1;
                filled += 1;
                if filled == m {
                    break 'fill;
                }
            }
        }
        Ok(MaglevTable { entries })
    }

    /// The backend for a flow hash.
    #[inline]
    pub fn backend<P: Probe>(&self, p: &mut P, hash: u32) -> u16 {
        p.work(MOD_WORK);
        let e = &self.entries[hash as usize % self.entries.len()];
        p.read(e);
        *e
    }
}

fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

/// Build the `maglev` app from parameters (see the module documentation).
pub fn new(mut r: Reader<'_>) -> Result<Maglev, AppError> {
    // enso_eval's Maglev caches `hash_params.entries = 1024` flows per core.
    let (backends, flows) = read_common(&mut r, 1024)?;
    let m = r.count("table", 65537, 3..=(1 << 24))? as usize;
    let names: Vec<String> = backends.iter().map(|b| b.addr.to_string()).collect();
    let table = MaglevTable::build(&names, m).map_err(|e| r.error("table", e))?;
    r.finish()?;
    Ok(Maglev {
        table,
        cache: FlowCache::new(flows),
        backends: backends.iter().map(|b| b.addr).collect(),
        stats: Stats::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::App;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("backend-{i}")).collect()
    }

    fn counts(t: &MaglevTable, n: usize) -> Vec<usize> {
        let mut c = vec![0; n];
        t.entries.iter().for_each(|&b| c[usize::from(b)] += 1);
        c
    }

    #[test]
    fn every_backend_gets_an_equal_share() {
        // Backends take turns, so shares differ by at most one entry (Maglev §3.4: "balance").
        for n in [1, 3, 32, 100] {
            let t = MaglevTable::build(&names(n), 65537).unwrap();
            let c = counts(&t, n);
            assert!(c.iter().max().unwrap() - c.iter().min().unwrap() <= 1, "{n} backends: {c:?}");
        }
    }

    #[test]
    fn removing_a_backend_moves_few_other_entries() {
        // Maglev §3.4, "minimal disruption": entries of remaining backends mostly keep their backend.
        let all = names(32);
        let before = MaglevTable::build(&all, 65537).unwrap();
        let removed = 7;
        let rest: Vec<String> = all.iter().enumerate().filter(|(i, _)| *i != removed).map(|(_, n)| n.clone()).collect();
        let after = MaglevTable::build(&rest, 65537).unwrap();
        let mut moved = 0;
        for (b, a) in before.entries.iter().zip(&after.entries) {
            let b = usize::from(*b);
            if b != removed && rest[usize::from(*a)] != all[b] {
                moved += 1;
            }
        }
        // The removed backend's 1/32 of the table must move; of the rest, only a small fraction does.
        let frac = moved as f64 / 65537.0;
        assert!(frac < 0.03, "{moved} entries of remaining backends moved ({:.2}%)", 100.0 * frac);
        let lost = before.entries.iter().filter(|&&b| usize::from(b) == removed).count();
        assert!(lost >= 65537 / 32);
    }

    #[test]
    fn flows_are_stable_and_consistent_across_cores() {
        let params = AppParams::new().with("table", 251).with("backends", 8);
        let mut a = new(params.reader("maglev")).unwrap();
        let mut b = new(params.reader("maglev")).unwrap();
        let core = TestCore::new();
        let frames: Vec<Vec<u8>> = (0..50).map(|i| frame("10.0.0.1", 1000 + i, "192.0.2.80", 80, 17, 64)).collect();
        let first = core.run(&mut a, &frames);
        assert_eq!(first, core.run(&mut a, &frames), "cached flows keep their backend");
        assert_eq!(first, core.run(&mut b, &frames), "another core picks the same backends without shared state");
        assert_eq!(a.metrics()["flow_hits"], 50.0);
        assert!(new(AppParams::new().with("table", 65536).reader("maglev")).unwrap_err().to_string().contains("prime"));
    }

    #[test]
    fn the_destination_becomes_a_backend_with_valid_checksums_and_other_frames_are_dropped() {
        let mut m = new(AppParams::new().with("backends", 4).reader("maglev")).unwrap();
        let core = TestCore::new();
        let frames: Vec<Vec<u8>> = (0..20).map(|i| frame("10.0.0.1", 1000 + i, "192.0.2.80", 80, 6, 80)).collect();
        let backends: Vec<Ipv4Addr> = m.backends.clone();
        for f in core.run(&mut m, &frames) {
            let v = PacketView::new_checked(&f[..]).unwrap();
            assert!(rewrite::checksums_valid(&v));
            assert!(matches!(v.five_tuple().dst, std::net::IpAddr::V4(d) if backends.contains(&d)));
        }
        let mut arp = frames[0].clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(core.run(&mut m, &[arp, vec![0; 30]]).is_empty());
        assert_eq!((m.metrics()["drop_malformed"], m.metrics()["forwarded"]), (2.0, 20.0));
    }

    #[test]
    fn every_hashed_word_moves_the_hash_and_warming_caches_what_packets_then_hit() {
        let base = jhash_3words([1, 2, 3]);
        for (w, bit) in (0..3).flat_map(|w| (0..32).map(move |b| (w, b))) {
            let mut k = [1, 2, 3];
            k[w] ^= 1 << bit;
            assert_ne!(jhash_3words(k), base, "word {w} bit {bit}");
        }
        let mut m = new(AppParams::new().reader("maglev")).unwrap();
        let frames: Vec<Vec<u8>> = (0..16).map(|i| frame("10.0.0.1", 1000 + i, "192.0.2.80", 80, 17, 64)).collect();
        let tuples: Vec<FiveTuple> =
            frames.iter().map(|f| *PacketView::new_checked(&f[..]).unwrap().five_tuple()).collect();
        m.warm(&mut tuples.into_iter());
        assert_eq!(m.metrics()["flows"], 16.0);
        TestCore::new().run(&mut m, &frames);
        assert_eq!((m.metrics()["flow_hits"], m.metrics()["new_flows"]), (16.0, 0.0));
    }
}
