//! References into the manual stay valid: every `docs/PAGE.md, "Section"` written in a source comment, an
//! experiment file, a profile's source text or a page names a page that exists and a heading of it that
//! starts with that section's words, and every relative Markdown link of the README and `docs/` names a
//! file that exists.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file below `dir` with one of `exts`, skipping build output.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() && name != "target" && !name.starts_with('.') {
            files(&path, exts, out);
        } else if path.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
            out.push(path);
        }
    }
}

/// The `(page, section)` references in `text`: `docs/PAGE.md, "Section"`, quotes possibly escaped and the
/// comma possibly followed by a line break and a comment marker.
fn references(text: &str) -> Vec<(String, String)> {
    let mut refs = vec![];
    for (i, _) in text.match_indices("docs/") {
        let rest = &text[i + 5..];
        let Some(md) = rest.find(".md") else { continue };
        let page = &rest[..md];
        if page.is_empty() || !page.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            continue;
        }
        let Some(after) = rest[md + 3..].strip_prefix(',') else { continue };
        let after = after.trim_start_matches(|c: char| c.is_whitespace() || c == '#' || c == '/' || c == '!');
        let after = after.trim_start_matches('\\');
        if let Some(title) = after.strip_prefix('"') {
            let end = title.find(['"', '\\']).unwrap_or(title.len());
            refs.push((page.to_string(), title[..end].split_whitespace().collect::<Vec<_>>().join(" ")));
        }
    }
    refs
}

#[test]
fn section_references_name_existing_headings() {
    let mut all = vec![];
    for dir in ["crates", "experiments", "docs"] {
        files(&root().join(dir), &["rs", "toml", "md"], &mut all);
    }
    all.push(root().join("README.md"));
    let mut checked = 0;
    for file in all {
        let text = std::fs::read_to_string(&file).unwrap();
        for (page, section) in references(&text) {
            let path = root().join("docs").join(format!("{page}.md"));
            let doc = std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{}: docs/{page}.md does not exist", file.display()));
            let found = doc
                .lines()
                .filter_map(|l| l.strip_prefix('#'))
                .any(|h| h.trim_start_matches('#').trim().starts_with(&section));
            assert!(found, "{}: docs/{page}.md has no section \"{section}\"", file.display());
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} references found");
}

#[test]
fn relative_links_name_existing_files() {
    let mut pages = vec![root().join("README.md")];
    files(&root().join("docs"), &["md"], &mut pages);
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let target = &target[..target.find(')').unwrap_or(0)];
            if target.is_empty() || target.contains("://") || target.starts_with('#') {
                continue;
            }
            let path = page.parent().unwrap().join(target.split('#').next().unwrap());
            assert!(path.exists(), "{}: the link to {target} names no file", page.display());
        }
    }
}

#[test]
fn references_are_found_across_lines_and_escapes() {
    let text = "read(\"docs/model.md\") (docs/model.md, \"Two states\") and (docs/model.md,\n# \"Runs long\nenough\") and docs/model.md, \\\"The LLC\\\"";
    assert_eq!(
        references(text),
        vec![
            ("model".into(), "Two states".into()),
            ("model".into(), "Runs long enough".into()),
            ("model".into(), "The LLC".into())
        ]
    );
}
