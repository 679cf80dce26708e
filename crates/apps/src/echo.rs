//! `echo`: read and increment one payload byte of each packet and send it back (Ensō §7.2.1's echo
//! server, which touches every packet once). With `reply=no` it drops the packet after incrementing
//! it: Ensō §7.2.3's Table 1 program, "receives and increments packets (but does not send them back)".

use crate::params::Reader;
use crate::{App, AppError};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Packet, Probe};

/// The echo server.
#[derive(Debug)]
pub struct Echo {
    reply: bool,
}

impl Default for Echo {
    fn default() -> Self {
        Echo { reply: true }
    }
}

/// Cycles of plain work per packet beyond the memory touches: a load, an add and a store.
const WORK: u32 = 4;

impl Echo {
    /// Build from parameters: `reply=yes|no` (default yes).
    pub fn new(mut r: Reader<'_>) -> Result<Echo, AppError> {
        let reply = r.choice("reply", &["yes", "no"])? == "yes";
        r.finish()?;
        Ok(Echo { reply })
    }
}

impl App for Echo {
    #[inline]
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            if let Some(last) = pkt.len().checked_sub(1) {
                p.touch(pkt.addr() + last, 1, Access::Write);
                p.work(WORK);
                pkt[last] = pkt[last].wrapping_add(1);
            }
            if self.reply {
                tx.push(pkt);
            }
        }
    }

    fn sends(&self) -> bool {
        self.reply
    }
}
