//! Network functions and servers (DESIGN.md, "apps" layer), written once over the burst API and run
//! unchanged on every design in both engines.
//!
//! The burst API, identical for every design (DPDK's run-to-completion model): a core receives up to a
//! burst of packets, the app processes them, moving each to the transmit vector or dropping it (which
//! frees its buffer), and the core transmits. Apps report the memory they touch (packet bytes, tables)
//! and their plain work through the [`Probe`], so the simulator charges them.

pub mod echo;
pub mod fwd;

use ifaces::{CoreCtx, Metrics, Packet, Probe};

/// A network function over bursts of packets.
pub trait App: Send {
    /// Process the received packets in `rx` (draining it): push each to `tx` to send it, or drop it.
    fn process<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
    );

    /// App-specific counters (drops of malformed packets, table hits, ...).
    fn metrics(&self) -> Metrics {
        Metrics::new()
    }
}

/// Why an app cannot be built from its name and parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// No app of that name.
    #[error("unknown app '{0}' (known: {known})", known = APP_NAMES.join(", "))]
    Unknown(String),
    /// A parameter is invalid.
    #[error("app {app}: {message}")]
    Param {
        /// The app.
        app: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Names accepted by [`AnyApp::new`].
pub const APP_NAMES: &[&str] = &["echo", "fwd"];

/// Any app, chosen at run time by name; dispatches to the concrete app (one `match`, no virtual calls).
#[derive(Debug)]
pub enum AnyApp {
    /// [`echo::Echo`].
    Echo(echo::Echo),
    /// [`fwd::Fwd`].
    Fwd(fwd::Fwd),
}

impl AnyApp {
    /// Build the app called `name` for core `core`.
    pub fn new(name: &str, _core: usize) -> Result<AnyApp, AppError> {
        match name {
            "echo" => Ok(AnyApp::Echo(echo::Echo::default())),
            "fwd" => Ok(AnyApp::Fwd(fwd::Fwd)),
            other => Err(AppError::Unknown(other.to_string())),
        }
    }
}

impl App for AnyApp {
    #[inline]
    fn process<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
    ) {
        match self {
            AnyApp::Echo(a) => a.process(p, core, rx, tx),
            AnyApp::Fwd(a) => a.process(p, core, rx, tx),
        }
    }

    fn metrics(&self) -> Metrics {
        match self {
            AnyApp::Echo(a) => a.metrics(),
            AnyApp::Fwd(a) => a.metrics(),
        }
    }
}
