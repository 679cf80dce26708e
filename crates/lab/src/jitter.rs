//! `rxlab jitter`: measure this machine's host noise with the live engine's jitter probe (as sysjitter
//! does) and turn it into a machine profile's `noise`: per CPU a sysjitter-style summary,
//! then the noise of a typical core, at each quantile the median over the CPUs, as the profiles' is.

use anyhow::{Context, Result};
use clap::Args;
use live::jitter::{JitterReport, SHARES};
use plotters::prelude::*;
use sim::noise::NoiseParams;
use std::path::PathBuf;
use traffic::units::parse_duration_ns;

/// Arguments of `rxlab jitter`.
#[derive(Args, Debug)]
pub struct JitterArgs {
    /// How long each CPU's thread spins (sysjitter's --runtime).
    #[arg(long, default_value = "10s")]
    duration: String,
    /// Gaps shorter than this are the loop itself, not interruptions (sysjitter's default: 200ns).
    #[arg(long, default_value = "200ns")]
    threshold: String,
    /// Write jitter.json, noise.toml (a profile's `noise`) and jitter.svg (the gap histogram) here.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Run the probe and print (and write) what it saw.
pub fn run(args: JitterArgs) -> Result<()> {
    let ns = |s: &str, name: &str| {
        parse_duration_ns(s).map_err(|e| anyhow::anyhow!("invalid --{name}: {e}")).and_then(|n| {
            if n == 0 { Err(anyhow::anyhow!("invalid --{name}: give a time above 0, e.g. 10s")) } else { Ok(n) }
        })
    };
    let duration = std::time::Duration::from_nanos(ns(&args.duration, "duration")?);
    let threshold = std::time::Duration::from_nanos(ns(&args.threshold, "threshold")?);
    let report = live::jitter::probe(duration, threshold);
    let noise = typical_core(&report);
    let toml = noise_toml(&noise)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
        println!("\n# a profile's noise: the median CPU at each quantile\n{toml}");
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
        };
        write("jitter.json", serde_json::to_string_pretty(&report)?)?;
        write("noise.toml", toml)?;
        histogram_svg(&report, &dir.join("jitter.svg"))?;
        eprintln!("wrote {}/jitter.json, noise.toml and jitter.svg", dir.display());
    }
    Ok(())
}

/// The noise of a typical CPU: the median rate and, at each quantile, the median length.
pub fn typical_core(r: &JitterReport) -> NoiseParams {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            0.0
        } else if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let rate_hz = median(r.cpus.iter().map(|c| c.rate_hz).collect());
    let mut quantiles: Vec<(f64, f64)> = SHARES
        .iter()
        .enumerate()
        .map(|(k, &p)| (p, median(r.cpus.iter().map(|c| c.quantiles_ns[k] as f64).collect())))
        .collect();
    // Medians of increasing columns increase, but keep the profile's rule explicit.
    for k in 1..quantiles.len() {
        quantiles[k].1 = quantiles[k].1.max(quantiles[k - 1].1);
    }
    NoiseParams { rate_hz, quantiles }
}

/// `noise` as the TOML section of a profile file.
fn noise_toml(n: &NoiseParams) -> Result<String> {
    #[derive(serde::Serialize)]
    struct Section<'a> {
        noise: &'a NoiseParams,
    }
    Ok(toml::to_string(&Section { noise: n })?)
}

/// sysjitter's table: one column per CPU.
fn table(r: &JitterReport) -> String {
    let mut out = format!("{:<16}", "cpu");
    let cell = |v: String| format!("{v:>12}");
    for c in &r.cpus {
        out += &cell(format!("{}{}", c.cpu, if c.pinned { "" } else { " (unpinned)" }));
    }
    out.push('\n');
    let mut row = |name: &str, f: &dyn Fn(&live::jitter::CpuJitter) -> String| {
        out += &format!("{name:<16}");
        for c in &r.cpus {
            out += &cell(f(c));
        }
        out.push('\n');
    };
    row("threshold ns", &|_| r.threshold_ns.to_string());
    row("runtime s", &|c| format!("{:.3}", c.runtime_s));
    row("int_n", &|c| c.interruptions.to_string());
    row("int_n_per_sec", &|c| format!("{:.1}", c.rate_hz));
    for (k, name) in
        ["int_min ns", "int_median ns", "int_90 ns", "int_99 ns", "int_999 ns", "int_9999 ns", "int_max ns"]
            .iter()
            .enumerate()
    {
        row(name, &|c| c.quantiles_ns[k].to_string());
    }
    row("int_total %", &|c| format!("{:.3}", c.share * 100.0));
    out
}

/// A time in ns as an axis label: 500 ns, 2 µs, 50 ms.
fn si_time(ns: f64) -> String {
    let (v, unit) = match ns {
        n if n >= 1e9 => (n / 1e9, "s"),
        n if n >= 1e6 => (n / 1e6, "ms"),
        n if n >= 1e3 => (n / 1e3, "µs"),
        n => (n, "ns"),
    };
    format!("{} {unit}", (v * 10.0).round() / 10.0)
}

/// The gap histogram, one step line per CPU, on log axes.
fn histogram_svg(r: &JitterReport, path: &std::path::Path) -> Result<()> {
    crate::report::font::load()?;
    let top = r
        .cpus
        .iter()
        .flat_map(|c| c.histogram.iter().map(|&(lo, n)| (lo * 2, n)))
        .fold((1, 1), |a, b| (a.0.max(b.0), a.1.max(b.1)));
    let root = SVGBackend::new(path, (640, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("Host noise: gaps over {} ns per CPU", r.threshold_ns), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (r.threshold_ns.max(1) as f64..top.0 as f64).log_scale(),
            (0.5..top.1 as f64 * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("Interruption length")
        .y_desc("Interruptions")
        .x_label_formatter(&|&v| si_time(v))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    // One flat segment per power-of-two bin: a bin with no gaps is left out, not joined across.
    for (k, c) in r.cpus.iter().enumerate() {
        let colour = crate::report::style::color(k);
        let bins = c.histogram.iter().map(|&(lo, n)| vec![(lo as f64, n as f64), (lo as f64 * 2.0, n as f64)]);
        let mut first = true;
        for bin in bins {
            let s = chart.draw_series(LineSeries::new(bin, colour.stroke_width(3)))?;
            if std::mem::take(&mut first) {
                s.label(format!("CPU {}", c.cpu))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(3)));
            }
        }
    }
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw()?;
    root.present().with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use live::jitter::CpuJitter;

    fn cpu(rate: f64, q: [u64; 7]) -> CpuJitter {
        CpuJitter {
            cpu: 0,
            pinned: true,
            runtime_s: 1.0,
            interruptions: rate as u64,
            rate_hz: rate,
            share: 0.0,
            quantiles_ns: q.to_vec(),
            histogram: vec![],
        }
    }

    #[test]
    fn the_typical_core_is_the_median_at_each_quantile_and_a_valid_profile_noise() {
        let r = JitterReport {
            threshold_ns: 200,
            cpus: vec![
                cpu(1000.0, [1300, 1400, 1500, 2000, 5000, 30_000, 40_000]),
                cpu(1010.0, [1200, 1300, 1400, 5000, 20_000, 180_000, 350_000]),
                cpu(1002.0, [1250, 1350, 1450, 2400, 15_000, 40_000, 50_000]),
            ],
        };
        let n = typical_core(&r);
        n.validate().unwrap();
        assert_eq!(n.rate_hz, 1002.0);
        assert_eq!(n.quantiles[3], (0.99, 2400.0));
        assert_eq!(n.quantiles[6], (1.0, 50_000.0));
        let back: toml::Table = toml::from_str(&noise_toml(&n).unwrap()).unwrap();
        assert!(back["noise"]["quantiles"].as_array().unwrap().len() == 7);
    }
}
