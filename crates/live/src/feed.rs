//! How the NIC thread takes its next frames from the pre-built trace: straight from memory (each frame
//! stamped in place), or EnsōGen-style (Ensō Appendix B): the whole trace laid out once in pre-filled Ensō
//! TX pipes, sent with one TX notification per pipe, so that the generator costs almost nothing per packet.
//! EnsōGen's hardware stamps packets as they leave; here the NIC thread copies each frame out of its pipe
//! once to write the stamp, since the pipes hold the trace for every pass.

use crate::source::{Frame, Prebuilt};
use ifaces::NoProbe;
use ifaces::enso::ensogen::{EnsoGen, GenError};

/// Bytes of each EnsōGen TX pipe: 2 MiB, Ensō's pipe size (Appendix B).
pub const ENSOGEN_PIPE: usize = 2 << 20;

/// Where the next frames come from.
#[derive(Debug)]
pub enum Feed {
    /// The pre-built frames, in order, stamped in place.
    Memory,
    /// The same frames, in order, from pre-filled Ensō TX pipes.
    EnsoGen {
        /// The pipes.
        generator: Box<EnsoGen>,
        /// One frame's worth of room for stamping.
        scratch: Vec<u8>,
    },
}

impl Prebuilt {
    /// Send the frames EnsōGen-style from now on: lay them out in pre-filled TX pipes.
    pub fn use_ensogen(&mut self) -> Result<(), GenError> {
        let generator = Box::new(EnsoGen::new(self.frames.iter().map(|f| f.bytes.as_slice()), ENSOGEN_PIPE)?);
        self.feed = Feed::EnsoGen { generator, scratch: vec![0; self.max_len()] };
        Ok(())
    }

    /// Hand the next `n` frames (looping over the trace) to `deliver`, with bytes it may stamp.
    pub fn offer(&mut self, p: &mut NoProbe, n: usize, mut deliver: impl FnMut(&Frame, &mut [u8])) {
        let Prebuilt { frames, feed, next, .. } = self;
        let count = frames.len();
        let mut advance = || {
            let i = *next;
            *next = if i + 1 == count { 0 } else { i + 1 };
            i
        };
        match feed {
            Feed::Memory => {
                for _ in 0..n {
                    let f = &mut frames[advance()];
                    let mut bytes = std::mem::take(&mut f.bytes);
                    deliver(f, &mut bytes);
                    f.bytes = bytes;
                }
            }
            Feed::EnsoGen { generator, scratch } => {
                generator.send(
                    p,
                    &mut |bytes: &[u8]| {
                        let f = &frames[advance()];
                        let out = &mut scratch[..bytes.len()];
                        out.copy_from_slice(bytes);
                        deliver(f, out);
                    },
                    n,
                );
            }
        }
    }
}
