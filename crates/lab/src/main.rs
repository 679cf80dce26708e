//! `rxlab`: the command-line front end of the laboratory (DESIGN.md, "lab" layer).
//!
//! Every user error (a bad argument, a missing or malformed file) ends the program with one line on
//! stderr that names the input and what to do, and exit code 2; no panic reaches the user.

mod run;
mod trace;
mod traffic_args;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A laboratory for CPU–NIC receive interfaces: shRing, rxBisect, nicmem, COREC and Ensō side by side.
#[derive(Parser)]
#[command(name = "rxlab", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at start-up, so the size of the largest variant costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run one design with one app (no arguments: the built-in default experiment).
    Run(run::RunArgs),
    /// Generate, inspect and convert packet traces.
    #[command(subcommand)]
    Trace(trace::TraceCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Trace(cmd) => trace::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rxlab: {e:#}");
            ExitCode::from(2)
        }
    }
}
