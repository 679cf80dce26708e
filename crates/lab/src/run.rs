//! `rxlab run`: run an experiment's points, or one point given by flags. With no file and no flags it
//! runs the built-in default experiment (`experiments/default.toml`).

use crate::experiment::Experiment;
use crate::params::Params;
use crate::{bar, compare, sweep};
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `rxlab run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Experiment file. Without one: the built-in headline comparison if no flag is given, else one run
    /// of the flags.
    experiment: Option<PathBuf>,
    /// Only the point with this id (the `id` column of results.csv).
    #[arg(long)]
    point: Option<String>,
    /// Parallel runs: the points, and each point's trials [default: the machine's cores].
    #[arg(long)]
    jobs: Option<usize>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Parameters; each overrides the experiment file's value for every point.
    #[command(flatten)]
    params: Params,
}

/// Run `rxlab run`.
pub fn run(a: RunArgs) -> Result<()> {
    let exp = match &a.experiment {
        Some(path) => Experiment::load(path)?,
        None if a.params.is_empty() => Experiment::default_experiment(),
        None => Experiment::parse("run", "")?,
    };
    let mut points = exp.points(&a.params);
    if let Some(id) = &a.point {
        points.retain(|p| &p.id == id);
        if points.is_empty() {
            bail!("invalid --point: no point '{id}' in experiment {}; the ids are in results.csv", exp.name);
        }
    }
    if let [only] = points.as_slice() {
        let outcome = sweep::pool(a.jobs)?.install(|| bar::run_point(&only.params))?;
        let text = if a.json { serde_json::to_string_pretty(&outcome.json)? } else { outcome.text };
        println!("{text}");
        return Ok(());
    }
    let start = Instant::now();
    let rows = sweep::run_points(&points.iter().collect::<Vec<_>>(), a.jobs, None)?;
    if let Some(bad) = rows.iter().find(|r| r.error.is_some()) {
        bail!("point {} ({}): {}", bad.id, bad.label(), bad.error.as_deref().unwrap_or_default());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if !exp.meta.title.is_empty() {
        println!("{}", exp.meta.title);
    }
    println!("{}", compare::table(&rows));
    println!(
        "{} points in {:.1} s; `rxlab run FILE --point ID --json` shows one in full",
        rows.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
