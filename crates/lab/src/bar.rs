//! Progress bars on stderr, drawn only when stderr is a terminal (indicatif hides them otherwise): trace
//! generation, and one long run (a simulation's virtual time, a live run's seconds).

use crate::ndr::NdrOptions;
use crate::params::Params;
use crate::point::{self, Config, Outcome};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How often a run's bar is redrawn.
const TICK: Duration = Duration::from_millis(200);

/// A bar of `len` steps drawn with indicatif's `template`.
pub fn new(len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    bar
}

/// Seconds as short text: `12.3 ms`, `4.5 s`.
fn seconds(s: f64) -> String {
    match s {
        s if s < 1e-3 => format!("{:.1} µs", s * 1e6),
        s if s < 1.0 => format!("{:.1} ms", s * 1e3),
        s => format!("{s:.1} s"),
    }
}

/// Run the point of resolved parameters `p` as [`point::run`] does, with a bar over its virtual time
/// (simulation) or wall-clock seconds (live). A no-drop-rate search and `--trials`, which run many
/// times, have none.
pub fn run_point(p: &Params) -> Result<Outcome> {
    if NdrOptions::from_params(p)?.is_some() || p.trials.is_some_and(|n| n != 1) {
        return point::run(p);
    }
    let cfg = point::build(p)?;
    let (total_s, what) = match &cfg {
        Config::Sim(c) => (c.duration_ps as f64 * 1e-12, "virtual time"),
        Config::Live(c) => ((c.warmup + c.duration).as_secs_f64(), "running"),
    };
    let bar = new(1000, "{bar:40} {msg}  {elapsed} elapsed");
    let progress = sim::Progress::default();
    let (done, ticks) = channel::<()>();
    let start = Instant::now();
    let report = std::thread::scope(|s| {
        if !bar.is_hidden() {
            let (bar, progress, cfg) = (&bar, &progress, &cfg);
            s.spawn(move || {
                while ticks.recv_timeout(TICK) == Err(RecvTimeoutError::Timeout) {
                    let at_s = match cfg {
                        Config::Sim(_) => progress.reached_ps() as f64 * 1e-12,
                        Config::Live(_) => start.elapsed().as_secs_f64().min(total_s),
                    };
                    bar.set_position((1000.0 * at_s / total_s) as u64);
                    bar.set_message(format!("{what} {} of {}", seconds(at_s), seconds(total_s)));
                }
            });
        }
        let report = point::report_observed(&cfg, &progress);
        drop(done);
        report
    });
    bar.finish_and_clear();
    report?.outcome()
}
