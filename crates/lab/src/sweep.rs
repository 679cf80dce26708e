//! `rxlab sweep`: every point of an experiment in parallel (rayon, one run per core; a point's trials too),
//! with a progress bar, resumable from `points.jsonl`, optionally one shard of a larger sweep.

use crate::experiment::{Experiment, Point};
use crate::params::Params;
use crate::results::{self, EXPERIMENT_FILE, PointLog, Row};
use crate::{cancel, point, space};
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;
use traffic::atomic;

/// Bytes a point's results take at most: its line of `points.jsonl` and its row of `results.json` and
/// `results.csv` (a simulated point's line is about 6 kB).
const ROW_BYTES: u64 = 32 * 1024;

/// `--shard i/n`: the points whose index is `i - 1` modulo `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}': write i/n with 1 <= i <= n, e.g. 2/8");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether point `index` belongs to this shard.
    pub fn holds(&self, index: usize) -> bool {
        index % self.count == self.index - 1
    }
}

/// Arguments of `rxlab sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Experiment file.
    experiment: PathBuf,
    /// Results directory [default: results/NAME].
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Run only the i-th of n disjoint slices of the points (for job arrays); join with `rxlab merge`.
    #[arg(long)]
    shard: Option<Shard>,
    /// Parallel runs: the points, and each point's trials [default: the machine's cores].
    #[arg(long)]
    jobs: Option<usize>,
    /// Parameters that override every point's.
    #[command(flatten)]
    flags: Params,
}

/// Run `rxlab sweep`.
pub fn run(a: SweepArgs) -> Result<()> {
    let exp = Experiment::load(&a.experiment)?;
    let dir = a.out.unwrap_or_else(|| Path::new("results").join(&exp.name));
    let points: Vec<Point> =
        exp.points(&a.flags).into_iter().filter(|p| a.shard.is_none_or(|s| s.holds(p.index))).collect();
    let kept = [dir.clone()];
    cancel::keeps(move || results::kept_points(&kept, &kept[0].join(results::POINTS_FILE)));
    let rows = sweep(&exp, &points, &dir, a.jobs, &Known::new())?;
    println!("{}", crate::compare::table(&rows));
    println!("{} points in {} (results.csv, results.json)", rows.len(), dir.display());
    Ok(())
}

/// Finished rows of this build by point id, from other experiments' runs: a point found there is the
/// same run (same parameters, seeds and build: the simulator is deterministic), so it is taken, not run
/// again ([`crate::reproduce`] keeps them across its experiments).
pub type Known = HashMap<String, Row>;

/// Run the `points` of `exp` that `dir` does not hold yet (taking those `known` holds), and write `dir`'s
/// tables for all of them.
pub fn sweep(exp: &Experiment, points: &[Point], dir: &Path, jobs: Option<usize>, known: &Known) -> Result<Vec<Row>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}: check the path", dir.display()))?;
    let exp_path = dir.join(EXPERIMENT_FILE);
    atomic::write(&exp_path, &exp.source).with_context(|| format!("cannot write {}", exp_path.display()))?;
    let (done, stale): (Vec<Row>, Vec<Row>) =
        results::finished(results::load_points(dir)?).into_iter().partition(|r| r.build == crate::build::id());
    if !stale.is_empty() {
        eprintln!(
            "note: {} finished points in {} come from another rxlab build; running them again",
            stale.len(),
            dir.display()
        );
    }
    let done_ids: HashSet<&str> = done.iter().map(|r| r.id.as_str()).collect();
    let pending: Vec<&Point> = points.iter().filter(|p| !done_ids.contains(p.id.as_str())).collect();
    space::ensure(
        dir,
        (points.len() as u64 + pending.len() as u64) * ROW_BYTES,
        &format!("the results of {} points", points.len()),
        "free some space or give another --out",
    )?;
    let log = PointLog::open(dir)?;
    let (taken, to_run): (Vec<&Point>, Vec<&Point>) = pending.iter().partition(|p| known.contains_key(&p.id));
    let mut fresh = Vec::with_capacity(pending.len());
    if !taken.is_empty() {
        eprintln!("{}: {} points taken from other experiments' runs of this build", exp.name, taken.len());
    }
    for p in taken {
        let row = Row::taken(p, &known[&p.id]);
        log.append(&row)?;
        fresh.push(row);
    }
    fresh.extend(run_points(&to_run, jobs, Some(&log))?);
    let failed: Vec<&Row> = fresh.iter().filter(|r| r.error.is_some()).collect();
    let wanted: HashSet<&str> = points.iter().map(|p| p.id.as_str()).collect();
    let rows: Vec<Row> = results::finished(done.iter().chain(&fresh).cloned().collect())
        .into_iter()
        .filter(|r| wanted.contains(r.id.as_str()))
        .collect();
    results::write_tables(dir, &rows)?;
    if let Some(first) = failed.first() {
        bail!(
            "{} of {} points failed (kept out of the results; rerun to retry); point {}: {}",
            failed.len(),
            pending.len(),
            first.id,
            first.error.as_deref().unwrap_or_default()
        );
    }
    Ok(rows)
}

/// A pool of `jobs` threads (`--jobs`; the machine's cores without it) for a command's runs: the points of
/// a sweep and the trials of each point, which share it ([`crate::trials`]), or a soak's designs.
pub fn pool(jobs: Option<usize>) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new().num_threads(jobs.unwrap_or(0)).build().map_err(|e| anyhow!("invalid --jobs: {e}"))
}

/// Run `points` in parallel on `jobs` threads, logging each row as it finishes; rows in point order.
pub fn run_points(points: &[&Point], jobs: Option<usize>, log: Option<&PointLog>) -> Result<Vec<Row>> {
    let pool = pool(jobs)?;
    let bar = indicatif::ProgressBar::new(points.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} points  {elapsed} elapsed, {eta} left  {msg}")
            .expect("valid template"),
    );
    let rows: Vec<Result<Row>> = pool.install(|| {
        points
            .par_iter()
            .map(|p| {
                let start = Instant::now();
                let outcome = point::run(&p.params);
                let row = Row::new(p, outcome.as_ref().map(|o| &o.json).map_err(|e| format!("{e:#}")));
                bar.inc(1);
                bar.set_message(format!(
                    "last: {} in {:.1} s",
                    p.params.label.as_deref().unwrap_or(""),
                    start.elapsed().as_secs_f64()
                ));
                if let Some(log) = log {
                    log.append(&row)?;
                }
                Ok(row)
            })
            .collect()
    });
    bar.finish_and_clear();
    rows.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_points() {
        let shards: Vec<Shard> = (1..=3).map(|i| format!("{i}/3").parse().unwrap()).collect();
        for index in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.holds(index)).count(), 1);
        }
        assert!("0/3".parse::<Shard>().is_err());
        assert!("4/3".parse::<Shard>().is_err());
    }
}
