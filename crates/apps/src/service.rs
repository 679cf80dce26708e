//! `service`: a synthetic server whose per-packet work is drawn from a chosen distribution, for queueing
//! experiments. COREC §3.2 (Figures 3-4) compares one queue served by N cores (M/M/N) with N per-core
//! queues (N x M/M/1) under Markovian arrivals and Markovian or deterministic service; with this app and
//! Poisson arrivals (`--arrivals poisson`) rxlab runs that comparison on real receive paths, where the
//! driver's own cost and the designs' synchronisation join the service time.
//!
//! Parameters: `cycles=N` mean work per packet in core cycles (default 20000), `dist=exp|det`
//! (exponential or constant; default exp).

use crate::params::Reader;
use crate::{App, AppError};
use ifaces::{CoreCtx, Packet, Probe};
use rand::SeedableRng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The synthetic server of one core.
#[derive(Debug)]
pub struct Service {
    rng: Xoshiro256PlusPlus,
    mean_cycles: f64,
    exponential: bool,
}

impl Service {
    /// Build core `core`'s server from parameters (see the module documentation); each core draws from
    /// its own seeded stream.
    pub fn new(mut r: Reader<'_>, core: usize) -> Result<Service, AppError> {
        let mean_cycles = r.count("cycles", 20_000, 1..=1_000_000_000)? as f64;
        let exponential = r.choice("dist", &["exp", "det"])? == "exp";
        r.finish()?;
        Ok(Service::with(mean_cycles, exponential, 0x5e41_1ce0 ^ core as u64))
    }

    /// A server of `mean_cycles` per packet, exponential or constant, drawing from stream `seed`.
    pub fn with(mean_cycles: f64, exponential: bool, seed: u64) -> Service {
        Service { rng: Xoshiro256PlusPlus::seed_from_u64(seed), mean_cycles, exponential }
    }
}

impl App for Service {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for pkt in rx.drain(..) {
            let x: f64 = if self.exponential { Exp1.sample(&mut self.rng) } else { 1.0 };
            p.work((x * self.mean_cycles).round().min(f64::from(u32::MAX)) as u32);
            tx.push(pkt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;
    use ifaces::probe::CountingProbe;

    #[test]
    fn work_follows_the_distribution() {
        let core = TestCore::new();
        let frames: Vec<Vec<u8>> = (0..400).map(|i| frame("1.2.3.4", i, "10.0.0.1", 2, 17, 64)).collect();
        let cycles = |params: &str| {
            let mut app = Service::new(AppParams::parse(params).unwrap().reader("service"), 0).unwrap();
            let mut p = CountingProbe::default();
            for chunk in frames.chunks(32) {
                assert_eq!(core.run_with(&mut app, &mut p, chunk).len(), chunk.len());
            }
            p.cycles as f64 / frames.len() as f64
        };
        assert_eq!(cycles("cycles=1000,dist=det"), 1000.0);
        // 400 exponential draws: the mean lands within 15 % of 1000 (its standard error is 5 %).
        let exp = cycles("cycles=1000");
        assert!((850.0..1150.0).contains(&exp), "{exp}");
        let bad = AppParams::parse("dist=pareto").unwrap();
        assert!(Service::new(bad.reader("service"), 0).unwrap_err().to_string().contains("exp|det"));
    }
}
