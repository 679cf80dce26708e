//! `echo`: read and increment one payload byte of each packet and send it back (Ensō §7.2.1's echo
//! server, which touches every packet once).

use crate::App;
use ifaces::probe::Access;
use ifaces::{CoreCtx, Packet, Probe};

/// The echo server.
#[derive(Debug, Default)]
pub struct Echo;

/// Cycles of plain work per packet beyond the memory touches: a load, an add and a store.
const WORK: u32 = 4;

impl App for Echo {
    #[inline]
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            if let Some(last) = pkt.len().checked_sub(1) {
                p.touch(pkt.addr() + last, 1, Access::Write);
                p.work(WORK);
                pkt[last] = pkt[last].wrapping_add(1);
            }
            tx.push(pkt);
        }
    }
}
