//! `fwd`: send every packet back; the floor of any network function. By default no packet byte is read;
//! with `mac=swap` it swaps each frame's Ethernet addresses first, as Ensō's forwarding example and
//! DPDK's `testpmd --forward-mode=macswap` do (Ensō §7.2.2, Figure 9).

use crate::params::Reader;
use crate::{App, AppError};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Packet, Probe};

/// The forwarder.
#[derive(Debug, Default)]
pub struct Fwd {
    swap_mac: bool,
}

/// Cycles of plain work per swapped frame beyond its touch: two 6-byte loads and stores.
const SWAP_WORK: u32 = 4;

impl Fwd {
    /// Build from parameters: `mac=keep|swap` (default keep).
    pub fn new(mut r: Reader<'_>) -> Result<Fwd, AppError> {
        let swap_mac = r.choice("mac", &["keep", "swap"])? == "swap";
        r.finish()?;
        Ok(Fwd { swap_mac })
    }
}

impl App for Fwd {
    #[inline]
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        if self.swap_mac {
            for pkt in rx.iter_mut().filter(|pkt| pkt.len() >= 12) {
                p.touch(pkt.addr(), 12, Access::Write);
                p.work(SWAP_WORK);
                let (dst, src) = pkt[..12].split_at_mut(6);
                dst.swap_with_slice(src);
            }
        }
        tx.append(rx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AppParams;
    use crate::harness::{TestCore, frame};

    #[test]
    fn swaps_the_ethernet_addresses_only_when_asked() {
        let mut f = frame("10.0.0.1", 1, "10.0.0.2", 2, 17, 64);
        f[..12].copy_from_slice(&[1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
        let core = TestCore::new();
        let mut swap = Fwd::new(AppParams::parse("mac=swap").unwrap().reader("fwd")).unwrap();
        let out = core.run(&mut swap, std::slice::from_ref(&f));
        assert_eq!(out[0][..12], [2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(out[0][12..], f[12..]);
        assert_eq!(core.run(&mut Fwd::default(), std::slice::from_ref(&f)), vec![f]);
    }
}
