//! `rxlab`: the command-line front end of the laboratory (DESIGN.md, "lab" layer).
//!
//! Every user error (a bad argument, a missing or malformed file) ends the program with one line on
//! stderr that names the input and what to do, and exit code 2; no panic reaches the user. SIGINT and
//! SIGTERM stop any command at once with one line saying what it kept, exit code 130 or 143 ([`cancel`]).

use clap::{Parser, Subcommand};
use lab::{advise, bench, cancel, jitter, merge, profile_cmd, report, reproduce, run, soak, sweep, trace};
use std::process::ExitCode;

/// A laboratory for CPU–NIC receive interfaces: shRing, rxBisect, nicmem, COREC and Ensō side by side.
#[derive(Parser)]
#[command(name = "rxlab", version = lab::build::VERSION, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment file, or one run given by flags (nothing: the built-in headline comparison).
    Run(run::RunArgs),
    /// Run every point of an experiment's sweep in parallel into a results directory (resumable).
    Sweep(sweep::SweepArgs),
    /// Join the results directories of a sharded sweep.
    Merge(merge::MergeArgs),
    /// Draw figures and a self-contained report.html from a results directory.
    Report(report::ReportArgs),
    /// Run the papers' claims in experiments/ and print the verdict table.
    Reproduce(reproduce::ReproduceArgs),
    /// rxBisect's ring sizing rules and each design's I/O working set on a machine profile.
    Advise(advise::AdviseArgs),
    /// Machine profiles: list, show (a file to copy and edit), check a file, detect this host.
    #[command(subcommand)]
    Profile(profile_cmd::ProfileCommand),
    /// Time each design's receive path between two threads against an SPSC ring of packet pointers.
    Bench(bench::BenchArgs),
    /// Measure this machine's host noise (gaps in a pinned spin, as sysjitter) as a profile's `noise`.
    Jitter(jitter::JitterArgs),
    /// Long runs that check the invariants over 10^9 simulated packets and live minutes (not for CI).
    Soak(soak::SoakArgs),
    /// Generate, inspect and convert packet traces.
    #[command(subcommand)]
    Trace(trace::TraceCommand),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // clap's own errors span several lines (usage, hints); keep the first, the one that names the
            // argument, with the indented lines right after it that list arguments, so every bad input is
            // one line.
            let text = e.to_string();
            let mut lines = text.lines();
            let first = lines.next().unwrap_or_default().trim_start_matches("error: ");
            let named: Vec<&str> = lines.take_while(|l| l.starts_with("  ")).map(str::trim).collect();
            let sep = if named.is_empty() { "" } else { " " };
            eprintln!("rxlab: {first}{sep}{} (see --help)", named.join(", "));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = cancel::install() {
        eprintln!("rxlab: cannot handle SIGINT and SIGTERM: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Report(args) => report::run(args),
        Command::Reproduce(args) => reproduce::run(args),
        Command::Advise(args) => advise::run(args),
        Command::Profile(cmd) => profile_cmd::run(cmd),
        Command::Bench(args) => bench::run(args),
        Command::Jitter(args) => jitter::run(args),
        Command::Soak(args) => soak::run(args),
        Command::Trace(cmd) => trace::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rxlab: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
