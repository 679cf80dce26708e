//! A reference run and the comparison of a new run with it (`rxlab reproduce --against FILE`): the
//! Markdown verdict table `rxlab reproduce` writes ([`crate::reproduce::markdown`]; `docs/reproducing.md`
//! holds the reference run's), read back, and for every check whether its value moved. A value moves when
//! it leaves the reference's spread over seeds (a point run with `--trials`) or, for a one-seed value,
//! differs by more than 1 % (or half a unit of the table's last printed digit, whichever is more); a
//! verdict moves when it turns. A change that only speeds rxlab up must move nothing.

use crate::claim::Verdict;
use crate::reproduce::ClaimResult;
use anyhow::{Context, Result, anyhow};
use std::path::Path;

/// Relative change a one-seed value may show.
const ONE_SEED: f64 = 0.01;
/// Half a unit of the last digit the verdict table prints for `x` ([`crate::claim::number`]: three
/// decimals, three significant digits below 0.01).
fn printed(x: f64) -> f64 {
    let text = crate::claim::number(x);
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    0.5 * 10f64.powi(-decimals)
}

/// One check of the reference run.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Experiment name.
    pub claim: String,
    /// The check's description.
    pub what: String,
    /// rxlab's value (`None` where the table shows `-`).
    pub rxlab: Option<f64>,
    /// Whether it was within tolerance.
    pub within: bool,
    /// The lowest and highest seed's value, for checks of points run with trials.
    pub seeds: Option<(f64, f64)>,
}

/// The cells of a Markdown table row, `\|` kept inside its cell as `|`.
pub fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        let cell = cells.last_mut().expect("one cell at least");
        match c {
            '\\' if chars.peek() == Some(&'|') => cell.extend(chars.next()),
            '|' => cells.push(String::new()),
            c => cell.push(c),
        }
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Read the verdict rows of a Markdown page: every table row of five cells whose last names a verdict
/// (`claim | check | paper | rxlab | verdict`); other lines are skipped.
pub fn parse(text: &str) -> Result<Vec<Reference>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with('|'))
        .map(|(i, l)| (i, cells(l)))
        .filter(|(_, c)| c.len() == 5 && (c[4].starts_with("within (") || c[4].starts_with("MISS (")))
        .map(|(i, c)| row(&c).with_context(|| format!("line {}: not a verdict row", i + 1)))
        .collect()
}

/// One row's cells: claim, check, paper, rxlab, `verdict (tolerance)[; n of m seeds within, min-max]`.
fn row(c: &[String]) -> Result<Reference> {
    let rxlab = match c[3].as_str() {
        "-" => None,
        x => Some(x.parse().map_err(|_| anyhow!("rxlab value '{x}' is not a number"))?),
    };
    let seeds = match c[4].rsplit_once(", ") {
        Some((_, range)) if c[4].contains("seeds within") => {
            let (lo, hi) = range.split_once('-').ok_or_else(|| anyhow!("seed range '{range}' is not LOW-HIGH"))?;
            let num = |s: &str| s.parse::<f64>().map_err(|_| anyhow!("seed value '{s}' is not a number"));
            Some((num(lo)?, num(hi)?))
        }
        _ => None,
    };
    Ok(Reference { claim: c[0].clone(), what: c[1].clone(), rxlab, within: c[4].starts_with("within"), seeds })
}

/// Read the reference table in `path`.
pub fn load(path: &Path) -> Result<Vec<Reference>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!("cannot read the reference {}: give a page with the Markdown verdict table `rxlab reproduce` writes (verdicts.md, docs/reproducing.md)", path.display())
    })?;
    parse(&text).with_context(|| format!("reference {}", path.display()))
}

/// How a check of the new run compares with the reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Within the reference's spread and the same verdict.
    Held,
    /// The value or the verdict moved: what moved.
    Moved(String),
    /// The reference has no such check.
    New,
}

/// Compare verdict `v` of claim `claim` with the reference.
pub fn compare(refs: &[Reference], claim: &str, v: &Verdict) -> Change {
    let Some(r) = refs.iter().find(|r| r.claim == claim && r.what == v.what) else { return Change::New };
    let mut moved = Vec::new();
    match (r.rxlab, v.rxlab) {
        (Some(was), Some(now)) => {
            let (lo, hi) = r.seeds.unwrap_or_else(|| {
                let slack = (was.abs() * ONE_SEED).max(printed(was));
                (was - slack, was + slack)
            });
            if !(lo - printed(lo)..=hi + printed(hi)).contains(&now) {
                let spread = if r.seeds.is_some() { "its seeds' spread" } else { "1 %" };
                let n = crate::claim::number;
                moved.push(format!("{} outside {spread} {}-{} (reference {})", n(now), n(lo), n(hi), n(was)));
            }
        }
        (was, now) if was.is_some() != now.is_some() => moved.push(format!("value {was:?} -> {now:?}")),
        _ => {}
    }
    if r.within != v.within {
        moved.push(format!("verdict {} -> {}", word(r.within), word(v.within)));
    }
    if moved.is_empty() { Change::Held } else { Change::Moved(moved.join("; ")) }
}

fn word(within: bool) -> &'static str {
    if within { "within" } else { "MISS" }
}

/// Compare every check of `results` with the reference in `path` and print what moved; an error naming
/// the count when anything did.
pub fn against(path: &Path, results: &[ClaimResult]) -> Result<()> {
    let refs = load(path)?;
    let (mut held, mut moved, mut new) = (0, 0, 0);
    for r in results {
        for v in &r.verdicts {
            match compare(&refs, &r.name, v) {
                Change::Held => held += 1,
                Change::Moved(why) => {
                    moved += 1;
                    println!("moved: {} {}: {why}", r.name, v.what);
                }
                Change::New => {
                    new += 1;
                    println!("new: {} {}: not in the reference", r.name, v.what);
                }
            }
        }
    }
    println!("against {}: {held} checks held, {moved} moved, {new} not in it", path.display());
    if moved > 0 {
        anyhow::bail!("{moved} checks moved against the reference {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Bound;

    const TABLE: &str = "\
# a page
| claim | check | paper | rxlab | verdict |
|---|---|---:|---:|---|
| corec-fig5-6 | mean latency per-core / shared, 4 cores, 35 Mpps (>= 1) | >=1.000 | 0.879 | MISS (±0 %) |
| enso-fig8 | PCIe read metadata share, Enso, 1 core (<= 1.2 %) | <=0.012 | 0.010 | within (±0 %) |
| shring-fig6 | RxList / RxArr throughput, 1:2 | 0.670 | 0.710 | within (±25 %); 10 of 10 seeds within, 0.701-0.719 |
| x | gone \\| away | 1.000 | - | MISS (±5 %) |
";

    fn verdict(what: &str, rxlab: f64, within: bool) -> Verdict {
        Verdict {
            what: what.into(),
            paper: 1.0,
            rxlab: Some(rxlab),
            tolerance: 0.25,
            bound: Bound::About,
            within,
            seeds: None,
        }
    }

    #[test]
    fn cells_keep_escaped_bars() {
        assert_eq!(cells("| a | b \\| c | 1 |"), vec!["a", "b | c", "1"]);
    }

    #[test]
    fn rows_read_back_with_their_values_verdicts_and_seed_spreads() {
        let refs = parse(TABLE).unwrap();
        assert_eq!(refs.len(), 4);
        assert_eq!(refs[0].claim, "corec-fig5-6");
        assert_eq!(refs[0].what, "mean latency per-core / shared, 4 cores, 35 Mpps (>= 1)");
        assert_eq!((refs[0].rxlab, refs[0].within, refs[0].seeds), (Some(0.879), false, None));
        assert_eq!((refs[2].rxlab, refs[2].seeds), (Some(0.71), Some((0.701, 0.719))));
        assert_eq!((refs[3].what.as_str(), refs[3].rxlab, refs[3].within), ("gone | away", None, false));
        assert!(parse("| a | b | 1.0 | x | within (±1 %) |").is_err(), "a value that is not a number is an error");
    }

    #[test]
    fn a_value_moves_when_it_leaves_its_seeds_spread_or_one_percent() {
        let refs = parse(TABLE).unwrap();
        let spread = "RxList / RxArr throughput, 1:2";
        assert_eq!(compare(&refs, "shring-fig6", &verdict(spread, 0.7015, true)), Change::Held);
        assert!(matches!(compare(&refs, "shring-fig6", &verdict(spread, 0.69, true)), Change::Moved(_)));
        let one = "mean latency per-core / shared, 4 cores, 35 Mpps (>= 1)";
        assert_eq!(compare(&refs, "corec-fig5-6", &verdict(one, 0.879 * 1.009, false)), Change::Held);
        assert!(matches!(compare(&refs, "corec-fig5-6", &verdict(one, 0.879 * 1.02, false)), Change::Moved(_)));
        let Change::Moved(why) = compare(&refs, "corec-fig5-6", &verdict(one, 0.879, true)) else { panic!() };
        assert!(why.contains("verdict MISS -> within"), "{why}");
        let small = "PCIe read metadata share, Enso, 1 core (<= 1.2 %)";
        assert_eq!(
            compare(&refs, "enso-fig8", &verdict(small, 0.0104, true)),
            Change::Held,
            "within the printed digit"
        );
        assert_eq!(compare(&refs, "enso-fig8", &verdict("another check", 1.0, true)), Change::New);
    }
}
