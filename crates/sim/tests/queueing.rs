//! The engine's queueing against closed form (formulas in reference/hardware.md):
//! Poisson arrivals, per-packet service times injected through `Probe::work` by the `service` app, privRing
//! with bursts of one packet so that a core serves one packet at a time.
//!
//! The hardware's fixed latencies (NIC pipeline, PCIe, wire) are set to zero so that sojourn time is
//! queueing plus service; the driver's own per-packet cost is measured by the run (cycles per packet)
//! and included in the service time the formulas use. Mean sojourn is compared with Pollaczek-Khinchine
//! (M/G/1, exact for exponential or deterministic service plus a constant), p99 with M/M/1's
//! exponential sojourn.
//!
//! A COREC-style shared queue (all cores poll one ring, `Wake::AllCores`) is M/M/c: compared with
//! Erlang C (mean wait scaled by (1 + CV^2) / 2 for the driver's constant share of the service, the
//! Lee-Longton M/G/c approximation) and with the M/M/c sojourn distribution for p99, at c = 4 (c = 8
//! too with `SIM_HEAVY=1`), next to the c independent M/M/1 queues privRing gives.

use apps::service::Service;
use sim::{Arrivals, Profile, SimConfig, SimReport, run_design};
use traffic::{GenConfig, Rate, SizeSpec, Steering};

/// Mean service time injected per packet, ns.
const SERVICE_NS: f64 = 10_000.0;
/// Packets per run: enough for the mean and p99 to settle within a few percent at utilisation 0.5.
const PACKETS: f64 = 200_000.0;

/// The R640 with the NIC, PCIe and wire made instantaneous and no host noise (closed form knows none).
fn zero_latency_profile() -> Profile {
    let mut p = Profile::r640_silver4216();
    p.noise = sim::noise::NoiseParams::none();
    p.pcie.read_base_ns = 0.0;
    p.pcie.read_per_byte_ns = 0.0;
    p.nic.mpps = 1e6;
    p.nic.port_gbps = 1e6;
    p
}

/// Run `cores` privRing cores at utilisation `rho` each (of the injected service alone).
fn run(cores: usize, rho: f64, exponential: bool) -> (SimReport, f64) {
    run_with::<ifaces::PrivRing>(cores, rho, exponential)
}

/// Run design `D` on `cores` cores at utilisation `rho` each (of the injected service alone); returns
/// the report and the measured mean service time in ns (injected plus the driver's own cost).
fn run_with<D: ifaces::Design>(cores: usize, rho: f64, exponential: bool) -> (SimReport, f64) {
    let profile = zero_latency_profile();
    let rate_mpps = rho * cores as f64 / SERVICE_NS * 1e3;
    let duration_ps = (PACKETS / (rate_mpps * 1e6) * 1e12) as u64;
    let steering = if cores > 1 { Steering::RssEven { queues: cores } } else { Steering::None };
    let mut cfg = SimConfig {
        traffic: GenConfig {
            size: SizeSpec::Fixed(64),
            flows: 64 * cores,
            rate: Rate::Mpps(rate_mpps),
            steering,
            seed: 7,
            ..GenConfig::default()
        },
        arrivals: Arrivals::Poisson,
        duration_ps,
        warmup_ps: duration_ps / 20,
        seed: 11,
        ..SimConfig::default()
    };
    cfg.iface.cores = cores;
    cfg.iface.burst = 1;
    let mean_cycles = SERVICE_NS * profile.cpu.freq_ghz;
    let apps = (0..cores).map(|i| Service::with(mean_cycles, exponential, 100 + i as u64)).collect();
    let r = run_design::<D, _>(&cfg, &profile, apps, &Default::default()).unwrap();
    assert!(r.drops.is_empty(), "{r}");
    let service_ns = r.cycles.total / profile.cpu.freq_ghz;
    (r, service_ns)
}

/// Mean sojourn of M/G/1 with arrival rate `lambda` (per ns), service mean `s` and second moment `s2`.
fn pollaczek_khinchine(lambda: f64, s: f64, s2: f64) -> f64 {
    let rho = lambda * s;
    s + lambda * s2 / (2.0 * (1.0 - rho))
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() / want <= tol
}

/// Rate of packets per ns that each core sees.
fn lambda_per_core(r: &SimReport, cores: usize) -> f64 {
    r.offered.mpps / 1e3 / cores as f64
}

#[test]
fn m_m_1() {
    let (r, s) = run(1, 0.5, true);
    let lambda = lambda_per_core(&r, 1);
    // Service = exponential(SERVICE) + the driver's constant: second moment SERVICE^2 + s^2.
    let mean = pollaczek_khinchine(lambda, s, SERVICE_NS * SERVICE_NS + s * s);
    let p99 = (100f64).ln() / (1.0 / s - lambda);
    println!("M/M/1: mean {:.0} vs {mean:.0} ns, p99 {} vs {p99:.0} ns\n{r}", r.latency.mean, r.latency.p99);
    assert!(within(r.latency.mean, mean, 0.04), "mean {} vs {mean}", r.latency.mean);
    assert!(within(r.latency.p99 as f64, p99, 0.05), "p99 {} vs {p99}", r.latency.p99);
}

#[test]
fn m_d_1() {
    let (r, s) = run(1, 0.7, false);
    let lambda = lambda_per_core(&r, 1);
    let mean = pollaczek_khinchine(lambda, s, s * s);
    println!("M/D/1: mean {:.0} vs {mean:.0} ns\n{r}", r.latency.mean);
    assert!(within(r.latency.mean, mean, 0.04), "mean {} vs {mean}", r.latency.mean);
}

#[test]
fn c_independent_m_m_1_queues() {
    let c = 4;
    let (r, s) = run(c, 0.5, true);
    let lambda = lambda_per_core(&r, c);
    let mean = pollaczek_khinchine(lambda, s, SERVICE_NS * SERVICE_NS + s * s);
    // Each of the c queues is M/M/1 fed lambda/c: P(T > t) = exp(-(mu - lambda/c) t).
    let p99 = (100f64).ln() / (1.0 / s - lambda);
    println!("{c} x M/M/1: mean {:.0} vs {mean:.0} ns, p99 {} vs {p99:.0} ns\n{r}", r.latency.mean, r.latency.p99);
    assert!(within(r.latency.mean, mean, 0.04), "mean {} vs {mean}", r.latency.mean);
    assert!(within(r.latency.p99 as f64, p99, 0.05), "p99 {} vs {p99}", r.latency.p99);
}

/// Erlang C: the probability that an arrival waits in M/M/c with offered load `a` = lambda / mu.
fn erlang_c(c: usize, a: f64) -> f64 {
    let (mut term, mut sum) = (1.0, 0.0);
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        sum += term;
    }
    let top = term * a / c as f64 * c as f64 / (c as f64 - a);
    top / (sum + top)
}

/// P(T > t) of the M/M/c sojourn: wait (0 with probability 1 - C, else exponential with rate
/// c mu - lambda) plus an exponential service of rate mu.
fn mmc_tail(c: usize, lambda: f64, mu: f64, t: f64) -> f64 {
    let cc = erlang_c(c, lambda / mu);
    let theta = c as f64 * mu - lambda;
    let both = (theta * (-mu * t).exp() - mu * (-theta * t).exp()) / (theta - mu);
    (1.0 - cc) * (-mu * t).exp() + cc * both
}

/// The `q` quantile of the M/M/c sojourn, by bisection.
fn mmc_quantile(c: usize, lambda: f64, mu: f64, q: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 100.0 / mu);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if mmc_tail(c, lambda, mu, mid) > 1.0 - q { lo = mid } else { hi = mid }
    }
    lo
}

/// A shared queue of `c` cores against Erlang C, with the c x M/M/1 prediction alongside.
fn shared_queue(c: usize) {
    let (r, s) = run_with::<ifaces::Corec>(c, 0.5, true);
    let lambda = r.offered.mpps / 1e3;
    let mu = 1.0 / s;
    let cc = erlang_c(c, lambda / mu);
    let cv2 = SERVICE_NS * SERVICE_NS / (s * s);
    let mean = s + (1.0 + cv2) / 2.0 * cc / (c as f64 * mu - lambda);
    let p99 = mmc_quantile(c, lambda, mu, 0.99);
    let independent = (100f64).ln() / (mu - lambda / c as f64);
    println!(
        "M/M/{c} shared: mean {:.0} vs {mean:.0} ns, p99 {} vs {p99:.0} ns (c x M/M/1 would give p99 {independent:.0})\n{r}",
        r.latency.mean, r.latency.p99
    );
    assert!(within(r.latency.mean, mean, 0.05), "mean {} vs {mean}", r.latency.mean);
    assert!(within(r.latency.p99 as f64, p99, 0.05), "p99 {} vs {p99}", r.latency.p99);
}

#[test]
fn m_m_c_shared_queue_against_erlang_c() {
    shared_queue(4);
    if std::env::var_os("SIM_HEAVY").is_some() {
        shared_queue(8);
    }
}

#[test]
fn erlang_c_matches_a_worked_value() {
    // c = 2, a = 1 (rho = 0.5): C = 1/3; c = 1 reduces to rho.
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
    assert!((erlang_c(1, 0.7) - 0.7).abs() < 1e-12);
    // c = 1: the sojourn is exponential with rate mu - lambda.
    let q = mmc_quantile(1, 0.5, 1.0, 0.99);
    assert!((q - (100f64).ln() / 0.5).abs() < 1e-6, "{q}");
}
