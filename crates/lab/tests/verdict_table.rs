//! The verdict table in `docs/reproducing.md` is the one `rxlab reproduce --markdown` writes: its header is
//! the writer's, and it names exactly the (experiment, check) pairs of the experiment files, no more and
//! no fewer; and the README's summary of it (checks within and checks per experiment) agrees with it.

use lab::experiment::Experiment;
use lab::reference::cells;
use lab::reproduce::{MARKDOWN_HEADER, MARKERS};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The rows of the generated table in a page: (experiment, check, verdict).
fn documented_rows(page: &str) -> Vec<(String, String, String)> {
    let (begin, end) = MARKERS;
    let start = page.find(begin).expect("the page has the verdict table's opening marker") + begin.len();
    let table = &page[start..page[start..].find(end).expect("and its closing marker") + start];
    let lines: Vec<&str> = table.trim().lines().collect();
    assert!(lines[0].starts_with("<!-- rxlab "), "the table starts with the writer's comment: {}", lines[0]);
    assert_eq!(lines[1..3].join("\n"), MARKDOWN_HEADER, "the header is the writer's");
    let rows: Vec<&str> = lines[3..].iter().copied().take_while(|l| l.starts_with('|')).collect();
    let summary = lines[3 + rows.len()..].iter().find(|l| !l.is_empty()).expect("a summary line");
    assert!(summary.contains(&format!(" of {} checks within tolerance", rows.len())), "{summary}");
    rows.iter()
        .map(|r| {
            let c = cells(r);
            assert_eq!(c.len(), 5, "five cells: {r}");
            (c[0].clone(), c[1].clone(), c[4].clone())
        })
        .collect()
}

/// The (experiment, check) pairs of the generated table in a page.
fn documented(page: &str) -> BTreeSet<(String, String)> {
    documented_rows(page).into_iter().map(|(e, c, _)| (e, c)).collect()
}

/// The (experiment, check) pairs of the experiment files.
fn in_experiments() -> BTreeSet<(String, String)> {
    let mut pairs = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("experiments")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let exp = Experiment::load(&path).unwrap();
            for check in exp.claim.iter().flat_map(|c| &c.check) {
                pairs.insert((exp.name.clone(), check.what.clone()));
            }
        }
    }
    pairs
}

#[test]
fn the_documented_verdicts_are_the_experiments_checks() {
    let page = std::fs::read_to_string(root().join("docs/reproducing.md")).unwrap();
    let (doc, exp) = (documented(&page), in_experiments());
    let missing: Vec<_> = exp.difference(&doc).collect();
    let extra: Vec<_> = doc.difference(&exp).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/reproducing.md's verdict table is out of date: run `rxlab reproduce --markdown \
         docs/reproducing.md` (or `--judge` on a full run's results).\nchecks it lacks: {missing:?}\n\
         checks the experiments do not have: {extra:?}"
    );
}

#[test]
fn the_readme_summarises_the_documented_verdicts() {
    let page = std::fs::read_to_string(root().join("docs/reproducing.md")).unwrap();
    let mut per_experiment: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (exp, _, verdict) in documented_rows(&page) {
        let e = per_experiment.entry(exp).or_default();
        e.0 += usize::from(verdict.starts_with("within"));
        e.1 += 1;
    }
    let expected: BTreeMap<String, String> =
        per_experiment.iter().map(|(e, (w, n))| (e.clone(), format!("{w}/{n}"))).collect();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    // `name` N/M, as the README's summary writes each experiment.
    let summarised: BTreeMap<String, String> = readme
        .split('`')
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| expected.contains_key(w[0]))
        .filter_map(|w| w[1].split_whitespace().next().map(|n| (w[0].to_string(), n.trim_end_matches(',').to_string())))
        .collect();
    assert_eq!(summarised, expected, "README.md's summary of the verdicts differs from docs/reproducing.md's table");
    let (within, all): (usize, usize) = per_experiment.values().fold((0, 0), |(a, b), (w, n)| (a + w, b + n));
    assert!(
        readme.contains(&format!("**{within} of {all} checks within")),
        "README.md's total is not {within} of {all}"
    );
}
