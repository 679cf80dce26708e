//! Profile files: a machine profile written as TOML, read back, or changed field by field.
//!
//! The schema is [`Profile`]'s own, derived by serde with unknown fields denied, so a field added to the
//! profile types is a field of every file. A file either gives every field (as `rxlab profile show`
//! prints them) or starts from a built-in profile and gives only what it changes:
//!
//! ```toml
//! base = "r640-silver4216"
//! name = "r640-4-ddio-ways"   # optional: a file without a name is named after itself
//! ddio_ways = 4
//! [cpu.llc]
//! ways = 12
//! size = 25165824
//! ```
//!
//! Every error names the file, the line and the field ([`FileError`]).

use crate::profile::{Profile, ProfileError, REFERENCES};
use serde::de::DeserializeOwned;
use std::fmt::Write as _;
use std::path::Path;
use toml::Table;
use toml::de::{DeTable, DeValue};

/// The key that names the built-in profile a file starts from.
pub const BASE: &str = "base";

/// Why a profile file cannot be used: `FILE:LINE: field `F`: what is wrong`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{line}: {field}{message}",
    line = line.map(|l| format!(":{l}")).unwrap_or_default(),
    field = field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
pub struct FileError {
    /// The file as given.
    pub file: String,
    /// 1-based line of the fault, where the file has one.
    pub line: Option<usize>,
    /// The field at fault as a dotted path (`cpu.llc.ways`), where there is one.
    pub field: Option<String>,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// Read and check the profile file at `path`.
pub fn load(path: &Path) -> Result<Profile, FileError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| FileError {
        file: file.clone(),
        line: None,
        field: None,
        message: format!("cannot read profile file: {e}; check the path"),
    })?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("profile");
    parse(&text, &file, stem)
}

/// Parse and check a profile file's `text`; `file` names it in errors and `stem` names a profile the
/// file gives no name.
pub fn parse(text: &str, file: &str, stem: &str) -> Result<Profile, FileError> {
    let err = |line: Option<usize>, field: Option<String>, message: String| FileError {
        file: file.to_string(),
        line,
        field,
        message,
    };
    let mut doc: Table = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        err(line, None, e.message().trim().replace('\n', " "))
    })?;
    let base = match doc.remove(BASE) {
        None => Table::new(),
        Some(toml::Value::String(name)) => to_table(
            &Profile::by_name(&name).map_err(|e| err(locate(text, &[BASE]), Some(BASE.into()), e.to_string()))?,
        ),
        Some(other) => {
            let message = format!("give a built-in profile's name, not a {}", other.type_str());
            return Err(err(locate(text, &[BASE]), Some(BASE.into()), message));
        }
    };
    let named = doc.contains_key("name");
    let mut profile: Profile = from_table(merge(base, doc)).map_err(|(path, message)| {
        // `dram.curve[0][1]`: the line of `curve`.
        let at: Vec<&str> = path.split('.').filter_map(|s| s.split('[').next()).filter(|s| !s.is_empty()).collect();
        err(locate(text, &at), (!path.is_empty()).then_some(path.clone()), message)
    })?;
    if !named {
        profile.name = stem.to_string();
    }
    profile.validate().map_err(|e| match e {
        ProfileError::Invalid { fields, message, .. } => {
            let given = fields.iter().find(|f| locate_exact(text, f).is_some()).unwrap_or(&fields[0]);
            let line = locate_exact(text, given).or_else(|| locate(text, &[BASE]));
            err(line, Some(given.to_string()), message)
        }
        other => err(None, None, other.to_string()),
    })?;
    Ok(profile)
}

/// `profile` with the `;`-separated `FIELD = VALUE` assignments of `set` laid over it (TOML values; a
/// field may be named by the end of its path when that is unique: `llc.ways` for `cpu.llc.ways`),
/// checked as a file is.
pub fn overlay(profile: &Profile, set: &str) -> Result<Profile, ProfileError> {
    let p = assign(profile, set)?;
    p.validate().map_err(|e| match e {
        ProfileError::Invalid { fields, message, .. } => ProfileError::Field { field: fields[0].into(), message },
        other => other,
    })?;
    Ok(p)
}

/// [`overlay`] without the check of the values: the fields exist and their values have their types.
pub fn assign(profile: &Profile, set: &str) -> Result<Profile, ProfileError> {
    let mut table = to_table(profile);
    for assignment in set.split(';').map(str::trim).filter(|a| !a.is_empty()) {
        let bad = |field: &str, message: String| ProfileError::Field { field: field.to_string(), message };
        let (field, value) = assignment.split_once('=').ok_or_else(|| bad(assignment, "write FIELD = VALUE".into()))?;
        let field = field.trim();
        let value: Table = toml::from_str(&format!("v = {}", value.trim()))
            .map_err(|e| bad(field, format!("'{}' is not a TOML value: {}", value.trim(), e.message().trim())))?;
        let path = resolve_field(&table, field).map_err(|m| bad(field, m))?;
        set_path(&mut table, &path, value["v"].clone());
    }
    from_table(table).map_err(|(field, message)| ProfileError::Field { field, message })
}

/// The profile as a complete TOML file that [`parse`] reads back to the same profile: a header saying
/// how to use it and what `sources` cite, then every field, each with its source (`sources` pairs a
/// field's or table's path with its source, as [`crate::profile::sources`] does) as a comment above it.
pub fn to_toml(profile: &Profile, header: &str, sources: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "{}", format!("# {line}").trim_end());
    }
    let cited: Vec<&(&str, &str)> =
        REFERENCES.iter().filter(|(key, _)| sources.iter().any(|(_, s)| s.contains(key))).collect();
    if !cited.is_empty() {
        out.push_str("#\n# Sources:\n");
        for (key, work) in cited {
            let _ = writeln!(out, "#   {key} {work}");
        }
    }
    write_table(&mut out, &to_table(profile), "", sources);
    out
}

/// Write `table`'s plain values, then each sub-table under its `[path]` header.
fn write_table(out: &mut String, table: &Table, path: &str, sources: &[(&str, &str)]) {
    let source = |p: &str| sources.iter().find(|(f, _)| *f == p).map(|(_, s)| *s);
    let join = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
    for (key, value) in table.iter().filter(|(_, v)| !v.is_table()) {
        if let Some(s) = source(&join(key)) {
            let _ = writeln!(out, "# {s}");
        }
        let _ = writeln!(out, "{key} = {value}");
    }
    for (key, value) in table.iter() {
        if let toml::Value::Table(sub) = value {
            let sub_path = join(key);
            out.push('\n');
            if let Some(s) = source(&sub_path) {
                let _ = writeln!(out, "# {s}");
            }
            let _ = writeln!(out, "[{sub_path}]");
            write_table(out, sub, &sub_path, sources);
        }
    }
}

/// The profile as a TOML table (every field present).
pub fn to_table(profile: &Profile) -> Table {
    Table::try_from(profile).expect("a profile serialises to a TOML table")
}

/// A value from a TOML table; the error is the dotted path of the field at fault and what is wrong.
fn from_table<T: DeserializeOwned>(table: Table) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let message = e.inner().message().trim().replace('\n', " ");
        let path = e.path().to_string();
        (if path == "." { String::new() } else { path }, message)
    })
}

/// `top` laid over `base`, tables merged key by key, any other value replaced.
fn merge(mut base: Table, top: Table) -> Table {
    for (key, value) in top {
        let merged = match (base.remove(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => toml::Value::Table(merge(b, t)),
            (_, v) => v,
        };
        base.insert(key, merged);
    }
    base
}

/// Every dotted path of `table`, tables and values.
fn paths(table: &Table, prefix: &str, out: &mut Vec<String>) {
    for (key, value) in table {
        let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        out.push(path.clone());
        if let toml::Value::Table(sub) = value {
            paths(sub, &path, out);
        }
    }
}

/// The full path of `field` in `table`: itself if it is one, else the one path that ends with it.
fn resolve_field(table: &Table, field: &str) -> Result<Vec<String>, String> {
    let mut all = vec![];
    paths(table, "", &mut all);
    let suffix = format!(".{field}");
    let found: Vec<&String> = match all.iter().find(|p| *p == field) {
        Some(exact) => vec![exact],
        None => all.iter().filter(|p| p.ends_with(&suffix)).collect(),
    };
    match found.as_slice() {
        [one] => Ok(one.split('.').map(str::to_string).collect()),
        [] => Err(format!("no such profile field (fields: {})", all.join(", "))),
        many => Err(format!(
            "ambiguous: {}; write the whole path",
            many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Set the value at `path` in `table`, creating tables on the way.
fn set_path(table: &mut Table, path: &[String], value: toml::Value) {
    match path {
        [] => {}
        [last] => {
            table.insert(last.clone(), value);
        }
        [first, rest @ ..] => {
            let entry = table.entry(first.clone()).or_insert_with(|| toml::Value::Table(Table::new()));
            if let toml::Value::Table(sub) = entry {
                set_path(sub, rest, value);
            }
        }
    }
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line of the item at dotted `path` if the file writes it.
fn locate_exact(text: &str, path: &str) -> Option<usize> {
    let at: Vec<&str> = path.split('.').collect();
    let doc = DeTable::parse(text).ok()?;
    find(doc.get_ref(), &at).filter(|(depth, _)| *depth == at.len()).map(|(_, offset)| line_of(text, offset))
}

/// The line of the deepest item along `path` that the file writes (a missing field's table, or the key
/// of a wrong value).
fn locate(text: &str, path: &[&str]) -> Option<usize> {
    let doc = DeTable::parse(text).ok()?;
    find(doc.get_ref(), path).map(|(_, offset)| line_of(text, offset))
}

/// How far along `path` the file goes, and the offset of the key reached last.
fn find(table: &DeTable<'_>, path: &[&str]) -> Option<(usize, usize)> {
    let (first, rest) = path.split_first()?;
    let (key, value) = table.iter().find(|(k, _)| k.get_ref() == first)?;
    let here = (1, key.span().start);
    match value.get_ref() {
        DeValue::Table(sub) => Some(find(sub, rest).map_or(here, |(d, o)| (d + 1, o))),
        _ => Some(here),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PROFILE_NAMES;
    use proptest::prelude::*;

    fn fails(text: &str) -> FileError {
        parse(text, "t.toml", "t").unwrap_err()
    }

    #[test]
    fn every_built_in_profile_reads_back_identical() {
        for name in PROFILE_NAMES {
            let p = Profile::by_name(name).unwrap();
            let text = to_toml(&p, "header", &crate::profile::sources(name));
            assert_eq!(parse(&text, "t.toml", "t").unwrap(), p, "{name}:\n{text}");
        }
    }

    #[test]
    fn shown_profiles_cite_their_sources() {
        let p = Profile::r640_silver4216();
        let text = to_toml(&p, "h", &crate::profile::sources(&p.name));
        assert!(
            text.contains("# [P0] \"2 DDIO LLC ways\" (default), [HW] IIO_LLC_WAYS = 0x600\nddio_ways = 2"),
            "{text}"
        );
        assert!(text.contains("#   [OPT] Intel 64"), "{text}");
    }

    #[test]
    fn every_field_is_documented() {
        let readme = include_str!("../README.md");
        let mut all = vec![];
        paths(&to_table(&Profile::r640_silver4216()), "", &mut all);
        for path in all.iter().filter(|p| !all.iter().any(|q| q.starts_with(&format!("{p}.")))) {
            let parent = path.rsplit_once('.').map_or("", |(p, _)| p);
            let named = |p: &str| readme.contains(&format!("| `{p}`")) || readme.contains(&format!(", `{p}`"));
            assert!(
                named(path) || named(parent),
                "field `{path}` is missing from crates/sim/README.md, \"Profile files\""
            );
        }
    }

    #[test]
    fn a_base_and_a_few_fields() {
        let p =
            parse("base = \"r640-silver4216\"\nddio_ways = 4\n[cpu.llc]\nways = 16\nsize = 33554432\n", "f", "mine")
                .unwrap();
        assert_eq!((p.name.as_str(), p.ddio_ways, p.cpu.llc.ways, p.cpu.cores), ("mine", 4, 16, 16));
        assert_eq!(p.cpu.llc_slices, Profile::r640_silver4216().cpu.llc_slices);
        let p = parse("base = \"r640-silver4216\"\ncpu.llc_slices = \"none\"\n", "f", "x").unwrap();
        assert_eq!(p.cpu.llc_slices, None);
        let p = parse("base = \"r640-silver4216\"\ncpu.llc_duel_start = \"mr161\"\n", "f", "x").unwrap();
        assert_eq!(p.cpu.llc_duel_start, crate::cache::DuelStart::Mr161);
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let e = fails("base = \"r640-silver4216\"\n[cpu]\ncores = 0\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("cpu.cores")), "{e}");
        let e = fails("base = \"r640-silver4216\"\n[cpu.llc]\nways = 1\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("cpu.llc.ways")), "{e}");
        let e = fails("base = \"r640-silver4216\"\n\n[nic]\nport_gbps = \"fast\"\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(4), Some("nic.port_gbps")), "{e}");
        let e = fails("base = \"r640-silver4216\"\n[nic]\nspeed = 3\n");
        assert!(e.line == Some(3) && e.message.contains("unknown field `speed`"), "{e}");
        let e = fails("base = \"r650\"\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("base")), "{e}");
        let e = fails("ddio_ways = 2\n");
        assert!(e.message.contains("missing field"), "{e}");
        let e = fails("base = \"r640-silver4216\"\n[dram]\n\ncurve = [[0.5, 80.0], [1.0, \"slow\"]]\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(4), Some("dram.curve[1][1]")), "{e}");
        let e = fails("base = \"r640-silver4216\"\nddio_ways = [\n");
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn overlays_resolve_short_paths_and_check_values() {
        let p = Profile::r640_silver4216();
        let q = overlay(&p, "llc.ways = 16; cpu.llc.size = 33554432; nic.port_gbps = 400").unwrap();
        assert_eq!((q.cpu.llc.ways, q.cpu.llc.size, q.nic.port_gbps), (16, 32 << 20, 400.0));
        assert!(overlay(&p, "ways = 3").unwrap_err().to_string().contains("ambiguous"));
        assert!(overlay(&p, "llc.wayz = 3").unwrap_err().to_string().contains("no such profile field"));
        assert!(overlay(&p, "ddio_ways = 12").unwrap_err().to_string().contains("exceed"));
        assert!(overlay(&p, "nic.ports = \"two\"").unwrap_err().to_string().contains("nic.ports"));
    }

    proptest! {
        #[test]
        fn any_valid_edit_reads_back(cores in 1usize..=32, ways in 1usize..=16, ddio in 0usize..=16,
                                     gbps in 1.0f64..2000.0, peak in 1.0f64..1000.0, sets_log in 11u32..16) {
            let mut p = Profile::r640_silver4216();
            p.cpu.cores = cores;
            p.cpu.llc = crate::profile::CacheGeom { size: (1 << sets_log) * ways * 64, ways, latency_cycles: 60 };
            p.ddio_ways = ddio.min(ways);
            p.nic.port_gbps = gbps;
            p.dram.peak_gbs = peak;
            prop_assume!(p.validate().is_ok());
            let text = to_toml(&p, "", &[]);
            prop_assert_eq!(parse(&text, "t.toml", "t").unwrap(), p);
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse(&text, "t.toml", "t");
        }
    }
}
