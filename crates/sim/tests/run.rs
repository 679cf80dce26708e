//! End-to-end runs of the simulator: privRing and echo through the public API.

use sim::{SimConfig, SimError, run};
use traffic::{GenConfig, Rate, SizeSpec};

fn config(cores: usize, gbps: f64, size: usize, micros: u64) -> SimConfig {
    let mut cfg = SimConfig {
        traffic: GenConfig { size: SizeSpec::Fixed(size), flows: 64, rate: Rate::Gbps(gbps), ..GenConfig::default() },
        duration_ps: micros * 1_000_000,
        warmup_ps: micros * 100_000,
        ..SimConfig::default()
    };
    cfg.iface.cores = cores;
    cfg
}

#[test]
fn privring_echo_forwards_everything_at_moderate_load() {
    let r = run(&config(2, 10.0, 1518, 300)).unwrap();
    println!("{r}");
    assert!(r.drops.is_empty(), "{:?}", r.drops);
    assert!((r.throughput.gbps_wire - r.offered.gbps_wire).abs() / r.offered.gbps_wire < 0.02, "{r}");
    assert!(r.latency.count > 100 && r.latency.p50 > 500 && r.latency.p50 < 20_000, "{r}");
    assert_eq!(r.accounting.offered, r.accounting.delivered);
    assert_eq!(r.accounting.sent, r.accounting.delivered);
    assert!(r.cycles.total > 50.0, "{r}");
}

/// A backlog that a run's buffers absorb and that leaves after the traffic ended, later than RFC 2544's
/// residual allowance (2 s after a 60 s trial: 2/60 of the run), is counted late; a run its cores keep
/// up with leaves nothing late. Ensō's two 2 MiB pipes hold tens of thousands of 64 B packets, so a slow
/// core (about 1.1 Mpps) offered 3 Mpps drops nothing in 3 ms and hands the overload back after the run.
#[test]
fn a_backlog_that_leaves_after_the_residual_allowance_is_late() {
    let slow = |gbps: f64| {
        let mut c = config(1, gbps, 64, 3000);
        c.design = "enso".into();
        c.app = "workpackage".into();
        c.app_params = apps::AppParams::parse("reads=20,buffer=1MiB").unwrap();
        run(&c).unwrap()
    };
    let over = slow(2.0);
    assert!(over.drops.is_empty() && over.accounting.sent == over.accounting.offered, "{over}");
    assert!(over.accounting.sent_late * 3 > over.accounting.sent, "the overload leaves late\n{over}");
    let under = slow(0.5);
    assert_eq!(under.accounting.sent_late, 0, "{under}");
}

/// A core far slower than its load (a processing-variability target core, shRing §5.3, rxBisect §6.2)
/// ends the offered traffic with a full ring, which takes it longer than the drain limit's 100 ms to
/// empty: the run drains on while packets keep leaving, and every packet is accounted for.
#[test]
fn a_slow_core_drains_its_full_ring_past_the_drain_limit() {
    let mut c = config(1, 1.0, 64, 1000);
    c.app = "service".into();
    // About 0.48 ms a packet at 2.1 GHz: 1 Ki packets take half a second.
    c.app_params = apps::AppParams::parse("cycles=1000000,dist=det").unwrap();
    let r = run(&c).unwrap();
    assert!(r.accounting.delivered > 1000, "the ring's packets leave after the traffic\n{r}");
    assert_eq!(r.accounting.sent, r.accounting.delivered, "{r}");
}

/// Ensō's forwarder copies each received message into its TX pipe (Ensō §7.2.2): every packet still
/// goes out once, and the copy costs the transmit path the reads and writes of the frame that sending in
/// place does not.
#[test]
fn enso_can_send_by_copying_into_its_tx_pipe() {
    let fwd = |copy: bool| {
        let mut c = config(1, 20.0, 512, 300);
        c.design = "enso".into();
        c.app = "fwd".into();
        c.app_params = apps::AppParams::parse("mac=swap").unwrap();
        c.iface.enso.tx_copy = copy;
        run(&c).unwrap()
    };
    let (in_place, copied) = (fwd(false), fwd(true));
    for r in [&in_place, &copied] {
        assert!(r.drops.is_empty() && r.accounting.sent == r.accounting.offered, "{r}");
    }
    let tx = |r: &sim::report::SimReport| r.cycles.phases["tx"];
    assert!(tx(&copied) > tx(&in_place) + 8.0, "{in_place}\n{copied}");
}

#[test]
fn same_config_same_report() {
    let cfg = config(4, 40.0, 64, 100);
    let a = serde_json::to_string(&run(&cfg).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&cfg).unwrap()).unwrap();
    assert_eq!(a, b);
}

/// Host noise: a core interrupted for tens of microseconds overflows a 128-entry ring at
/// 50 Gbps of MTU frames (it fills in 31 us), and the same run without noise drops nothing; the report
/// counts the interruptions, and a horizon brings the rare long ones into the window.
#[test]
fn interrupted_cores_overflow_small_rings() {
    let mut cfg = config(1, 50.0, 1518, 10_000);
    cfg.iface.ring = "128".parse().unwrap();
    cfg.noise_horizon_ps = Some(60_000_000_000_000);
    let noisy = run(&cfg).unwrap();
    assert!(noisy.drops.get("no_rx_descriptor").is_some_and(|&n| n > 0), "{noisy}");
    assert!(noisy.noise.max_us > 31.0 && noisy.noise.interruptions > 1, "{noisy}");
    assert_eq!(serde_json::to_string(&noisy).unwrap(), serde_json::to_string(&run(&cfg).unwrap()).unwrap());
    cfg.noise = false;
    let quiet = run(&cfg).unwrap();
    assert!(quiet.drops.is_empty() && quiet.noise.interruptions == 0, "{quiet}");
    let mut c = config(1, 1.0, 64, 10);
    c.noise_horizon_ps = Some(1_000);
    assert!(run(&c).unwrap_err().to_string().contains("--noise-horizon"));
}

/// `--stall`: every core starts late while packets arrive, so the first packets wait for the stall and
/// the rings hold them (no drop at 10 Gbps); a stall as long as the run is refused. Where latency goes
/// (`sim::stages`): the stages add up to the mean over the same packets, and the stall shows as time in
/// the receive ring, nowhere else (the 41 packets of its 50 us wait 25 us on average, about 4 us over the
/// window's 250).
#[test]
fn a_stall_holds_every_core_back_at_the_start() {
    let mut cfg = config(2, 10.0, 1518, 300);
    cfg.noise = false;
    cfg.warmup_ps = 1_000_000;
    let prompt = run(&cfg).unwrap();
    cfg.stall_ps = 50_000_000;
    let stalled = run(&cfg).unwrap();
    assert!(prompt.latency.max < 20_000 && stalled.latency.max > 45_000, "{prompt}\n{stalled}");
    assert!(stalled.drops.is_empty() && stalled.accounting.delivered == stalled.accounting.offered, "{stalled}");
    for r in [&prompt, &stalled] {
        let s = &r.latency_stages;
        let sum = s.nic_ns + s.rx_ring_ns + s.core_ns + s.tx_call_ns + s.tx_ns;
        assert!((sum - r.latency.mean).abs() < 1.0, "{sum} against {r}");
        assert_eq!((s.count, s.untracked), (r.latency.count, 0), "{r}");
    }
    let (p, s) = (&prompt.latency_stages, &stalled.latency_stages);
    assert!(p.rx_ring_ns < 5_000.0 && s.rx_ring_ns > p.rx_ring_ns + 3_000.0, "{prompt}\n{stalled}");
    assert!((s.nic_ns - p.nic_ns).abs() < 1_000.0 && (s.tx_ns - p.tx_ns).abs() < 1_000.0, "{prompt}\n{stalled}");
    cfg.stall_ps = cfg.duration_ps;
    assert!(run(&cfg).unwrap_err().to_string().contains("--stall"));
}

/// Co-located STREAM triads load DRAM beside the NF, whose misses then wait longer: an NF whose packets
/// miss the LLC (echo of 1518 B frames, buffers beyond the DDIO ways) spends more cycles a packet, and the
/// report says what the triads moved; a triad needs a core of its own.
#[test]
fn co_located_stream_triads_load_dram_and_slow_the_nf() {
    let mut cfg = config(2, 20.0, 1518, 1000);
    cfg.noise = false;
    cfg.iface.ring = ifaces::RingSize::new(4096).unwrap();
    cfg.ddio_ways = Some(0);
    let alone = run(&cfg).unwrap();
    cfg.stream_triads = 12;
    let beside = run(&cfg).unwrap();
    assert!(alone.antagonists.is_none(), "{alone}");
    let a = beside.antagonists.expect("the triads' report");
    assert_eq!(a.instances, 12);
    let dram = |r: &sim::report::SimReport| r.memory.read_gbs + r.memory.write_gbs;
    assert!(a.triad_gbs > 10.0 && dram(&beside) > dram(&alone) + 10.0, "{alone}\n{beside}");
    assert!(beside.cycles.total > alone.cycles.total * 1.02, "{alone}\n{beside}");
    assert_eq!(beside.accounting.offered, beside.accounting.delivered, "{beside}");
    cfg.stream_triads = 15;
    assert!(run(&cfg).unwrap_err().to_string().contains("--stream-triads"));
}

/// STREAM triads or PageRank threads on the other socket load the NIC socket's DRAM without taking its
/// cores: as many as that socket has cores beside workers on every core here, slowing an NF that misses
/// the LLC; a profile without a second socket has no place for them.
#[test]
fn remote_stream_triads_load_dram_from_the_other_socket() {
    let mut cfg = config(16, 100.0, 1518, 1000);
    cfg.noise = false;
    cfg.iface.ring = ifaces::RingSize::new(4096).unwrap();
    cfg.ddio_ways = Some(0);
    let alone = run(&cfg).unwrap();
    cfg.stream_triads = 16;
    cfg.colocated_socket = sim::remote::Socket::Remote;
    let beside = run(&cfg).unwrap();
    let a = beside.antagonists.expect("the triads' report");
    assert_eq!(a.instances, 16);
    assert!(a.triad_gbs > 10.0 && a.triad_gbs <= 38.4, "{beside}");
    assert!(beside.memory.read_gbs > alone.memory.read_gbs + 10.0, "{alone}\n{beside}");
    assert!(beside.cycles.total > alone.cycles.total * 1.02, "{alone}\n{beside}");
    let pagerank = run(&SimConfig { stream_triads: 0, pagerank_threads: 16, ..cfg.clone() }).unwrap();
    let a = pagerank.antagonists.expect("the threads' report");
    assert_eq!((a.instances, a.pagerank_threads), (0, 16));
    // A random line an edge: at most the links' 38.4 GB/s of lines, 0.6 billion edges a second.
    assert!(a.pagerank_gteps.is_some_and(|e| e > 0.1 && e < 0.6), "{pagerank}");
    assert!(pagerank.memory.read_gbs > alone.memory.read_gbs + 10.0, "{alone}\n{pagerank}");
    cfg.pagerank_threads = 1;
    assert!(run(&cfg).unwrap_err().to_string().contains("--stream-triads"));
    let one_socket = SimConfig { profile: "i9-9960x-enso".into(), stream_triads: 1, ..cfg };
    assert!(run(&one_socket).unwrap_err().to_string().contains("no second socket"));
}

/// The NF on the socket away from the NIC (COREC §4.1's "different NUMA"): DDIO does not serve it, so
/// the NIC's writes go to DRAM and the core reads what the NIC wrote from there, the NIC's reads take
/// the crossing's 110 ns longer, and the core is slower; a profile of one socket refuses it.
#[test]
fn an_nf_on_the_other_socket_loses_ddio_and_pays_the_crossing() {
    let mut cfg = SimConfig { profile: "silver4110-xl710".into(), app: "l3fwd".into(), ..config(1, 40.0, 64, 300) };
    cfg.noise = false;
    let local = run(&cfg).unwrap();
    cfg.nf_socket = sim::remote::Socket::Remote;
    let remote = run(&cfg).unwrap();
    assert!(local.hit_rates.llc > 0.8 && remote.hit_rates.llc < 0.1, "{local}\n{remote}");
    assert!(remote.misses_per_packet.llc > local.misses_per_packet.llc + 0.5, "{local}\n{remote}");
    assert!(remote.memory.write_gbs > local.memory.write_gbs + 1.0, "{local}\n{remote}");
    let added = remote.pcie.read_latency_ns - local.pcie.read_latency_ns;
    assert!(added >= 110.0, "{added} ns added to a DMA read");
    assert!(remote.throughput.mpps < local.throughput.mpps * 0.9, "{local}\n{remote}");
    let one_socket = SimConfig { profile: "i9-9960x-enso".into(), ..cfg };
    assert!(run(&one_socket).unwrap_err().to_string().contains("nf-socket"));
}

/// Workers on every core of the CPU: one of them also runs the housekeeping, whose
/// interruptions have the long tail (sysjitter's core 2, up to 347 us), and a horizon of 50 s brings
/// some into the run; with a core to spare, every worker has the typical core's (at most 47.5 us).
#[test]
fn a_run_on_every_core_shares_one_with_the_housekeeping() {
    let longest = |cores: usize| {
        let mut cfg = config(cores, 1.0, 64, 40_000);
        cfg.profile_set = "cpu.cores=2".into();
        cfg.noise_horizon_ps = Some(50_000_000_000_000);
        run(&cfg).unwrap().noise.max_us
    };
    let (spare, every) = (longest(1), longest(2));
    assert!(spare <= 47.6, "{spare} us with a core to spare");
    assert!(every > 184.0, "{every} us with every core working");
}

/// Flow tables start in steady state: every core's NAT has seen each flow RSS steers to it, as
/// after the papers' warm-up traffic, so no packet of the run creates one; without warming each flow's
/// first packet does. COREC's cores share one queue, so each core's table holds every flow.
#[test]
fn warmed_tables_know_every_flow_their_cores_receive() {
    let new_flows = |iface: &str, warm: bool| {
        let mut cfg = config(4, 20.0, 256, 200);
        cfg.app = "nat".into();
        cfg.design = iface.into();
        cfg.warm_tables = warm;
        let r = run(&cfg).unwrap();
        (r.app_metrics["new_flows"], r.app_metrics["flows"])
    };
    for iface in ["privring", "corec"] {
        let (new, _) = new_flows(iface, true);
        assert_eq!(new, 0.0, "{iface}");
    }
    let (new, known) = new_flows("privring", false);
    assert!(new > 0.0 && new <= 64.0 && known == new, "{new} new flows, {known} known");
    assert_eq!(new_flows("privring", true).1, 64.0, "64 flows over 4 cores");
    assert_eq!(new_flows("corec", true).1, 4.0 * 64.0, "every core of COREC sees every flow");
}

/// COREC's workers race as Listing 2's do (003 §3.4.1): on 4 cores at 20 Gbps of 64 B frames some claim
/// swaps lose to a worker that claimed after their load of the counter (line 21) and retry, and some
/// tail try-locks find the lock held (line 35) and leave, which an engine running one core's step at a
/// time would hide by letting every swap and every try-lock win.
#[test]
fn corec_workers_lose_claim_races_and_tail_try_locks() {
    let mut cfg = config(4, 20.0, 64, 200);
    cfg.design = "corec".into();
    let r = run(&cfg).unwrap();
    assert!(r.drops.is_empty(), "{r}");
    let failures = |k: &str| r.device_metrics[k];
    assert!(failures("claim_cas_failures") > 0.0 && failures("tail_trylock_failures") > 0.0, "{r}");
    assert_eq!(r.lock_wait_ns, 0.0, "a try-lock never waits: {r}");
}

/// A core's pace varies with what its packets hit in the caches: the engine charges each
/// poll its own accesses, so the per-packet service time keeps that spread instead of averaging it
/// away (forwarding MTU frames from a 4 Ki ring that leaks out of the DDIO ways: p99 over 1.5x the
/// median and p99.9 over 1.75x; an averaged pace would give about 1x. Measured: p99 1.7x and p99.9 2.0x;
/// 2.0x and 3.7x where the NIC took a transmit descriptor that continued its last read as read ahead).
#[test]
fn service_times_keep_their_cache_driven_spread() {
    let mut cfg = config(4, 100.0, 1518, 2000);
    cfg.app = "fwd".into();
    cfg.iface.ring = "4096".parse().unwrap();
    cfg.warmup_ps = cfg.duration_ps / 2;
    cfg.noise = false;
    let r = run(&cfg).unwrap();
    let s = r.service_ns;
    assert!(s.count > 1000 && 2 * s.p99 >= 3 * s.p50 && 4 * s.p999 >= 7 * s.p50, "{r}");
}

#[test]
fn bad_inputs_are_named() {
    let err = |cfg: SimConfig| run(&cfg).unwrap_err().to_string();
    let mut c = config(1, 1.0, 64, 10);
    c.profile = "r999".into();
    assert!(err(c).contains("known: r640-silver4216"));
    let c = config(17, 1.0, 64, 10);
    assert!(err(c).contains("17 cores requested but profile r640-silver4216 has 16"));
    let mut c = config(1, 1.0, 64, 10);
    c.ddio_ways = Some(12);
    assert!(err(c).contains("12 DDIO ways exceed the LLC's 11 ways"));
    let mut c = config(1, 1.0, 64, 10);
    c.design = "shring2".into();
    assert!(matches!(run(&c), Err(SimError::Iface(_))));
    assert!(err(c).contains("unknown interface 'shring2'"));
    let mut c = config(1, 1.0, 64, 10);
    c.warmup_ps = c.duration_ps;
    assert!(err(c).contains("--warmup"));
}

/// nicmem (002 §4.1): with the payload in NIC memory (`nmnfv-`) only headers cross PCIe, both ways, so
/// the PCIe goodput per packet falls from the whole frame to about the split offset.
#[test]
fn nicmem_payloads_stay_on_the_nic() {
    let goodput = |design: &str| {
        let mut c = config(2, 10.0, 1518, 300);
        c.design = design.into();
        let r = run(&c).unwrap();
        assert!(r.drops.is_empty(), "{design}: {:?}", r.drops);
        let per_pkt = |gbps: f64| gbps * 1e9 / 8.0 / (r.throughput.mpps * 1e6);
        (per_pkt(r.pcie.to_host.goodput_gbps), per_pkt(r.pcie.to_device.goodput_gbps))
    };
    let (host_in, host_out) = goodput("nicmem-host");
    let (nm_in, nm_out) = goodput("nmnfv-");
    assert!(host_in > 1500.0 && host_out > 1500.0, "{host_in} {host_out}");
    assert!(nm_in < 250.0 && nm_out < 250.0, "{nm_in} {nm_out}");
}

/// Completion formats: ConnectX CQE compression engages by itself under PCIe back pressure
/// and merges up to seven completions into one 64-byte mini-CQE array, so completions cost less of the
/// link towards the host per packet; with a link to spare it stays off. Intel's 32-byte write-back
/// costs 32 B less than a CQE per packet.
#[test]
fn completions_as_the_nics_write_them() {
    let run_with = |lanes: u32, compress: bool, cqe_bytes: usize| {
        let mut c = config(2, 10.0, 256, 300);
        c.profile_set = format!(
            "pcie.lanes = {lanes}; pcie.links = 1; nic.cqe_bytes = {cqe_bytes}; nic.cqe_compression = {compress}"
        );
        let r = run(&c).unwrap();
        let per_pkt = r.pcie.to_host.goodput_gbps * 1e9 / 8.0 / (r.throughput.mpps * 1e6);
        (per_pkt, r.device_metrics["cqe_minis"], r.accounting.delivered)
    };
    // One Gen3 lane (under 8 Gbps) for 10 Gbps of 256 B frames: the link backs up.
    let (full, none, _) = run_with(1, false, 64);
    let (mini, minis, delivered) = run_with(1, true, 64);
    assert_eq!(none, 0.0);
    assert!(minis > delivered as f64 / 2.0, "{minis} of {delivered} completions compressed");
    assert!(full - mini > 30.0, "{full} vs {mini} B per packet");
    println!(
        "one lane: {full:.1} B per packet with full CQEs, {mini:.1} with compression ({minis} minis of {delivered})"
    );
    // Sixteen lanes: the DMA stage is behind only now and then (waiting for a descriptor fetch at the
    // start), and compression with it.
    let (_, minis, delivered) = run_with(16, true, 64);
    assert!(minis < delivered as f64 / 20.0, "{minis} of {delivered} completions compressed");
    let (wide, _, _) = run_with(16, false, 64);
    let (wb32, _, _) = run_with(16, false, 32);
    assert!((wide - wb32 - 32.0).abs() < 2.0, "{wide} vs {wb32} B per packet");
    assert!(matches!(
        run(&SimConfig { cqe_compress: Some(true), profile: "silver4110-xl710".into(), ..config(2, 1.0, 256, 50) }),
        Err(SimError::Config { option: "cqe-compress", .. })
    ));
}

/// Ensō §7.2.4, Figure 10: PCIe payload splits into packet data and metadata. privRing's packet data is
/// each frame once per direction; the rest (descriptors, completions, doorbells) is metadata, a larger
/// share for small frames. Ensō's pipes count as packet data too, and its notifications cost less per
/// packet than privRing's completions once a notification covers several packets: under load, as in
/// Figure 10 (at 5 Gbps of 64 B frames one core sees a few packets per notification).
#[test]
fn pcie_payload_splits_into_packet_data_and_metadata() {
    let report = |design: &str, size: usize, gbps: f64| {
        let mut c = config(1, gbps, size, 300);
        c.design = design.into();
        let r = run(&c).unwrap();
        assert!(r.drops.is_empty(), "{design}: {:?}", r.drops);
        r
    };
    let big = report("privring", 1518, 2.0);
    let per_pkt = |gbps: f64, r: &sim::SimReport| gbps * 1e9 / 8.0 / (r.throughput.mpps * 1e6);
    assert!((per_pkt(big.pcie.to_host.data_gbps, &big) - 1514.0).abs() < 20.0, "{big}");
    assert!((per_pkt(big.pcie.to_device.data_gbps, &big) - 1514.0).abs() < 20.0, "{big}");
    let small = report("privring", 64, 5.0);
    assert!(small.pcie.to_device.metadata_share > 2.0 * big.pcie.to_device.metadata_share, "{small}");
    let enso = report("enso", 64, 5.0);
    assert!((per_pkt(enso.pcie.to_host.data_gbps, &enso) - 64.0).abs() < 4.0, "{enso}");
    assert!(enso.pcie.to_host.metadata_share < small.pcie.to_host.metadata_share, "{enso}");
}

/// Apps' tables keep their layout in simulated memory (`App::tables`), so random lookups in a table
/// larger than the LLC miss it: FastClick's WorkPackage (shRing §5.2) reading 8 times per packet from a
/// 64 MiB array pays DRAM latency on most reads, against a 1 MiB array that the LLC holds (and that
/// starts there, as its initialisation left it). Laid out in first-touch order instead, a short run's
/// scattered reads would have packed into a few hundred lines and hit.
#[test]
fn random_lookups_in_a_table_larger_than_the_llc_miss() {
    let report = |buffer: &str| {
        let mut c = config(2, 2.0, 1518, 300);
        c.app = "workpackage".into();
        c.app_params = apps::AppParams::parse(&format!("reads=8,buffer={buffer}")).unwrap();
        run(&c).unwrap()
    };
    let (small, big) = (report("1MiB"), report("64MiB"));
    let app = |r: &sim::SimReport| r.cycles.phases["app"];
    assert!(small.hit_rates.llc > 0.9, "{small}");
    assert!(big.hit_rates.llc < 0.6, "{big}");
    // Eight dependent reads that go to DRAM (about 80 ns, 170 cycles at 2.1 GHz, beyond the LLC lookup)
    // instead of hitting the LLC: several hundred cycles more per packet.
    assert!(app(&big) > app(&small) + 600.0, "{} vs {}", app(&big), app(&small));
}

/// The papers' "application cache hit rate" (nicmem §6.3) is perf's cache-references and cache-misses,
/// which count the hardware prefetches that miss the L2 along with demand accesses: with the prefetchers
/// off it is the demand LLC hit rate, with them on it counts their lookups too. Streaming 1500-byte
/// payloads through a WorkPackage that reads the packet, the streamer's prefetches find the DMA-written
/// lines in the LLC, so they raise the rate.
#[test]
fn perf_cache_hit_rate_counts_hardware_prefetches() {
    let report = |prefetch: bool| {
        let mut c = config(1, 5.0, 1518, 300);
        c.app = "workpackage".into();
        c.app_params = apps::AppParams::parse("reads=4,buffer=64MiB,payload=read").unwrap();
        c.profile_set = format!("cpu.hw_prefetch = {prefetch}");
        run(&c).unwrap()
    };
    let off = report(false);
    assert!((off.hit_rates.cache_references - off.hit_rates.llc).abs() < 1e-12, "{off}");
    let on = report(true);
    assert!(on.hit_rates.cache_references > on.hit_rates.llc + 0.05, "{on}");
}

/// Ensō Table 1's L1d misses: a core walking its pipes misses the L1 once per 4 KiB page (the
/// prefetchers do not cross one), 1/64 of its 64 B packets, because the IP prefetcher follows the
/// driver's header load from batch to batch; with only the DCU's next-line history it also missed at
/// each batch's start, after the other pipe's batch and the notification reads had pushed the walk out
/// of it. Chaotic Ensō's scattered buffers miss on nearly every packet.
#[test]
fn enso_misses_the_l1_once_per_page_of_its_pipes() {
    let misses = |design: &str| {
        let mut c = config(1, 100.0, 64, 300);
        c.profile = "i9-9960x-enso".into();
        c.design = design.into();
        c.app = "echo".into();
        c.app_params = apps::AppParams::parse("reply=no").unwrap();
        c.iface.burst = 1024;
        run(&c).unwrap().misses_per_packet.l1
    };
    let enso = misses("enso");
    assert!((enso - 1.0 / 64.0).abs() < 0.002, "{enso} L1 misses per packet");
    let chaotic = misses("enso-chaotic");
    assert!(chaotic > 0.8, "{chaotic} L1 misses per packet");
}

/// The adaptive LLC policy's selectors are reported at the window's start and end, from where the profile
/// starts them (`cpu.llc_duel_start`): a short, light run moves none from either end, while from the
/// midpoint a few leader misses already tip some slices over (the knife edge where rxlab's tips start).
/// Other policies have none.
#[test]
fn the_llc_selectors_are_reported_from_where_they_start() {
    let report = |set: &str| {
        let mut c = config(1, 5.0, 1518, 300);
        c.profile_set = set.into();
        run(&c).unwrap()
    };
    let duel = |start: &str| {
        let r = report(&format!("cpu.llc_duel_start = \"{start}\""));
        assert!(r.to_string().contains("LLC slices filling as MR161"), "{r}");
        let d = r.llc_duel.unwrap_or_else(|| panic!("{r}"));
        (d.window_start, d.window_end)
    };
    assert_eq!(duel("m1"), (0.0, 0.0));
    assert_eq!(duel("mr161"), (1.0, 1.0));
    let (start, end) = duel("neutral");
    assert!(start > 0.0 && start < 1.0 && end > 0.0 && end < 1.0, "{start} {end}");
    assert_eq!(report("cpu.llc_policy = \"lru\"").llc_duel, None);
}

/// `nic.pmd_cycles` is charged once per packet a DPDK receive path hands over, to the receive phase, and
/// never to Ensō, whose library hands over messages without a driver (its pipes are not mbufs).
#[test]
fn a_dpdk_driver_pays_its_instructions_per_received_packet() {
    let rx = |design: &str, pmd: u32| {
        let mut c = config(1, 5.0, 1518, 300);
        c.design = design.into();
        c.profile_set = format!("nic.pmd_cycles = {pmd}");
        let r = run(&c).unwrap();
        (r.cycles.phases["rx"], r.cycles.total)
    };
    for design in ["privring", "shring", "rxbisect", "corec"] {
        let ((rx0, total0), (rx50, total50)) = (rx(design, 0), rx(design, 50));
        assert!((rx50 - rx0 - 50.0).abs() < 1.0 && (total50 - total0 - 50.0).abs() < 1.0, "{design}: {rx0} {rx50}");
    }
    assert_eq!(rx("enso", 0), rx("enso", 50));
}

/// The papers' second state is the cores' (rxBisect Table 2, natively: privRing NAT at 155 Gbps with
/// 1,256 us of latency, one full 1 Ki ring): once every buffer is old, the cores pay DRAM's loaded
/// latency on the leaked lines and stay behind the arrival rate. With NIC read slots to spare (so that
/// the NIC cannot be the bottleneck), a 1 ms stall of every core leaves privRing NAT on 16 cores with
/// its rings full, its cores over the 2068-cycle budget without waiting on the Tx ring, and about one
/// ring of latency; without the stall it runs at line rate. Needs DRAM's load to be read behind the
/// engine's clock (`dram.rs`): before, the same run drained back to 198.5 Gbps. Runs with `SIM_HEAVY=1`
/// (a few seconds in release, minutes in debug).
#[test]
fn a_leaking_server_can_stay_core_bound() {
    if std::env::var_os("SIM_HEAVY").is_none() {
        return;
    }
    let report = |stall_ps: u64| {
        let mut c = config(16, 200.0, 1518, 4500);
        c.warmup_ps = 1_500_000_000;
        c.traffic.flows = 1_000_000;
        c.app = "nat".into();
        c.runtime = apps::Runtime::FastClick;
        c.profile_set = "pcie.max_reads = 256".into();
        c.stall_ps = stall_ps;
        run(&c).unwrap()
    };
    let first = report(0);
    assert!(first.throughput.gbps_wire > 199.0 && first.ring_occupancy < 0.05, "{first}");
    let second = report(1_000_000_000);
    assert!(second.throughput.gbps_wire < 175.0 && second.ring_occupancy > 0.9, "{second}");
    assert!(second.cycles.total > 2068.0 && second.cycles.phases["tx"] < 0.05 * second.cycles.total, "{second}");
    let one_ring_us = 1024.0 * 16.0 / second.throughput.mpps;
    assert!((second.latency.mean / 1000.0 / one_ring_us - 1.0).abs() < 0.3, "{second}");
}

/// Flows sent in turn (T-Rex's `op = "inc"`, `Popularity::Stepped`) come round in the order a core's
/// NAT stored them when its tables were warmed, so its entries and flow control blocks are read in
/// ascending order and the prefetchers fetch them ahead; drawn at random, each is a miss of its own. The
/// tables (a million flows, about 200 MB) are far larger than the LLC either way.
#[test]
fn flows_sent_in_turn_walk_the_tables_in_order() {
    let report = |popularity: traffic::Popularity| {
        let mut c = config(1, 20.0, 1518, 1000);
        c.traffic.flows = 1_000_000;
        c.traffic.popularity = popularity;
        c.app = "nat".into();
        c.app_params = apps::AppParams::parse("flows=1000000,state=fcb").unwrap();
        run(&c).unwrap()
    };
    let (random, stepped) = (report(traffic::Popularity::Uniform), report(traffic::Popularity::Stepped));
    println!("random: {random}\nstepped: {stepped}");
    assert!(random.misses_per_packet.llc > stepped.misses_per_packet.llc + 1.0, "{random}\n{stepped}");
    assert!(random.cycles.phases["app"] > stepped.cycles.phases["app"] + 200.0, "{random}\n{stepped}");
}

/// A run that decides its own warm-up (`settle`, MSER-5): one its core keeps up with settles once it can
/// be judged (5 ms) and measures the same as the fixed warm-up; one whose ring fills opens its window only
/// once the ring is full; a horizon's interruptions, spread over a run fixed up front, rule it out.
#[test]
fn a_settling_run_opens_its_window_once_steady() {
    let wp = |gbps: f64, reads: u32, settle: bool| {
        let mut c = config(1, gbps, 1518, 14_000);
        c.warmup_ps = 12_000_000_000;
        c.settle = settle;
        c.app = "workpackage".into();
        c.app_params = apps::AppParams::parse(&format!("reads={reads},buffer=256KiB")).unwrap();
        run(&c).unwrap()
    };
    let (fixed, settled) = (wp(5.0, 8, false), wp(5.0, 8, true));
    assert!(fixed.settle.is_none());
    let s = settled.settle.unwrap();
    assert!(s.settled && s.warmup_us >= 5000.0 && s.warmup_us < 12_000.0, "{s:?}");
    assert!((settled.window_s - fixed.window_s).abs() < 1e-12);
    assert!((settled.cycles.total / fixed.cycles.total - 1.0).abs() < 0.02, "{settled}\n{fixed}");
    assert!(settled.timeline.len() < fixed.timeline.len());
    // Offered more than the core serves, the ring fills over milliseconds: the window opens full.
    let over = wp(40.0, 40, true);
    let s = over.settle.unwrap();
    assert!(over.ring_occupancy > 0.9, "{over}");
    let filled = over.timeline.iter().find(|x| x.occupancy > 0.9).unwrap().t_us;
    assert!(s.warmup_us >= filled, "{s:?} before the ring filled at {filled} us");

    let mut horizon = config(1, 5.0, 1518, 1000);
    horizon.settle = true;
    horizon.noise_horizon_ps = Some(50_000_000_000_000);
    assert!(matches!(run(&horizon), Err(SimError::Config { option: "settle", .. })));
}

/// On a split design the end of a request or of a run of log lines, with the stamp behind it, lies in NIC
/// memory, and a GET's stamp straddles the split (64 B): `kvs` answers every request, `logmon` reads
/// every line, and the engine finds every stamp (its no-duplicate check would fail on one it missed).
#[test]
fn kvs_and_logmon_read_what_a_split_design_leaves_in_nic_memory() {
    let mut kvs = config(1, 1.0, 64, 200);
    kvs.design = "nicmem-split".into();
    kvs.app = "kvs".into();
    kvs.traffic.payload = traffic::Payload::Kvs(traffic::kvs::client::ClientConfig::default());
    let r = run(&kvs).unwrap();
    assert_eq!(r.accounting.sent, r.accounting.offered, "{r}");
    let mut logmon = config(1, 1.0, 1518, 200);
    logmon.design = "nicmem-split".into();
    logmon.app = "logmon".into();
    logmon.traffic.payload = traffic::Payload::Logs(traffic::logs::LogConfig::default());
    let r = run(&logmon).unwrap();
    let lines = r.app_metrics["lines"];
    assert!(r.accounting.delivered > 10 && lines > 10.0 * r.accounting.delivered as f64, "{lines} lines, {r}");
}

/// A transmit descriptor holds the address of the data it sends, and a NIC cannot read it before the
/// doorbell that announces it (`ifaces::txfetch`): at low load a packet's transmit stage, doorbell to
/// wire, holds both reads one after the other, for Ensō's TX notifications (`cpu_to_fpga.sv` reads them
/// per doorbell, then their data) as for DPDK's transmit rings.
#[test]
fn every_nic_reads_a_transmit_descriptor_before_its_data() {
    for design in ["enso", "privring", "shring", "rxbisect", "corec"] {
        let mut c = config(1, 1.0, 64, 300);
        c.profile = "i9-9960x-enso".into();
        c.design = design.into();
        c.iface.burst = if design == "enso" { 1024 } else { 32 };
        let r = run(&c).unwrap();
        let read_ns = sim::profile::Profile::i9_9960x_enso().pcie.read_base_ns;
        assert!(r.drops.is_empty() && r.accounting.sent == r.accounting.offered, "{design}: {r}");
        let tx_ns = r.latency_stages.tx_ns;
        assert!(tx_ns > 2.0 * read_ns, "{design}: {tx_ns} ns from doorbell to wire: {r}");
    }
}

/// An Ensō RX/TX pipe's bytes go back to the NIC only once the TX completion of what was echoed from them
/// has landed in host memory, a posted write after the NIC read the data (`Probe::write_lands_ns`), and
/// the pipe's next notification answers that Head_SW write. Echoing at 1 Gbps through one pipe, a packet
/// that arrives while the one before it is out waits for that whole transmit stage and more: the mean
/// wait in the pipe exceeds the transmit stage (1,694 ns against 1,189; 1,032 against 1,145 with
/// completions seen as the NIC issues its read).
#[test]
fn an_enso_pipe_waits_for_its_tx_completion_to_land() {
    let mut c = config(1, 1.0, 64, 1000);
    c.profile = "i9-9960x-enso".into();
    c.design = "enso".into();
    c.iface.burst = 1024;
    c.iface.enso.pipes_per_core = 1;
    c.iface.enso.visit = ifaces::enso::Visit::RoundRobin;
    let r = run(&c).unwrap();
    assert!(r.drops.is_empty() && r.accounting.sent == r.accounting.offered, "{r}");
    let s = &r.latency_stages;
    assert!(s.rx_ring_ns > s.tx_ns, "{} ns in the pipe, {} ns doorbell to wire: {r}", s.rx_ring_ns, s.tx_ns);
}

/// nicmem's NIC reads a send descriptor before the header buffer it points to: "the NIC must first read
/// the descriptor in order to obtain the header's address" (nicmem §4.2.1), the round trip header inlining
/// saves. On one ping-pong of 64 B packets the host design's transmit stage holds two reads, nmNFV's one.
#[test]
fn nicmem_inlining_saves_the_header_read_after_the_descriptor() {
    let tx_ns = |design: &str| {
        let mut c = config(1, 0.05, 64, 300);
        c.profile = "r640-silver4216".into();
        c.design = design.into();
        c.app = "pingpong".into();
        let r = run(&c).unwrap();
        assert!(r.drops.is_empty() && r.accounting.sent == r.accounting.offered, "{r}");
        r.latency_stages.tx_ns
    };
    let read_ns = sim::profile::Profile::r640_silver4216().pcie.read_base_ns;
    let (host, inlined) = (tx_ns("nicmem-host"), tx_ns("nmnfv"));
    assert!(inlined > read_ns && host > inlined + read_ns, "host {host} ns, nmNFV {inlined} ns doorbell to wire");
}
