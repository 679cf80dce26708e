//! Ensō (paper 004): a streaming NIC interface. Each thread has RX/TX pipes, data rings the NIC writes
//! messages into back to back, and one notification buffer for all of them (§4.1); notifications are paced
//! reactively (§4.2, Figure 5) or sent per packet, with optional prefetching.
//!
//! Read in this order: [`mirror`] (the double mapping, §5.1), [`pipe`] (layout, Head_SW/Tail_NIC and the
//! reactive protocol), [`notif`] (notification buffers), [`device`] (the NIC), [`api`] (Ensō's software
//! API), [`driver`] (the burst adapter the engines drive), [`ensogen`] (EnsōGen's transmit path, Appendix B).
//!
//! Registry names: `enso` (the options as configured, reactive by default), `enso-perpkt` (a notification
//! per packet), `enso-prefetch` (notification prefetching on), `enso-chaotic` (Chaotic Ensō, §7.2.3: gaps of
//! up to [`EnsoConfig::chaotic_gap`] quanta between messages). The RX notification buffer has `--ring`
//! entries and the TX notification buffer `--tx-ring` entries.

pub mod api;
pub mod device;
pub mod driver;
pub mod ensogen;
pub mod mirror;
pub mod notif;
pub mod pipe;

#[cfg(all(test, loom))]
mod loom_tests;

use crate::design::{ConfigError, Design, IfaceConfig};
use crate::pool::SharedPool;
use crate::sync::{Arc, AtomicU64};
pub use device::EnsoDevice;
pub use driver::EnsoDriver;
use pipe::{Framing, PipeNic, PipeShared, PipeSw, QUANTUM, TxPipeSw};

/// When the NIC notifies software of new data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifyMode {
    /// Reactive notifications (§4.2, Figure 5).
    #[default]
    Reactive,
    /// One notification per packet, for comparison.
    PerPacket,
}

/// How the application finds the pipe to read next: the two loops of Ensō's examples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Visit {
    /// `Device::NextRxTxPipeToRecv` (software/src/enso/pipe.cpp): the next pipe a notification names
    /// (`echo_event.cpp`, and the MICA, log monitor and NitroSketch servers of the evaluation).
    #[default]
    Notified,
    /// Every pipe in turn, `PeekPkts` on each (`echo.cpp`, `echo_copy.cpp`, `echo_prefetch.cpp`, the
    /// evaluation's `enso_maglev.cpp`): a visit processes the TX completions of all the thread's pipes
    /// (`Device::ProcessCompletions`), reads whatever notifications arrived (`RxPipe::Peek` calls
    /// `get_new_tails`) and takes what its pipe's pending tail announces, if anything.
    RoundRobin,
}

/// Ensō's options (`IfaceConfig::enso`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnsoConfig {
    /// Bytes of each pipe: a multiple of the page size and of the 64-byte quantum.
    pub pipe_size: usize,
    /// RX/TX pipes per thread, all on the thread's one notification buffer.
    pub pipes_per_core: usize,
    /// Notification pacing.
    pub notify: NotifyMode,
    /// How the application visits its pipes.
    pub visit: Visit,
    /// Notification prefetching (§4.2): ask for a fresh notification for the pipe software reads next
    /// before consuming what the last one announced (with [`Visit::RoundRobin`], the next pipe in turn
    /// after a visit that found data, as `echo_prefetch.cpp` does).
    pub prefetch: bool,
    /// Chaotic Ensō's largest gap between messages, in quanta (used by `enso-chaotic`).
    pub chaotic_gap: u32,
    /// Send each received message by copying it into the thread's TX pipe, as Ensō's forwarding example
    /// does (§7.2.2, Figure 9: "copies incoming packets to a different TX Ensō Pipe"), instead of in
    /// place from its RX/TX pipe.
    pub tx_copy: bool,
}

impl Default for EnsoConfig {
    /// 2 MiB pipes (EnsōGen's, Appendix B), two per thread, reactive notifications read as they name
    /// pipes, without prefetching, chaotic gaps of up to 4 quanta, messages sent in place.
    fn default() -> Self {
        EnsoConfig {
            pipe_size: 2 << 20,
            pipes_per_core: 2,
            notify: NotifyMode::Reactive,
            visit: Visit::Notified,
            prefetch: false,
            chaotic_gap: 4,
            tx_copy: false,
        }
    }
}

/// The Ensō design; `V` picks the registry variant (see the module docs). Use the aliases.
#[derive(Debug)]
pub struct EnsoDesign<const V: u8>;

/// `enso`.
pub type Enso = EnsoDesign<0>;
/// `enso-perpkt`.
pub type EnsoPerPacket = EnsoDesign<1>;
/// `enso-prefetch`.
pub type EnsoPrefetch = EnsoDesign<2>;
/// `enso-chaotic`.
pub type EnsoChaotic = EnsoDesign<3>;

impl<const V: u8> EnsoDesign<V> {
    /// The options this variant runs with, and its message layout.
    fn options(cfg: &IfaceConfig) -> (EnsoConfig, Framing) {
        let mut o = cfg.enso;
        match V {
            1 => o.notify = NotifyMode::PerPacket,
            2 => o.prefetch = true,
            _ => {}
        }
        let gap_max = if V == 3 { o.chaotic_gap } else { 0 };
        (o, Framing { gap_max })
    }
}

/// Check Ensō's options against `cfg`.
fn validate(o: &EnsoConfig, cfg: &IfaceConfig) -> Result<(), ConfigError> {
    let page = mirror::page_size();
    if o.pipe_size == 0 || !o.pipe_size.is_multiple_of(page) || !o.pipe_size.is_multiple_of(QUANTUM) {
        return Err(ConfigError::new(
            "enso-pipe-size",
            format!(
                "pipe size {} B must be a non-zero multiple of the page size ({page} B) and of the {QUANTUM}-byte quantum (try {})",
                o.pipe_size,
                o.pipe_size.div_ceil(page).max(1) * page
            ),
        ));
    }
    if o.pipes_per_core == 0 || o.pipes_per_core > cfg.ring.len() || o.pipes_per_core >= 1 << 15 {
        return Err(ConfigError::new(
            "enso-pipes",
            format!(
                "need between 1 and {} pipes per core (the notification buffer has --ring {} entries), got {}",
                cfg.ring.len().min((1 << 15) - 1),
                cfg.ring,
                o.pipes_per_core
            ),
        ));
    }
    if o.chaotic_gap > 64 {
        return Err(ConfigError::new(
            "enso-chaotic-gap",
            format!("chaotic gaps of up to 64 quanta, got {}", o.chaotic_gap),
        ));
    }
    Ok(())
}

impl<const V: u8> Design for EnsoDesign<V> {
    const NAME: &'static str = match V {
        0 => "enso",
        1 => "enso-perpkt",
        2 => "enso-prefetch",
        _ => "enso-chaotic",
    };
    /// Ensō's kernel module maps the FPGA's BAR uncached (`pgprot_noncached` in
    /// software/kernel/linux/intel_fpga_pcie_chr.c), and the library writes Head_SW, the notification
    /// heads and the TX tail with plain stores behind a compiler barrier (`DevBackend::mmio_write32`).
    const UNCACHED_REGISTERS: bool = true;
    type Device = EnsoDevice;
    type Driver = EnsoDriver;

    /// Pipes hold received packets; pool buffers serve only apps that build packets (responses).
    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        (cfg.cores * (cfg.cache * 3 / 2 + 2 * cfg.burst) + cfg.burst) as u32
    }

    fn build(cfg: &IfaceConfig, _pool: &Arc<SharedPool>) -> Result<(EnsoDevice, Vec<EnsoDriver>), ConfigError> {
        cfg.validate_common()?;
        let (o, framing) = Self::options(cfg);
        validate(&o, cfg)?;
        let mut threads = Vec::with_capacity(cfg.cores);
        let mut drivers = Vec::with_capacity(cfg.cores);
        for _ in 0..cfg.cores {
            let all = (0..=o.pipes_per_core)
                .map(|_| mirror::Mirror::new(o.pipe_size).map(PipeShared::new))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ConfigError::new("enso-pipe-size", e.to_string()))?;
            let rx_pipes = &all[..o.pipes_per_core];
            let (nic_notif, sw_notif) = notif::rx_notification_buffer(cfg.ring, o.pipes_per_core);
            let (sw_tx, nic_tx) = notif::tx_notification_buffer(cfg.tx_ring);
            let taken = Arc::new(AtomicU64::new(0));
            let dev = api::Device::new(
                rx_pipes.iter().map(|s| PipeSw::new(s.clone())).collect(),
                sw_notif,
                sw_tx,
                TxPipeSw::new(all[o.pipes_per_core].clone()),
                o,
            );
            drivers.push(EnsoDriver::new(dev, taken.clone()));
            threads.push(device::NicThread {
                rx: rx_pipes.iter().map(|s| PipeNic::new(s.clone())).collect(),
                all,
                notif: nic_notif,
                tx: nic_tx,
                tx_cur: None,
                written: 0,
                taken,
            });
        }
        Ok((EnsoDevice::new(threads, o, framing), drivers))
    }
}
