//! `rxlab --version` names the workspace version and the commit the binary was built from.

#[test]
fn version_names_the_commit() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rxlab")).arg("--version").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let expected = format!("rxlab {} (", env!("CARGO_PKG_VERSION"));
    assert!(text.starts_with(&expected), "{text}");
    let commit = text.trim_end().trim_start_matches(&expected).trim_end_matches(')');
    assert!(commit == "unknown" || commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "{text}");
}
