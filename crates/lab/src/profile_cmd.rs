//! `rxlab profile`: list the built-in machine profiles, print one as a profile file to copy and edit,
//! check a file and print what follows from it, and write a profile of this host.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use sim::Profile;
use sim::pcie::Pcie;
use sim::profile_file;
use std::path::PathBuf;
use wire::frame::WIRE_OVERHEAD;

/// `rxlab profile` subcommands.
#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    /// The built-in profiles, one line each.
    List,
    /// Print a profile as a complete profile file, each value's source as a comment (a built-in name,
    /// or a file, printed with its base filled in).
    Show {
        /// Built-in profile name or profile file `PATH.toml`.
        profile: String,
    },
    /// Check a profile file and print what follows from it: DDIO and LLC capacity, PCIe goodput, line
    /// rate and each core's cycle budget per packet.
    Check {
        /// Profile file (`PATH.toml`) or built-in name.
        profile: String,
    },
    /// Write a profile of this host: cores, caches and frequency read from /sys and /proc, the rest
    /// (latencies, DRAM, PCIe, NIC) from a built-in base, each value's source as a comment.
    Detect(DetectArgs),
}

/// Arguments of `rxlab profile detect`.
#[derive(Args, Debug)]
pub struct DetectArgs {
    /// Built-in profile giving what cannot be detected.
    #[arg(long, default_value = "r640-silver4216")]
    base: String,
    /// File to write; the profile is named after it.
    #[arg(short, long, default_value = "this-machine.toml")]
    out: PathBuf,
}

/// Run `rxlab profile`.
pub fn run(cmd: ProfileCommand) -> Result<()> {
    match cmd {
        ProfileCommand::List => {
            for name in sim::PROFILE_NAMES {
                println!("{}", Profile::by_name(name)?);
            }
            println!("\n`rxlab profile show NAME > mine.toml` gives a file to edit; run it with --profile mine.toml");
        }
        ProfileCommand::Show { profile } => print!("{}", show(&profile)?),
        ProfileCommand::Check { profile } => print!("{}", facts(&Profile::named_or_file(&profile)?)),
        ProfileCommand::Detect(a) => detect(&a)?,
    }
    Ok(())
}

/// The profile file of built-in profile or file `spec`.
fn show(spec: &str) -> Result<String> {
    let p = Profile::named_or_file(spec)?;
    let header = format!(
        "Machine profile {name} (rxlab profile show {spec}).\n\
         Copy it, change what differs on your machine, and run it with --profile FILE.toml; or write a file\n\
         with base = \"{base}\" and only the fields you change. `rxlab profile check FILE` validates it.\n\
         Field meanings and units: crates/sim/README.md, \"Profile files\".",
        name = p.name,
        base = if spec.ends_with(".toml") { sim::PROFILE_NAMES[0] } else { spec },
    );
    Ok(profile_file::to_toml(&p, &header, &sim::profile::sources(spec)))
}

/// What follows from a profile, for people.
pub fn facts(p: &Profile) -> String {
    let mib = |b: f64| b / f64::from(1 << 20);
    let llc = p.cpu.llc;
    let ddio = ddio_bytes(p);
    let pcie = Pcie::new(&p.pcie);
    let tlp = sim::pcie::tlp_gbps(&p.pcie) * f64::from(p.pcie.links);
    let wire_gbps = f64::from(p.nic.ports) * p.nic.port_gbps;
    let mut out = format!("{p}\n");
    out += &format!(
        "LLC: {:.2} MiB in {} ways of {:.2} MiB ({} sets of 64 B lines)\n",
        mib(llc.size as f64),
        llc.ways,
        mib((llc.size / llc.ways) as f64),
        llc.sets()
    );
    out +=
        &format!("DDIO: {} of {} ways = {:.2} MiB the NIC may allocate in\n", p.ddio_ways, llc.ways, mib(ddio as f64));
    out += &format!(
        "PCIe: {:.1} Gb/s of TLPs per direction over {} link(s) of Gen {} x{}\n",
        tlp,
        p.pcie.links,
        pcie_gen(p.pcie.gts),
        p.pcie.lanes
    );
    out +=
        &format!("NIC: {} x {} GbE = {wire_gbps} Gb/s, pipeline {} Mpps\n", p.nic.ports, p.nic.port_gbps, p.nic.mpps);
    for size in [64u64, 1500] {
        let to_host = tlp * size as f64 / pcie.write_wire(size) as f64;
        let to_nic = tlp * size as f64 / pcie.completion_wire(size) as f64;
        let line_mpps = wire_gbps * 1e3 / ((size as usize + WIRE_OVERHEAD) * 8) as f64;
        let mpps = line_mpps.min(p.nic.mpps);
        let budget = p.cpu.freq_ghz * 1e3 / (mpps / p.cpu.cores as f64);
        out += &format!(
            "{size:>4} B frames: PCIe goodput {to_host:.1} Gb/s to the host (DMA writes), {to_nic:.1} Gb/s to the \
             NIC (read completions); line rate {line_mpps:.2} Mpps{}; {budget:.0} cycles per packet per core on \
             {} cores\n",
            if mpps < line_mpps { format!(" (the NIC pipeline caps it at {mpps:.2})") } else { String::new() },
            p.cpu.cores
        );
    }
    let noise = |n: &sim::noise::NoiseParams| {
        let longest = n.length_ns(1.0) / 1e3;
        format!(
            "{:.0} interruptions/s, {:.2} % of the time, longest {longest:.1} us",
            n.rate_hz,
            n.busy_share() * 100.0
        )
    };
    out += &format!("Noise per core: {}\n", noise(&p.noise));
    if let Some(h) = &p.housekeeping {
        out += &format!("Noise of core 0 when workers take every core (housekeeping): {}\n", noise(h));
    }
    out
}

/// Bytes of the LLC that NIC writes may allocate in.
pub fn ddio_bytes(p: &Profile) -> usize {
    p.cpu.llc.size / p.cpu.llc.ways.max(1) * p.ddio_ways
}

/// The PCIe generation of a per-lane rate.
fn pcie_gen(gts: f64) -> u32 {
    (gts / 2.5).log2().round() as u32 + 1
}

/// Write a profile of this host to `a.out`.
fn detect(a: &DetectArgs) -> Result<()> {
    let base = Profile::by_name(&a.base)?;
    let host = sim::host::read().map_err(|e| anyhow::anyhow!("cannot detect this host: {e}"))?;
    let name = a.out.file_stem().and_then(|s| s.to_str()).unwrap_or("this-machine");
    let p = sim::host::profile(&host, &base, name)?;
    let base_sources = sim::profile::sources(&a.base);
    let detected = sim::host::DETECTED;
    let related =
        |path: &str, d: &str| path == d || path.starts_with(&format!("{d}.")) || d.starts_with(&format!("{path}."));
    let inherited: Vec<(&str, String)> = base_sources
        .iter()
        .filter(|(path, _)| !detected.iter().any(|(d, _)| related(path, d)))
        .map(|(path, s)| (*path, format!("not detected: from {}: {s}", a.base)))
        .collect();
    let sources: Vec<(&str, &str)> =
        detected.iter().copied().chain(inherited.iter().map(|(p, s)| (*p, s.as_str()))).collect();
    let memory = host.mem_bytes.map_or("unknown".to_string(), |b| format!("{:.1} GiB", b as f64 / f64::from(1 << 30)));
    let header = format!(
        "Machine profile of this host (rxlab profile detect --base {}).\n\
         Detected: cores, frequency, L1d, L2 and LLC sizes and ways. Installed memory: {memory}.\n\
         Not detected, from {}: cache latencies, DDIO, DRAM bandwidth and latency (not readable from /sys or\n\
         /proc), PCIe and NIC (the live engine's NIC is a thread). Edit them to match your hardware.",
        a.base, a.base
    );
    let text = profile_file::to_toml(&p, &header, &sources);
    std::fs::write(&a.out, text).with_context(|| format!("cannot write {}: check the path", a.out.display()))?;
    println!("{p}\nwrote {}", a.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r640_facts() {
        let f = facts(&Profile::r640_silver4216());
        assert!(f.contains("DDIO: 2 of 11 ways = 4.00 MiB"), "{f}");
        assert!(f.contains("line rate 297.62 Mpps"), "{f}");
        assert!(f.contains("1500 B frames") && f.contains("line rate 16.45 Mpps"), "{f}");
        assert!(f.contains("Noise per core: 1002 interruptions/s") && f.contains("longest 47.5 us"), "{f}");
        assert!(f.contains("(housekeeping): 1002 interruptions/s") && f.contains("longest 347.1 us"), "{f}");
        assert_eq!(pcie_gen(8.0), 3);
        assert_eq!(pcie_gen(32.0), 5);
    }

    #[test]
    fn shown_built_in_profiles_read_back() {
        for name in sim::PROFILE_NAMES {
            let text = show(name).unwrap();
            assert_eq!(profile_file::parse(&text, "t", "t").unwrap(), Profile::by_name(name).unwrap());
        }
    }
}
