//! Experiment files (TOML) and the points they expand to.
//!
//! ```toml
//! [experiment]               # all optional
//! title = "Ring size"
//! description = "..."
//!
//! [run]                      # any `rxlab run` flag, `-` written `_`
//! engine = "sim"
//! app = "lb"
//! cores = 16
//! size = 1500
//!
//! [[case]]                   # named variants (optional); each sets some parameters
//! label = "shRing/8"
//! iface = "shring"
//! share = 8
//!
//! [sweep]                    # axes: a list, or a range; the points are their product
//! ring = [64, 256, 1024]
//! cores = { from = 1, to = 16, times = 2 }   # 1, 2, 4, 8, 16 (`step = N` adds)
//! app.reads = [2, 4, 8]      # an app parameter: adds `reads=2` (...) to the point's app_params
//! profile.ddio_ways = [2, 4]  # a machine profile field: adds `ddio_ways = 2` (...) to profile_set
//!
//! [[figure]]                 # see `report::figures`
//! [claim]                    # see `claim`
//! ```
//!
//! A point's parameters are `[run]`, then its case, then its axis values, then the command line's flags,
//! each over the one before ([`Params::overlay`]); points with the same parameters are run once.

use crate::claim::Claim;
use crate::params::{Params, from_table};
use crate::point;
use crate::report::figures::FigureSpec;
use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

/// The built-in default experiment of `rxlab run` (the headline comparison).
pub const DEFAULT: &str = include_str!("../../../experiments/default.toml");

/// Descriptive header of an experiment.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Short title for tables and the report.
    #[serde(default)]
    pub title: String,
    /// What the experiment shows.
    #[serde(default)]
    pub description: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    experiment: Meta,
    #[serde(default)]
    run: Params,
    #[serde(default)]
    case: Vec<Params>,
    #[serde(default)]
    sweep: SweepTable,
    #[serde(default)]
    figure: Vec<FigureSpec>,
    claim: Option<Claim>,
}

/// The `[sweep]` table's entries in file order, each value with its place in the file.
#[derive(Default)]
struct SweepTable(Vec<(String, Spanned<toml::Value>)>);

impl<'de> Deserialize<'de> for SweepTable {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SweepTable;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of parameter = list or range")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<SweepTable, A::Error> {
                let mut out = vec![];
                while let Some(entry) = m.next_entry()? {
                    out.push(entry);
                }
                Ok(SweepTable(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// One sweep axis: a parameter and its values.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Parameter key.
    pub key: String,
    /// Each value as a one-entry parameter set.
    pub values: Vec<Params>,
}

/// A parsed experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// File stem (`default` for the built-in one).
    pub name: String,
    /// The file's text, kept with results so that `merge` and `report` see the same experiment.
    pub source: String,
    /// Header.
    pub meta: Meta,
    /// Parameters common to all points.
    pub base: Params,
    /// Named variants (at least one, possibly empty).
    pub cases: Vec<Params>,
    /// Sweep axes in file order.
    pub axes: Vec<Axis>,
    /// Figures the report draws.
    pub figures: Vec<FigureSpec>,
    /// The paper's claim this experiment reproduces, if any.
    pub claim: Option<Claim>,
}

/// One point of an experiment.
#[derive(Debug, Clone)]
pub struct Point {
    /// Position in the expansion (results are ordered by it).
    pub index: usize,
    /// Stable id ([`point::id`]).
    pub id: String,
    /// Fully resolved parameters.
    pub params: Params,
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The results columns a run's parameters fill (`Params`' fields, as `rxlab run` names its flags'
/// keys), which a paired check's `pair` may name: an unknown one would pair every row with the first.
fn param_columns() -> std::collections::BTreeSet<String> {
    use clap::Args;
    Params::augment_args(clap::Command::new("params")).get_arguments().map(|a| a.get_id().to_string()).collect()
}

/// The key written on `line` (the text before `=`), to name it in errors that only carry a span.
fn key_on_line(text: &str, line: usize) -> Option<&str> {
    let l = text.lines().nth(line - 1)?;
    let (k, _) = l.split_once('=')?;
    Some(k.trim().trim_matches('"'))
}

impl Experiment {
    /// Read and parse an experiment file.
    pub fn load(path: &Path) -> Result<Experiment> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read experiment {}: check the path", path.display()))?;
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("experiment").to_string();
        let mut exp = Experiment::parse(&name, &text).map_err(|e| anyhow!("{}:{e:#}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let values = exp.axes.iter_mut().flat_map(|a| a.values.iter_mut());
        for p in std::iter::once(&mut exp.base).chain(exp.cases.iter_mut()).chain(values) {
            p.profile = p.profile.take().map(|f| beside(dir, f));
        }
        Ok(exp)
    }

    /// Parse an experiment's text; errors read `LINE: key `K`: what is wrong`.
    pub fn parse(name: &str, text: &str) -> Result<Experiment> {
        let file: File = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            let msg = e.message().trim().replace('\n', " ");
            match key_on_line(text, line).filter(|k| !msg.contains(&format!("`{k}`"))) {
                Some(k) => anyhow!("{line}: key `{k}`: {msg}"),
                None => anyhow!("{line}: {msg}"),
            }
        })?;
        for (i, f) in file.figure.iter().enumerate() {
            f.validate().map_err(|e| anyhow!("figure {}: {e:#}", i + 1))?;
        }
        let columns = param_columns();
        for c in file.claim.iter().flat_map(|c| &c.check) {
            c.validate().map_err(|e| anyhow!("claim check `{}`: {e:#}", c.what))?;
            if let Some(k) = c.pair.iter().find(|k| !columns.contains(k.as_str())) {
                bail!(
                    "claim check `{}`: `pair` column `{k}` is no run parameter (an app parameter swept as \
                     `app.{{name}}` pairs as `app_params`)",
                    c.what
                );
            }
        }
        let mut axes = Vec::new();
        for (key, v) in &file.sweep.0 {
            let line = line_of(text, v.span().start);
            let at = |e: anyhow::Error| anyhow!("{line}: sweep key `{key}`: {e:#}");
            match (key.as_str(), v.get_ref()) {
                ("app", toml::Value::Table(t)) => {
                    for (k, values) in t {
                        axes.push(app_axis(k, values).map_err(|e| anyhow!("{line}: sweep key `app.{k}`: {e:#}"))?);
                    }
                }
                ("profile", toml::Value::Table(t)) => {
                    for (field, values) in profile_leaves(t, "") {
                        let at = |e: anyhow::Error| anyhow!("{line}: sweep key `profile.{field}`: {e:#}");
                        axes.push(profile_axis(&field, values).map_err(at)?);
                    }
                }
                _ => axes.push(axis(key, v.get_ref()).map_err(at)?),
            }
        }
        Ok(Experiment {
            name: name.to_string(),
            source: text.to_string(),
            meta: file.experiment,
            base: file.run,
            cases: if file.case.is_empty() { vec![Params::default()] } else { file.case },
            axes,
            figures: file.figure,
            claim: file.claim,
        })
    }

    /// The built-in default experiment.
    pub fn default_experiment() -> Experiment {
        Experiment::parse("default", DEFAULT).expect("the built-in experiment parses")
    }

    /// Every point, with `flags` over each; duplicates (same id) are dropped, keeping the first.
    pub fn points(&self, flags: &Params) -> Vec<Point> {
        let mut combos: Vec<Params> = self.cases.iter().map(|c| self.base.overlay(c)).collect();
        for axis in &self.axes {
            combos = combos.iter().flat_map(|c| axis.values.iter().map(move |v| c.overlay(v))).collect();
        }
        let mut seen = std::collections::HashSet::new();
        combos
            .into_iter()
            .map(|c| {
                let mut p = c.overlay(flags).resolved();
                if p.label.is_none() {
                    p.label = p.iface.clone();
                }
                p
            })
            .filter(|p| seen.insert(point::id(p)))
            .enumerate()
            .map(|(index, params)| Point { index, id: point::id(&params), params })
            .collect()
    }
}

/// A relative profile file path of an experiment in directory `dir` as seen from the working directory;
/// profile names and absolute paths as they are.
fn beside(dir: &Path, profile: String) -> String {
    if profile.ends_with(".toml") && Path::new(&profile).is_relative() {
        dir.join(profile).display().to_string()
    } else {
        profile
    }
}

/// An axis's values from its TOML value: a list, or `{ from, to, step | times }`.
fn axis_values(v: &toml::Value) -> Result<Vec<toml::Value>> {
    Ok(match v {
        toml::Value::Array(a) if !a.is_empty() => a.clone(),
        toml::Value::Table(t) => range(t)?.into_iter().map(toml::Value::Integer).collect(),
        _ => bail!("give a non-empty list of values, or a range {{ from = 1, to = 16, times = 2 }}"),
    })
}

/// An axis over parameter `key`.
fn axis(key: &str, v: &toml::Value) -> Result<Axis> {
    let values = axis_values(v)?
        .into_iter()
        .map(|v| from_table(toml::Table::from_iter([(key.to_string(), v)])))
        .collect::<Result<Vec<_>>>()
        .map_err(|e| anyhow!("{}", e.root_cause()))?;
    Ok(Axis { key: key.to_string(), values })
}

/// An axis over one app parameter (`app.reads = [2, 4]`): each value adds `reads=V` to the app parameters.
fn app_axis(key: &str, v: &toml::Value) -> Result<Axis> {
    let values = axis_values(v)?
        .into_iter()
        .map(|v| {
            let text = match v {
                toml::Value::String(s) => s,
                other => other.to_string(),
            };
            Params { app_params: Some(format!("{key}={text}")), ..Params::default() }
        })
        .collect();
    // The column that varies is `app_params` (results have no column per app parameter).
    Ok(Axis { key: "app_params".into(), values })
}

/// The axes under a `profile` sweep table: each field path with its list or range (a table of range
/// keys); other tables are walked into.
fn profile_leaves<'a>(t: &'a toml::Table, prefix: &str) -> Vec<(String, &'a toml::Value)> {
    let is_range = |t: &toml::Table| !t.is_empty() && t.keys().all(|k| RANGE_KEYS.contains(&k.as_str()));
    t.iter()
        .flat_map(|(k, v)| {
            let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            match v {
                toml::Value::Table(sub) if !is_range(sub) => profile_leaves(sub, &path),
                _ => vec![(path, v)],
            }
        })
        .collect()
}

/// An axis over one machine profile field (`profile.ddio_ways = [2, 4]`): each value adds
/// `llc.ways = V` to the point's profile fields. The field and the values' type are checked here, on
/// the default profile; whether a value is possible is checked per point, on its own profile.
fn profile_axis(field: &str, v: &toml::Value) -> Result<Axis> {
    let values = axis_values(v)?
        .into_iter()
        .map(|v| {
            let set = format!("{field} = {v}");
            sim::profile_file::assign(&sim::Profile::r640_silver4216(), &set).map_err(|e| anyhow!("{e}"))?;
            Ok(Params { profile_set: Some(set), ..Params::default() })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Axis { key: "profile_set".into(), values })
}

/// The keys of a range table.
const RANGE_KEYS: [&str; 4] = ["from", "to", "step", "times"];

/// The integers of a range table.
fn range(t: &toml::Table) -> Result<Vec<i64>> {
    let int = |k: &str| t.get(k).map(|v| v.as_integer().ok_or_else(|| anyhow!("`{k}` must be an integer"))).transpose();
    if let Some(k) = t.keys().find(|k| !RANGE_KEYS.contains(&k.as_str())) {
        bail!("unknown range key `{k}` (use from, to, and step or times)");
    }
    let (Some(from), Some(to)) = (int("from")?, int("to")?) else { bail!("a range needs `from` and `to`") };
    let next: Box<dyn Fn(i64) -> i64> = match (int("step")?, int("times")?) {
        (Some(s), None) if s > 0 => Box::new(move |x| x + s),
        (None, Some(m)) if m > 1 && from > 0 => Box::new(move |x| x * m),
        (None, None) => Box::new(|x| x + 1),
        _ => bail!("give either `step` (> 0) or `times` (> 1, with `from` > 0)"),
    };
    let mut out = vec![];
    let mut x = from;
    while x <= to && out.len() < 100_000 {
        out.push(x);
        x = next(x);
    }
    if out.is_empty() {
        bail!("the range from {from} to {to} is empty");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let t: toml::Table = toml::from_str("from = 64\nto = 4096\ntimes = 4").unwrap();
        assert_eq!(range(&t).unwrap(), vec![64, 256, 1024, 4096]);
        let t: toml::Table = toml::from_str("from = 1\nto = 5\nstep = 2").unwrap();
        assert_eq!(range(&t).unwrap(), vec![1, 3, 5]);
    }

    #[test]
    fn product_of_cases_and_axes_with_flags_last() {
        let e = Experiment::parse(
            "t",
            "[run]\nengine = \"sim\"\n[[case]]\niface = \"privring\"\n[[case]]\niface = \"shring\"\n[sweep]\nring = [64, 128]\n",
        )
        .unwrap();
        assert_eq!(e.points(&Params::default()).len(), 4);
        let pinned = Params { ring: Some(crate::params::Quantity("256".into())), ..Params::default() };
        assert_eq!(e.points(&pinned).len(), 2);
    }

    #[test]
    fn app_parameter_axes_add_to_the_app_parameters() {
        let e = Experiment::parse(
            "t",
            "[run]\nengine = \"sim\"\napp_params = \"forward=mirror\"\n[sweep]\napp.reads = [2, 4]\napp.buffer = [\"1MiB\", \"2MiB\"]\n",
        )
        .unwrap();
        let got: Vec<String> =
            e.points(&Params::default()).into_iter().map(|p| p.params.app_params.unwrap_or_default()).collect();
        assert_eq!(
            got,
            [
                "forward=mirror,reads=2,buffer=1MiB",
                "forward=mirror,reads=2,buffer=2MiB",
                "forward=mirror,reads=4,buffer=1MiB",
                "forward=mirror,reads=4,buffer=2MiB"
            ]
        );
        let bad = Experiment::parse("t", "[sweep]\napp.reads = []\n").unwrap_err().to_string();
        assert!(bad.contains("sweep key `app.reads`: give a non-empty list"), "{bad}");
        // A paired check names results columns: an app parameter is one column, `app_params`.
        let check = |pair: &str| {
            let claim = format!(
                "[claim]\npaper = \"p\"\nfigure = \"f\"\ntext = \"t\"\n[[claim.check]]\nwhat = \"w\"\n\
                 metric = \"g\"\na = \"x\"\nb = \"y\"\npaper = 1.0\npair = [{pair}]\n"
            );
            Experiment::parse("t", &format!("[sweep]\napp.reads = [2, 4]\n{claim}"))
        };
        assert!(check("\"app_params\", \"ring\"").is_ok());
        let bad = check("\"app.reads\"").unwrap_err().to_string();
        assert!(bad.contains("`pair` column `app.reads` is no run parameter"), "{bad}");
    }

    /// Every experiment file parses; the scatter, stacked, CDF and timeline kinds each serve one; every published
    /// point of a claim lands in one of its experiment's figures.
    #[test]
    fn experiment_files_parse_and_use_every_figure_kind() {
        use crate::report::figures::Kind;
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut kinds = vec![];
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "toml") {
                continue; // experiments/profiles/ holds the machine profiles they use
            }
            let e = Experiment::load(&path).unwrap_or_else(|e| panic!("{e:#}"));
            kinds.extend(e.figures.iter().map(|f| f.kind));
            for p in e.claim.iter().flat_map(|c| &c.published) {
                let drawn = e.figures.iter().any(|f| matches!(f.kind, Kind::Lines | Kind::Scatter) && f.y == p.metric);
                assert!(drawn, "{}: no figure draws the published {} ({})", e.name, p.metric, p.section);
            }
        }
        for k in [Kind::Scatter, Kind::Stacked, Kind::Cdf, Kind::Timeline] {
            assert!(kinds.contains(&k), "no experiment draws a {k:?} figure");
        }
    }

    #[test]
    fn profile_field_axes_add_to_the_profile_fields() {
        let e = Experiment::parse(
            "t",
            "[run]\nengine = \"sim\"\nprofile_set = \"ddio_ways = 4\"\n[sweep]\nprofile.cpu.llc.ways = [11, 16]\nprofile.nic.port_gbps = { from = 100, to = 200, step = 100 }\n",
        )
        .unwrap();
        let got: Vec<String> =
            e.points(&Params::default()).into_iter().map(|p| p.params.profile_set.unwrap_or_default()).collect();
        assert_eq!(
            got,
            [
                "ddio_ways = 4; cpu.llc.ways = 11; nic.port_gbps = 100",
                "ddio_ways = 4; cpu.llc.ways = 11; nic.port_gbps = 200",
                "ddio_ways = 4; cpu.llc.ways = 16; nic.port_gbps = 100",
                "ddio_ways = 4; cpu.llc.ways = 16; nic.port_gbps = 200"
            ]
        );
        let bad = Experiment::parse("t", "[sweep]\nprofile.llc.wayz = [1]\n").unwrap_err().to_string();
        assert!(bad.contains("2: sweep key `profile.llc.wayz`") && bad.contains("no such profile field"), "{bad}");
        let bad = Experiment::parse("t", "[sweep]\nprofile.llc.ways = [\"x\"]\n").unwrap_err().to_string();
        assert!(bad.contains("profile field `cpu.llc.ways`"), "{bad}");
    }

    #[test]
    fn default_experiment_parses() {
        assert!(!Experiment::default_experiment().points(&Params::default()).is_empty());
    }
}
