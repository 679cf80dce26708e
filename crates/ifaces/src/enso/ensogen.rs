//! EnsōGen's transmit path (Ensō Appendix B): a whole trace laid out once, at startup, in pre-filled TX
//! pipes; at run time each pipe is sent with a single TX notification covering its whole content, round
//! robin over the pipes, so generating costs the generator almost nothing per packet.
//!
//! A device-side facility for an engine's NIC thread: build it from the trace's frames, then call
//! [`EnsoGen::send`] where the NIC thread would otherwise produce frames one by one:
//!
//! ```
//! use ifaces::enso::ensogen::EnsoGen;
//! let frames = vec![vec![1u8; 60], vec![2u8; 1000]];
//! let mut g = EnsoGen::new(frames.iter().map(|f| f.as_slice()), 4096).unwrap();
//! let mut seen = vec![];
//! let n = g.send(&mut ifaces::NoProbe::default(), &mut |f: &[u8]| seen.push(f[0]), 5);
//! assert_eq!((n, seen), (5, vec![1, 2, 1, 2, 1]));
//! ```

use super::mirror::Mirror;
use super::pipe::{PipeShared, TxPipeSw};
use crate::probe::Probe;
use crate::sync::Arc;

/// Why a generator cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    /// The trace holds no frame.
    #[error("the trace holds no frame to send")]
    Empty,
    /// A frame does not fit one pipe.
    #[error("frame {index} ({len} B) does not fit a {pipe} B pipe; use larger pipes")]
    TooLong {
        /// Its index in the trace.
        index: usize,
        /// Its length.
        len: usize,
        /// The pipe size.
        pipe: usize,
    },
    /// A pipe cannot be mapped.
    #[error(transparent)]
    Map(#[from] super::mirror::MirrorError),
}

/// One pre-filled pipe: its memory, the end of its content and its frame count.
#[derive(Debug)]
struct Filled {
    pipe: Arc<PipeShared>,
    end: u64,
}

/// A trace in pre-filled TX pipes.
#[derive(Debug)]
pub struct EnsoGen {
    pipes: Vec<Filled>,
    current: usize,
    pos: Option<u64>,
    notifications: u64,
}

impl EnsoGen {
    /// Lay `frames` out, in order, in as many TX pipes of `pipe_size` bytes as they need.
    pub fn new<'a>(frames: impl IntoIterator<Item = &'a [u8]>, pipe_size: usize) -> Result<EnsoGen, GenError> {
        let p = &mut crate::probe::NoProbe::default();
        let mut pipes = Vec::new();
        let mut fill = TxPipeSw::new(PipeShared::new(Mirror::new(pipe_size)?));
        let mut current = fill.shared().clone();
        for (index, f) in frames.into_iter().enumerate() {
            if fill.append(p, f).is_some() {
                continue;
            }
            if fill.tail() == 0 {
                return Err(GenError::TooLong { index, len: f.len(), pipe: pipe_size });
            }
            pipes.push(Filled { pipe: current, end: fill.tail() });
            fill = TxPipeSw::new(PipeShared::new(Mirror::new(pipe_size)?));
            current = fill.shared().clone();
            if fill.append(p, f).is_none() {
                return Err(GenError::TooLong { index, len: f.len(), pipe: pipe_size });
            }
        }
        if fill.tail() > 0 {
            pipes.push(Filled { pipe: current, end: fill.tail() });
        }
        if pipes.is_empty() {
            return Err(GenError::Empty);
        }
        Ok(EnsoGen { pipes, current: 0, pos: None, notifications: 0 })
    }

    /// Pipes the trace fills.
    pub fn pipes(&self) -> usize {
        self.pipes.len()
    }

    /// Send up to `budget` frames to `wire`, continuing the trace where the last call stopped and looping
    /// over it; starting a pipe costs one TX notification. Returns the frames sent.
    pub fn send<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        let mut sent = 0;
        while sent < budget {
            let f = &self.pipes[self.current];
            let from = match self.pos {
                Some(pos) => pos,
                None => {
                    self.notifications += 1;
                    0
                }
            };
            // The generator filled these pipes at startup and never writes them again.
            let (to, n) = f.pipe.transmit(p, from, f.end, budget - sent, wire);
            sent += n;
            if to >= f.end {
                self.current = (self.current + 1) % self.pipes.len();
                self.pos = None;
            } else {
                self.pos = Some(to);
            }
        }
        sent
    }

    /// TX notifications used so far (one per pipe pass).
    pub fn notifications(&self) -> u64 {
        self.notifications
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::NoProbe;

    #[test]
    fn a_trace_spans_pipes_and_loops_with_one_notification_per_pipe() {
        let page = super::super::mirror::page_size();
        let frames: Vec<Vec<u8>> = (0..200u32).map(|i| vec![i as u8; 60 + (i as usize % 3) * 64]).collect();
        let mut g = EnsoGen::new(frames.iter().map(Vec::as_slice), page).unwrap();
        assert!(g.pipes() > 1);
        let mut out = vec![];
        let n = g.send(&mut NoProbe::default(), &mut |f: &[u8]| out.push(f.to_vec()), 400);
        assert_eq!(n, 400);
        assert_eq!(&out[..200], &frames[..]);
        assert_eq!(&out[200..], &frames[..]);
        assert_eq!(g.notifications(), 2 * g.pipes() as u64);
        assert_eq!(EnsoGen::new(std::iter::empty(), page).unwrap_err(), GenError::Empty);
        let big = vec![0u8; page];
        assert!(matches!(EnsoGen::new([big.as_slice()], page), Err(GenError::TooLong { index: 0, .. })));
    }
}
