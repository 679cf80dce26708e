//! `rxlab trace`: generate synthetic traces and inspect pcap/pcapng files.

use clap::Subcommand;

/// Subcommands of `rxlab trace`.
#[derive(Subcommand)]
pub enum TraceCommand {}

/// Run one `rxlab trace` subcommand.
pub fn run(cmd: TraceCommand) -> anyhow::Result<()> {
    match cmd {}
}
