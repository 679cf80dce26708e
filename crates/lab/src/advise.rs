//! `rxlab advise`: rxBisect's sizing rules (001 §4.5) and each design's I/O working set on a machine
//! profile, with warnings where privRing's rings outgrow the DDIO ways or the LLC.

use anyhow::{Result, bail};
use clap::Args;
use ifaces::RingSize;
use sim::Profile;

/// Bytes of one packet buffer in the working-set arithmetic (001 §4.5 uses 1500 B).
const BUF: usize = 1500;
/// The vendor-enforced minimum Ax ring (001 §4.5: 64 on NVIDIA NICs).
const AX_MIN: usize = 64;

/// Arguments of `rxlab advise`.
#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// Machine profile.
    #[arg(long, default_value = "r640-silver4216")]
    profile: String,
    /// Cores receiving packets (one Ax ring each).
    #[arg(long, default_value_t = 16)]
    cores: usize,
    /// NICs the cores are divided among.
    #[arg(long, default_value_t = 1)]
    nics: usize,
    /// Bx ring size (001 §4.5: 1024 absorbs a 100 Gbps burst).
    #[arg(long, default_value = "1024")]
    bx: RingSize,
    /// Receive ring size per core for the other designs.
    #[arg(long, default_value = "1024")]
    ring: RingSize,
    /// shRing's sharing degree.
    #[arg(long, default_value_t = 8)]
    share: usize,
}

fn mib(bytes: usize) -> String {
    format!("{:.2} MiB", bytes as f64 / (1 << 20) as f64)
}

/// Where a working set lands: in the DDIO ways, in the LLC only, or beyond it.
fn fits(bytes: usize, ddio: usize, llc: usize) -> &'static str {
    if bytes <= ddio {
        "fits the DDIO ways"
    } else if bytes <= llc {
        "exceeds the DDIO ways (leaky DMA)"
    } else {
        "exceeds the LLC (DMA to DRAM)"
    }
}

/// The largest power-of-two |Ax| with `k_all`·|Ax|·1500 B within `ddio` (condition 1), or `None` when
/// not even the minimum fits.
pub fn largest_ax(k_all: usize, ddio: usize) -> Option<usize> {
    let mut ax = AX_MIN;
    if k_all * ax * BUF > ddio {
        return None;
    }
    while k_all * ax * 2 * BUF <= ddio {
        ax *= 2;
    }
    Some(ax)
}

/// Run `rxlab advise`.
pub fn run(a: AdviseArgs) -> Result<()> {
    let p = Profile::by_name(&a.profile)?;
    if a.cores == 0 || a.nics == 0 || !a.cores.is_multiple_of(a.nics) {
        bail!("invalid --cores/--nics: give at least one of each, with --nics dividing --cores");
    }
    if a.cores > p.cpu.cores {
        bail!("invalid --cores: profile {} has {} cores", p.name, p.cpu.cores);
    }
    let llc = p.cpu.llc.size;
    let ddio = llc * p.ddio_ways / p.cpu.llc.ways.max(1);
    let (ring, bx) = (a.ring.get() as usize, a.bx.get() as usize);
    println!("{}: LLC {} ({} ways), DDIO {} ways = {}", p.name, mib(llc), p.cpu.llc.ways, p.ddio_ways, mib(ddio));
    println!("\nrxBisect sizing (001 §4.5), k = {} Ax rings over {} NIC(s), |Bx| = {bx}:", a.cores, a.nics);
    match largest_ax(a.cores, ddio) {
        None => println!(
            "  no |Ax| >= {AX_MIN} fits: {} x {AX_MIN} x {BUF} B > DDIO; use fewer cores per socket or more DDIO ways",
            a.cores
        ),
        Some(ax) => {
            let per_nic = a.cores / a.nics;
            println!(
                "  largest |Ax| with k x |Ax| x {BUF} B <= DDIO: {ax} ({} of I/O working set)",
                mib(a.cores * ax * BUF)
            );
            let ok = per_nic * ax >= bx;
            println!(
                "  burst absorption k_nic x |Ax| = {per_nic} x {ax} = {} {} |Bx| = {bx}{}",
                per_nic * ax,
                if ok { ">=" } else { "<" },
                if ok { "" } else { "  WARNING: both conditions cannot hold; prefer |Ax| for DDIO or lower |Bx|" }
            );
        }
    }
    let enso = ifaces::enso::EnsoConfig::default();
    let split = ifaces::nicmem::NicMemConfig::default().split_at;
    let shared_rings = a.cores.div_ceil(a.share.clamp(1, a.cores));
    let rows: Vec<(String, usize)> = vec![
        (format!("privRing ({} x {ring})", a.cores), a.cores * ring * BUF),
        (format!("shRing/{} ({shared_rings} x {ring})", a.share), shared_rings * ring * BUF),
        (
            format!("rxBisect ({} x |Ax| {})", a.cores, largest_ax(a.cores, ddio).unwrap_or(AX_MIN)),
            a.cores * largest_ax(a.cores, ddio).unwrap_or(AX_MIN) * BUF,
        ),
        (format!("COREC (1 x {ring})"), ring * BUF),
        (
            format!("Enso ({} x {} pipes of {})", a.cores, enso.pipes_per_core, mib(enso.pipe_size)),
            a.cores * enso.pipes_per_core * enso.pipe_size,
        ),
        (format!("nicmem (headers only, {} x {ring} x {split} B)", a.cores), a.cores * ring * split),
    ];
    println!("\nI/O working set at ring {ring} (buffers the NIC may write, {BUF} B each):");
    for (name, bytes) in &rows {
        println!("  {name:<44} {:>11}  {}", mib(*bytes), fits(*bytes, ddio, llc));
    }
    println!("\nprivRing by ring size on {} cores:", a.cores);
    for r in (6..=12).map(|s| 1usize << s) {
        let ws = a.cores * r * BUF;
        let verdict = fits(ws, ddio, llc);
        let warn = if ws > ddio { "  WARNING" } else { "" };
        println!("  ring {r:>5}: {:>11}  {verdict}{warn}", mib(ws));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r640_sixteen_cores_gets_ax_128() {
        // 22 MiB, 11 ways, 2 DDIO ways = 4 MiB; 16 x 128 x 1500 B = 3 MiB fits, 16 x 256 x 1500 does not.
        assert_eq!(largest_ax(16, 4 << 20), Some(128));
        assert_eq!(largest_ax(1000, 4 << 20), None);
    }
}
