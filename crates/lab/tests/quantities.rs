//! One grammar for quantities on the command line: every value that a subcommand's `--help` shows for an
//! option (its default and the examples in backticks) that looks like a count, size, rate or duration is
//! accepted by that option, walking every option of every subcommand.

use std::process::{Command, Output};

fn rxlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rxlab")).args(args).output().expect("run rxlab")
}

fn help(path: &[&str]) -> String {
    let mut args = path.to_vec();
    args.push("--help");
    let out = rxlab(&args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The subcommands listed under `Commands:` in a help text (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// Every subcommand path of `rxlab`, nested ones included.
fn commands() -> Vec<Vec<String>> {
    let mut all = vec![];
    let mut todo: Vec<Vec<String>> = subcommands(&help(&[])).into_iter().map(|c| vec![c]).collect();
    while let Some(path) = todo.pop() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        let nested = subcommands(&help(&words));
        if nested.is_empty() {
            all.push(path);
        } else {
            todo.extend(nested.into_iter().map(|c| [path.clone(), vec![c]].concat()));
        }
    }
    all
}

/// Each option that takes a value, with the text of its help entry.
fn options(help: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![];
    for line in help.lines() {
        let t = line.trim_start();
        let starts_entry = t.starts_with('-') && line.len() - t.len() <= 6;
        if starts_entry {
            let long = t.split_whitespace().find(|w| w.starts_with("--")).map(|w| w.trim_end_matches(','));
            let takes_value = t.contains(" <");
            match long {
                Some(name) if takes_value => out.push((name.to_string(), t.to_string())),
                _ => out.push((String::new(), String::new())),
            }
        } else if let Some(last) = out.last_mut() {
            last.1.push(' ');
            last.1.push_str(t);
        }
    }
    out.into_iter().filter(|(name, _)| !name.is_empty()).collect()
}

/// Whether `s` is written as a quantity: digits with an SI or binary suffix, a unit of time or of rate.
fn is_quantity(s: &str) -> bool {
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let units = [
        "", "k", "K", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "B", "KiB", "MiB", "GiB", "ns", "us", "ms", "s", "Mpps",
        "Kpps", "Gbps", "Mbps",
    ];
    !num.is_empty() && num.starts_with(|c: char| c.is_ascii_digit()) && units.contains(&unit)
}

/// The values an option's help entry shows: `[default: X]` and the examples in backticks.
fn shown_values(text: &str) -> Vec<String> {
    let mut values: Vec<String> = text.split('`').skip(1).step_by(2).map(String::from).collect();
    if let Some((_, rest)) = text.split_once("[default: ") {
        values.extend(rest.split(']').next().map(String::from));
    }
    values.into_iter().filter(|v| is_quantity(v)).collect()
}

#[test]
fn every_quantity_an_option_shows_is_accepted() {
    let mut checked = 0;
    for path in commands() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        for (option, text) in options(&help(&words)) {
            for value in shown_values(&text) {
                let mut args = words.clone();
                args.extend([option.as_str(), value.as_str(), "--help"]);
                let out = rxlab(&args);
                assert!(out.status.success(), "{args:?} refused: {}", String::from_utf8_lossy(&out.stderr));
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "only {checked} values checked: the help parser lost its way");
}

#[test]
fn counts_take_si_and_binary_suffixes() {
    for (option, value) in [("--kvs-keys", "1M"), ("--flows", "1Ki"), ("--cores", "16"), ("--kvs-hot-keys", "800K")] {
        let out = rxlab(&["run", option, value, "--help"]);
        assert!(out.status.success(), "{option} {value}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = rxlab(&["run", "--flows", "1x"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown suffix 'x'"), "{err}");
}

#[test]
fn the_walk_sees_every_subcommand() {
    let all: Vec<String> = commands().into_iter().map(|p| p.join(" ")).collect();
    for c in ["run", "reproduce", "profile show", "trace gen", "bench"] {
        assert!(all.iter().any(|a| a == c), "{c} missing from {all:?}");
    }
}
