//! `fwd`: send every packet back untouched; the floor of any network function (no packet byte is read).

use crate::App;
use ifaces::{CoreCtx, Packet, Probe};

/// The forwarder.
#[derive(Debug, Default)]
pub struct Fwd;

impl App for Fwd {
    #[inline]
    fn process<'c, P: Probe>(&mut self, _: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        tx.append(rx);
    }
}
