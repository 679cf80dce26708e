//! `rxlab merge -o OUT DIR...`: join the results of the shards of one sweep (`rxlab sweep --shard i/n`).

use crate::results::{self, EXPERIMENT_FILE, POINTS_FILE};
use crate::{cancel, space};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;
use traffic::atomic;

/// Arguments of `rxlab merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Results directories of the shards.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Directory for the joined results.
    #[arg(short, long)]
    out: PathBuf,
}

/// Run `rxlab merge`.
pub fn run(a: MergeArgs) -> Result<()> {
    let mut source: Option<(String, &PathBuf)> = None;
    let mut rows = vec![];
    for dir in &a.dirs {
        let path = dir.join(EXPERIMENT_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}: give directories written by `rxlab sweep`", path.display()))?;
        match &source {
            Some((first, from)) if *first != text => {
                bail!(
                    "{} and {} hold different experiments; merge shards of one sweep only",
                    from.display(),
                    dir.display()
                )
            }
            Some(_) => {}
            None => source = Some((text, dir)),
        }
        rows.extend(results::load_points(dir)?);
    }
    let (text, _) = source.expect("clap requires at least one directory");
    let rows = results::finished(rows);
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let lines: Vec<String> = rows.iter().map(serde_json::to_string).collect::<Result<_, _>>()?;
    let points: String = lines.iter().map(|l| format!("{l}\n")).collect();
    space::ensure(&a.out, 3 * points.len() as u64, "the merged results", "free some space or give another --out")?;
    let out = a.out.clone();
    cancel::keeps(move || format!("the complete files in {} (merge again for the rest)", out.display()));
    for (name, bytes) in [(EXPERIMENT_FILE, text), (POINTS_FILE, points)] {
        let path = a.out.join(name);
        atomic::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    results::write_tables(&a.out, &rows)?;
    println!("{} points from {} directories in {}", rows.len(), a.dirs.len(), a.out.display());
    Ok(())
}
