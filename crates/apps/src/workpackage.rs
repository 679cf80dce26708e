//! `workpackage`: the synthetic NF of FastClick's WorkPackage element as the papers use it: route the packet
//! (the l3fwd lookup and rewrite), then make N random reads from a W MiB buffer, and leave the payload
//! untouched, read it, or overwrite it (shRing §5.2; nicmem §6.2 runs 2-10 reads over 1-32 MiB). A
//! "target core" can use a different N, to make one core slower than the rest (rxBisect §6.2, "processing
//! variability").
//!
//! Parameters: `reads=N` (default 4), `buffer=SIZE` (default 8MiB), `payload=none|read|write`,
//! `target-core=C` and `target-reads=N` (core C makes N reads instead), plus l3fwd's `routes`, `prefixes`
//! and `hops`.

use crate::l3fwd::{RouteDrops, Router};
use crate::params::Reader;
use crate::{App, AppError, flow};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Cycles per random read besides the load itself: one xoshiro step and a multiply-shift to an index.
const READ_WORK: u32 = 6;
/// Cycles per 64-byte line of payload read (summed) or written (stored): a few vector operations.
const LINE_WORK: u32 = 4;

/// What the NF does with the payload (shRing §5.2 "optionally read or overwrite packet payload").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadMode {
    /// Leave it untouched.
    None,
    /// Read every byte.
    Read,
    /// Overwrite every byte.
    Write,
}

/// The WorkPackage NF.
#[derive(Debug)]
pub struct WorkPackage {
    router: Router,
    buffer: Vec<u64>,
    reads: u32,
    payload: PayloadMode,
    rng: Xoshiro256PlusPlus,
    /// Folds every value read, so that the reads cannot be optimised away.
    checksum: u64,
    forwarded: u64,
    malformed: u64,
    drops: RouteDrops,
}

impl WorkPackage {
    /// Build for core `core` from parameters (see the module documentation).
    pub fn new(mut r: Reader<'_>, core: usize) -> Result<WorkPackage, AppError> {
        let reads = r.count("reads", 4, 0..=100_000)? as u32;
        let size = r.bytes("buffer", 8 << 20, 64..=(64 << 30))?;
        let payload = match r.choice("payload", &["none", "read", "write"])? {
            "read" => PayloadMode::Read,
            "write" => PayloadMode::Write,
            _ => PayloadMode::None,
        };
        let target_core = r.count("target-core", u64::MAX, 0..=u64::MAX)?;
        let target_reads = r.count("target-reads", u64::from(reads), 0..=100_000)? as u32;
        let router = Router::from_params(&mut r)?;
        r.finish()?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x3b9a_ca07 ^ core as u64);
        // Random contents, written now: a zeroed buffer would map every page to the one zero page, and the
        // reads would all hit the same few lines of it.
        let buffer = (0..size as usize / 8).map(|_| rng.random()).collect();
        let reads = if target_core == core as u64 { target_reads } else { reads };
        Ok(WorkPackage {
            router,
            buffer,
            reads,
            payload,
            rng,
            checksum: 0,
            forwarded: 0,
            malformed: 0,
            drops: RouteDrops::default(),
        })
    }

    /// The random reads: each is a dependent-free load of one 8-byte word anywhere in the buffer.
    fn random_reads<P: Probe>(&mut self, p: &mut P) {
        let n = self.buffer.len() as u64;
        for _ in 0..self.reads {
            // Lemire's multiply-shift maps a random word to an index without a division.
            let i = ((u128::from(self.rng.random::<u64>()) * u128::from(n)) >> 64) as usize;
            let w = &self.buffer[i];
            p.read(w);
            p.work(READ_WORK);
            self.checksum = self.checksum.wrapping_add(*w);
        }
    }
}

impl App for WorkPackage {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            let addr = pkt.addr();
            let routed = match flow::parse(p, &mut pkt) {
                Ok(mut v) => {
                    let r = self.router.route(p, addr, &mut v);
                    if r.is_ok() {
                        let (off, len) = (v.payload_offset(), v.payload().len());
                        let lines = len.div_ceil(64) as u32;
                        match self.payload {
                            PayloadMode::None => {}
                            PayloadMode::Read => {
                                p.touch(addr + off, len, Access::Read);
                                p.work(LINE_WORK * lines);
                                let sum = v.payload().iter().fold(0u64, |s, &b| s.wrapping_add(u64::from(b)));
                                self.checksum = self.checksum.wrapping_add(sum);
                            }
                            PayloadMode::Write => {
                                p.touch(addr + off, len, Access::Write);
                                p.work(LINE_WORK * lines);
                                v.payload_mut().fill(self.checksum as u8);
                            }
                        }
                    }
                    r
                }
                Err(_) => {
                    self.malformed += 1;
                    continue;
                }
            };
            match routed {
                Ok(_) => {
                    self.random_reads(p);
                    self.forwarded += 1;
                    tx.push(pkt);
                }
                Err(e) => self.drops.count(e),
            }
        }
    }

    fn metrics(&self) -> Metrics {
        let mut m = Metrics::from([
            ("forwarded".into(), self.forwarded as f64),
            ("drop_malformed".into(), self.malformed as f64),
            ("reads_per_packet".into(), f64::from(self.reads)),
            // Keeps the folded reads observable (and the compiler from dropping them).
            ("read_fold".into(), (self.checksum & 0xFFFF) as f64),
        ]);
        self.drops.report(&mut m);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;
    use ifaces::probe::CountingProbe;

    #[test]
    fn reads_and_payload_modes_are_reported() {
        let core = TestCore::new();
        let f = vec![frame("1.2.3.4", 1, "10.0.0.1", 2, 17, 1518)];
        let mut touched = Vec::new();
        for mode in ["none", "read", "write"] {
            let params = AppParams::new().with("reads", 5).with("buffer", "64KiB").with("payload", mode);
            let mut app = WorkPackage::new(params.reader("workpackage"), 0).unwrap();
            let mut p = CountingProbe::default();
            let out = core.run_with(&mut app, &mut p, &f);
            assert_eq!(out.len(), 1);
            assert!(wire::rewrite::checksums_valid(&wire::PacketView::new_checked(&out[0][..]).unwrap()));
            touched.push((p.touches, p.bytes, out[0][100]));
        }
        // none: header read, LPM read, next hop read, 5 buffer reads; two header writes.
        assert_eq!(touched[0].0[0], 1 + 1 + 1 + 5);
        assert_eq!(touched[1].0[0], touched[0].0[0] + 1);
        assert_eq!(touched[2].0[1], touched[0].0[1] + 1);
        assert!(touched[1].1 >= touched[0].1 + 1400);
    }

    #[test]
    fn the_target_core_makes_its_own_number_of_reads() {
        let params = AppParams::parse("reads=2,target-core=1,target-reads=40,buffer=4KiB").unwrap();
        let other = WorkPackage::new(params.reader("workpackage"), 0).unwrap();
        let target = WorkPackage::new(params.reader("workpackage"), 1).unwrap();
        assert_eq!((other.reads, target.reads), (2, 40));
        let bad = AppParams::parse("payload=sometimes").unwrap();
        let e = WorkPackage::new(bad.reader("workpackage"), 0).unwrap_err().to_string();
        assert_eq!(e, "app workpackage: payload: 'sometimes' is not one of none|read|write");
    }
}
