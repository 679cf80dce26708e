//! The per-packet cost of a design's receive path between two threads (`rxlab bench`): this
//! thread plays the NIC, running the device side on 64 B frames as fast as the design takes them; a
//! second thread runs the driver side in bursts and frees what it receives. Two floors are timed the
//! same way with an SPSC ring (`rtrb`): one of packet pointers (handing a packet over) and one of whole
//! 64 B frames (moving its bytes). `rxlab bench` and the `rx_path` criterion bench both time these.
//! [`time_one_thread`] runs both sides of a design on this one thread, a burst at a time, and times each:
//! the code's own cost, without the cross-core transfers; with the echo app its driver side is a
//! worker's receive + transmit, what DPDK's testpmd io forwarding does per packet (`bench/peers.sh`).

use apps::{AnyApp, App, AppParams};
use ifaces::{Arena, BufLayout, ConfigError, CoreCtx, Design, DeviceSide, DriverSide, IfaceConfig, Probe, SharedPool};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The frame the NIC side delivers: a minimum Ethernet frame without its FCS.
pub const FRAME: [u8; 60] = [0x5a; 60];

/// Most packets the device side sends per call (the live NIC thread's budget).
const TX_BUDGET: usize = 64;

/// A design built for one core over a pool of its own: the pool, the device side and the driver side.
type OneCore<D> = (Arc<SharedPool>, <D as Design>::Device, <D as Design>::Driver);

/// Design `D` built as `cfg` says, for one core.
fn one_core<D: Design>(cfg: &IfaceConfig) -> Result<OneCore<D>, ConfigError> {
    let cfg = &IfaceConfig { cores: 1, ..cfg.clone() };
    let arena = Arena::new("handoff", D::buffers_needed(cfg), BufLayout::default())
        .map_err(|e| ConfigError::new("ring", e.to_string()))?;
    let pool = SharedPool::new(Arc::new(arena));
    let (dev, mut drivers) = D::build(cfg, &pool)?;
    let drv = drivers.pop().expect("one core, one driver");
    Ok((pool, dev, drv))
}

/// Time `n` packets from this thread (the NIC) through design `D` to a worker thread that receives
/// them in bursts of `cfg.burst` and frees them.
pub fn time_design<D: Design, P: Probe + Default>(cfg: &IfaceConfig, n: u64) -> Result<Duration, ConfigError> {
    let (pool, mut dev, mut drv) = one_core::<D>(cfg)?;
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            let core = CoreCtx::new(0, cfg.cache, &pool);
            let mut p = P::default();
            let mut rx = Vec::with_capacity(cfg.burst);
            let mut got = 0;
            while got < n {
                got += drv.rx_burst(&mut p, &core, &mut rx, cfg.burst) as u64;
                rx.clear();
            }
            drv.teardown(&core);
        });
        let mut p = P::default();
        let mut sent = 0;
        while sent < n {
            if dev.rx(&mut p, 0, 0, &FRAME).is_ok() {
                sent += 1;
            } else {
                std::hint::spin_loop();
            }
        }
    });
    Ok(start.elapsed())
}

/// Time `n` packets through design `D` with both sides on this thread: the device side takes up to a
/// burst of frames, then the driver side receives them and frees them, or with `echo` runs the echo app
/// on them and transmits them, and the device side sends what was transmitted (to nowhere). Returns the
/// time each side took (the clock is read three times per burst).
pub fn time_one_thread<D: Design, P: Probe + Default>(
    cfg: &IfaceConfig,
    n: u64,
    echo: bool,
) -> Result<(Duration, Duration), ConfigError> {
    let (pool, mut dev, mut drv) = one_core::<D>(cfg)?;
    let core = CoreCtx::new(0, cfg.cache, &pool);
    let mut app = match echo {
        true => AnyApp::for_cores("echo", &AppParams::new(), 1).expect("echo takes no parameter").pop(),
        false => None,
    };
    let mut p = P::default();
    let (mut rx, mut tx) = (Vec::with_capacity(cfg.burst), Vec::with_capacity(cfg.burst));
    let (mut sent, mut got, mut device, mut driver) = (0, 0, Duration::ZERO, Duration::ZERO);
    let mut wire = |_: &[u8]| {};
    while got < n {
        let t0 = Instant::now();
        let mut k = 0;
        while k < cfg.burst && sent < n && dev.rx(&mut p, 0, 0, &FRAME).is_ok() {
            (k, sent) = (k + 1, sent + 1);
        }
        let t1 = Instant::now();
        let received = drv.rx_burst(&mut p, &core, &mut rx, cfg.burst);
        match &mut app {
            Some(app) => {
                app.process(&mut p, &core, &mut rx, &mut tx);
                drv.tx_burst(&mut p, &core, &mut tx);
            }
            None => rx.clear(),
        }
        let t2 = Instant::now();
        let left = if echo { dev.tx(&mut p, &mut wire, TX_BUDGET) } else { 0 };
        let t3 = Instant::now();
        assert!(k + received + left > 0, "{}: neither side made progress on one thread", D::NAME);
        got += received as u64;
        (device, driver) = (device + (t1 - t0) + (t3 - t2), driver + (t2 - t1));
    }
    while dev.tx(&mut p, &mut wire, TX_BUDGET) > 0 {}
    drv.teardown(&core);
    Ok((device, driver))
}

/// Time `n` items from this thread to a consumer thread through an SPSC ring of 1 Ki slots, read in
/// chunks of up to `burst`.
pub fn time_spsc<T: Copy + Send>(n: u64, burst: usize, item: impl Fn(u64) -> T + Sync) -> Duration {
    let (mut tx, mut rx) = rtrb::RingBuffer::<T>::new(1024);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut got = 0;
            while got < n {
                if let Ok(chunk) = rx.read_chunk(rx.slots().min(burst)) {
                    got += chunk.len() as u64;
                    chunk.commit_all();
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        let mut sent = 0u64;
        while sent < n {
            if tx.push(item(sent)).is_ok() {
                sent += 1;
            } else {
                std::hint::spin_loop();
            }
        }
    });
    start.elapsed()
}

/// The floor for handing a packet between cores: its pointer through an SPSC ring.
pub fn time_pointers(n: u64, burst: usize) -> Duration {
    time_spsc(n, burst, |i| FRAME.as_ptr() as usize + i as usize)
}

/// The floor for moving a packet's bytes between cores: whole 64 B frames through an SPSC ring.
pub fn time_frames(n: u64, burst: usize) -> Duration {
    time_spsc(n, burst, |i| [i as u8; 64])
}

/// [`time_design`] for the design named `name` with the live engine's probe.
pub fn time_named(name: &str, cfg: &IfaceConfig, n: u64) -> Result<Duration, ConfigError> {
    ifaces::with_design!(name, D => time_design::<D, ifaces::NoProbe>(cfg, n))?
}

/// [`time_one_thread`] for the design named `name` with the live engine's probe.
pub fn time_named_one_thread(
    name: &str,
    cfg: &IfaceConfig,
    n: u64,
    echo: bool,
) -> Result<(Duration, Duration), ConfigError> {
    ifaces::with_design!(name, D => time_one_thread::<D, ifaces::NoProbe>(cfg, n, echo))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_design_and_both_floors_hand_over_every_packet() {
        let cfg = IfaceConfig::default();
        assert!(time_pointers(5000, 32) > Duration::ZERO);
        assert!(time_frames(5000, 32) > Duration::ZERO);
        for name in ifaces::DESIGN_NAMES {
            time_named(name, &cfg, 5000).unwrap_or_else(|e| panic!("{name}: {e}"));
            for echo in [false, true] {
                time_named_one_thread(name, &cfg, 5000, echo)
                    .unwrap_or_else(|e| panic!("{name} on one thread, echo {echo}: {e}"));
            }
        }
        assert_eq!(time_named("ring9", &cfg, 10).unwrap_err().option, "iface");
    }
}
