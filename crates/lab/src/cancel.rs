//! SIGINT and SIGTERM: stop at once, leave no temporary behind, keep what is complete, say what that is,
//! and exit with the conventional status (128 + the signal: 130, 143).
//!
//! A signal runs no destructor, so nothing cooperative can be relied on: a handler thread takes the
//! [`critical`] lock (so no finished point is half-appended to a log), removes every uncommitted
//! temporary ([`traffic::atomic::abandon_all`]), prints one line with what the command registered as
//! kept ([`keeps`]) and exits. Complete files are always whole: results and traces are committed by
//! rename, logs are appended line by line under the lock.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::IsTerminal;
use std::sync::{Mutex, MutexGuard};

/// What the running command has kept so far, as a phrase; `None`: nothing.
type Kept = Option<Box<dyn Fn() -> String + Send>>;

static STATE: Mutex<Kept> = Mutex::new(None);

fn state() -> MutexGuard<'static, Kept> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Handle SIGINT and SIGTERM from now on (once, at the start of `main`).
pub fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
            stop(signal);
        }
    })?;
    Ok(())
}

/// Register what the command keeps if interrupted now: `kept` describes it when the signal comes (e.g.
/// by counting the finished points on disk).
pub fn keeps(kept: impl Fn() -> String + Send + 'static) {
    *state() = Some(Box::new(kept));
}

/// Run `f` (a write that must be whole, such as appending one line to a log) without being interrupted
/// in its middle: a signal waits for it.
pub fn critical<R>(f: impl FnOnce() -> R) -> R {
    let _held = state();
    f()
}

fn stop(signal: i32) -> ! {
    let kept = state();
    let removed = traffic::atomic::abandon_all();
    let name = if signal == SIGINT { "SIGINT" } else { "SIGTERM" };
    let kept = kept.as_ref().map_or_else(|| "nothing".to_string(), |k| k());
    let removed = match removed.len() {
        0 => String::new(),
        1 => format!("; removed the unfinished {}", removed[0].display()),
        n => format!("; removed {n} unfinished files"),
    };
    // Start on a clean line if a progress bar is being drawn there.
    let clear = if std::io::stderr().is_terminal() { "\r\x1b[2K" } else { "" };
    eprintln!("{clear}rxlab: interrupted by {name}; kept {kept}{removed}");
    std::process::exit(128 + signal)
}
