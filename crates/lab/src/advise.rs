//! `rxlab advise`: rxBisect's sizing rules (001 §4.5) and each design's I/O working set on a machine
//! profile (built-in or a file), with warnings where privRing's rings outgrow the DDIO ways or the LLC,
//! and a recommendation in plain words.

use anyhow::{Result, bail};
use clap::Args;
use ifaces::RingSize;
use sim::Profile;

/// Bytes of one packet buffer in the working-set arithmetic (001 §4.5 uses 1500 B).
const BUF: usize = 1500;
/// The vendor-enforced minimum Ax ring (001 §4.5: 64 on NVIDIA NICs).
const AX_MIN: usize = 64;
/// Linux mlx5e's smallest Striding RQ stride (`MLX5_MPWRQ_DEF_LOG_STRIDE_SZ`, used where a packet need not
/// fit one stride): a ring of strides then holds as many small packets as strides, and a 1500 B packet
/// takes 24 of them.
const LINUX_STRIDE: usize = 64;

/// Arguments of `rxlab advise`.
#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// Machine profile: a built-in name or a profile file `PATH.toml`.
    #[arg(long, default_value = "r640-silver4216")]
    profile: String,
    /// Cores receiving packets (one Ax ring each).
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, default_value_t = 16)]
    cores: usize,
    /// NICs the cores are divided among.
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, default_value_t = 1)]
    nics: usize,
    /// Bx ring size (001 §4.5: 1024 absorbs a 100 Gbps burst).
    #[arg(long, default_value = "1024")]
    bx: RingSize,
    /// Receive ring size per core for the other designs.
    #[arg(long, default_value = "1024")]
    ring: RingSize,
    /// shRing's sharing degree.
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, default_value_t = 8)]
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
    let p = Profile::named_or_file(&a.profile)?;
    if a.cores == 0 || a.nics == 0 || !a.cores.is_multiple_of(a.nics) {
        bail!("invalid --cores/--nics: give at least one of each, with --nics dividing --cores");
    }
    if a.cores > p.cpu.cores {
        bail!("invalid --cores: profile {} has {} cores", p.name, p.cpu.cores);
    }
    let llc = p.cpu.llc.size;
    let ddio = crate::profile_cmd::ddio_bytes(&p);
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
    let mprq = ifaces::MprqConfig::default();
    let xdp = ifaces::AfXdpConfig::default();
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
        // Multi-Packet RQ: the ring counts strides (DPDK's nb_rx_desc); the NIC may write every posted
        // stride, up to a packet's length of it.
        (
            format!("MPRQ, {} B strides ({} x {ring}, DPDK)", mprq.stride_size, a.cores),
            a.cores * ring * (mprq.stride_size as usize).min(BUF),
        ),
        (format!("MPRQ, {LINUX_STRIDE} B strides ({} x {ring})", a.cores), a.cores * ring * LINUX_STRIDE),
        // AF_XDP: the chunks posted on the FILL rings are the ones the NIC may write (rxBisect's Ax rings).
        (format!("AF_XDP ({} x FILL {})", a.cores, xdp.fill), a.cores * xdp.fill.len() * BUF),
        (format!("AF_XDP, shared FILL (1 x {})", xdp.fill), xdp.fill.len() * BUF),
    ];
    println!("\nI/O working set at ring {ring} (buffers the NIC may write, {BUF} B each; MPRQ: strides):");
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
    println!("\n{}", explain(&a, &p.name, ddio, llc));
    Ok(())
}

/// The largest power-of-two privRing ring of at least 64 whose buffers on `cores` fit in `ddio` bytes.
fn largest_ring(cores: usize, ddio: usize) -> Option<usize> {
    (6..=15).map(|s| 1usize << s).take_while(|r| cores * r * BUF <= ddio).last()
}

/// The smallest sharing degree (a divisor of `cores`) whose shared rings of `ring` fit in `ddio` bytes.
fn smallest_share(cores: usize, ring: usize, ddio: usize) -> Option<usize> {
    (1..=cores).filter(|s| cores.is_multiple_of(*s)).find(|s| cores / s * ring * BUF <= ddio)
}

/// The recommendation in plain words: what the working sets mean on this machine and which design and
/// ring sizes to use.
fn explain(a: &AdviseArgs, name: &str, ddio: usize, llc: usize) -> String {
    let (k, ring, bx) = (a.cores, a.ring.get() as usize, a.bx.get() as usize);
    let priv_ws = k * ring * BUF;
    let mut out = format!(
        "In plain words: the NIC writes each packet into a buffer the driver posted, and a design's I/O \
         working set is every buffer it may write before software reposts it. On {name} the NIC's writes may \
         only allocate in the DDIO ways ({}); a larger working set evicts its own packets before the cores \
         read them (leaky DMA), and one larger than the LLC ({}) sends the NIC's writes and reads to DRAM.\n",
        mib(ddio),
        mib(llc)
    );
    let advice = if priv_ws <= ddio {
        format!(
            "privRing with {k} rings of {ring} keeps {} of buffers, within the DDIO ways: use privRing with \
             rings of {ring}. Sharing rings (shRing) or splitting them (rxBisect) would only add work.",
            mib(priv_ws)
        )
    } else if let Some(ax) = largest_ax(k, ddio).filter(|ax| k / a.nics * ax >= bx) {
        format!(
            "privRing with {k} rings of {ring} needs {}, more than the DDIO ways hold. Use rxBisect with \
             |Ax| = {ax} and |Bx| = {bx}: the NIC only writes into the {k} x {ax} buffers the Ax rings hold \
             ({}, within the DDIO ways), while each NIC's Bx ring still absorbs a burst of {bx} packets \
             ({} x {ax} >= {bx}).",
            mib(priv_ws),
            mib(k * ax * BUF),
            k / a.nics
        )
    } else if let Some(s) = smallest_share(k, ring, ddio).filter(|s| *s > 1) {
        format!(
            "privRing with {k} rings of {ring} needs {}, more than the DDIO ways hold, and rxBisect cannot \
             both fit them and absorb a burst of {bx}. Use shRing with {s} cores per ring ({} shared rings of \
             {ring}, {}): the smallest sharing that fits, since every core more on a ring adds lock contention.",
            mib(priv_ws),
            k / s,
            mib(k / s * ring * BUF)
        )
    } else {
        format!(
            "No design keeps rings of {ring} on {k} cores within the DDIO ways ({} for privRing). Use fewer \
             cores per socket, more DDIO ways (ddio_ways in the profile) or smaller rings: privRing fits with \
             rings of {}.",
            mib(priv_ws),
            largest_ring(k, ddio).map_or("none of 64 or more".into(), |r| r.to_string())
        )
    };
    out.push_str(&advice);
    out
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

    #[test]
    fn ring_and_sharing_that_fit() {
        // 16 x 128 x 1500 B = 3 MiB fits 4 MiB; 16 x 256 does not. Rings of 1024: 8 cores per ring fit
        // (2 x 1.46 MiB), 4 per ring do not (4 x 1.46 MiB).
        assert_eq!(largest_ring(16, 4 << 20), Some(128));
        assert_eq!(smallest_share(16, 1024, 4 << 20), Some(8));
        assert_eq!(largest_ring(1000, 4 << 20), None);
    }
}
