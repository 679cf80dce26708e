//! `pingpong`: the responder of a request-response round-trip test (nicmem §3.2, DPDK's ping-pong with 64
//! and 1500 B packets): each packet goes back to its sender with Ethernet and IP addresses (and UDP/TCP
//! ports) swapped; an ICMP echo request becomes an echo reply. The payload, with the sender's
//! [`wire::Stamp`], is untouched, so the sender measures the round trip. Swapping addresses changes no
//! checksum (the one's-complement sum is order-independent); the ICMP type change is an incremental update.
//!
//! Parameters: none.

use crate::params::Reader;
use crate::{App, AppError, flow};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use wire::checksum::update16;
use wire::view::L3;

/// Cycles to swap three address pairs held in registers (loads and stores of 6, 4 or 16 and 2 bytes).
const SWAP_WORK: u32 = 8;
/// ICMP protocol number.
const ICMP: u8 = 1;

/// The responder.
#[derive(Debug, Default)]
pub struct PingPong {
    replied: u64,
    malformed: u64,
}

impl PingPong {
    /// Build from parameters (none).
    pub fn new(r: Reader<'_>) -> Result<PingPong, AppError> {
        r.finish()?;
        Ok(PingPong::default())
    }
}

/// Swap the `n`-byte fields at `a` and `a + n` of `f`.
fn swap(f: &mut [u8], a: usize, n: usize) {
    let (x, y) = f[a..a + 2 * n].split_at_mut(n);
    x.swap_with_slice(y);
}

impl App for PingPong {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            let addr = pkt.addr();
            let Ok(mut v) = flow::parse(p, &mut pkt) else {
                self.malformed += 1;
                continue;
            };
            let (l3, l4, payload) = (v.l3_offset(), v.l4_offset(), v.payload_offset());
            let (family, proto) = (v.l3(), v.five_tuple().proto);
            let f = v.frame_mut();
            swap(f, 0, 6);
            match family {
                L3::V4 => swap(f, l3 + 12, 4),
                L3::V6 => swap(f, l3 + 8, 16),
            }
            if matches!(proto, 6 | 17) && payload >= l4 + 4 {
                swap(f, l4, 2);
            }
            // ICMP echo request (type 8) -> echo reply (type 0); type and code are one checksummed word.
            if family == L3::V4 && proto == ICMP && f.len() >= l4 + 4 && f[l4] == 8 {
                let c = update16(
                    u16::from_be_bytes([f[l4 + 2], f[l4 + 3]]),
                    u16::from_be_bytes([8, f[l4 + 1]]),
                    u16::from_be_bytes([0, f[l4 + 1]]),
                );
                f[l4] = 0;
                f[l4 + 2..l4 + 4].copy_from_slice(&c.to_be_bytes());
            }
            p.work(SWAP_WORK);
            p.touch(addr, payload.min(l4 + 4), Access::Write);
            self.replied += 1;
            tx.push(pkt);
        }
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([("replied".into(), self.replied as f64), ("drop_malformed".into(), self.malformed as f64)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;
    use wire::PacketView;

    #[test]
    fn replies_go_back_with_valid_checksums_and_the_stamp() {
        let core = TestCore::new();
        let mut app = PingPong::new(AppParams::new().reader("pingpong")).unwrap();
        let mut req = frame("10.0.0.1", 7, "10.0.0.2", 9, 17, 1518);
        wire::Stamp { seq: 3, tx_ns: 99 }.write(&mut req[42..]).unwrap();
        let mut v = PacketView::new_checked(&mut req[..]).unwrap();
        wire::rewrite::fill_l4_checksum(&mut v);
        let v6 = wire::build_frame(
            &wire::FrameSpec {
                tuple: wire::FiveTuple {
                    src: "2001:db8::1".parse().unwrap(),
                    dst: "2001:db8::2".parse().unwrap(),
                    src_port: 1,
                    dst_port: 2,
                    proto: 6,
                },
                frame_len: 128,
            },
            b"x",
        )
        .unwrap();
        // An ICMP echo request: IPv4 protocol 1, type 8, checksummed.
        let mut icmp = frame("10.0.0.1", 0, "10.0.0.2", 0, 17, 64);
        icmp[14 + 9] = ICMP;
        wire::rewrite::fill_ipv4_checksum(&mut icmp, 14);
        icmp[34..42].copy_from_slice(&[8, 0, 0, 0, 0, 1, 0, 1]);
        let c = wire::checksum::checksum(&icmp[34..]);
        icmp[36..38].copy_from_slice(&c.to_be_bytes());
        let out = core.run(&mut app, &[req.clone(), v6.clone(), icmp.clone(), vec![0; 3]]);
        assert_eq!(out.len(), 3);
        for (o, i) in out.iter().zip([&req, &v6]) {
            let (a, b) = (PacketView::new_checked(&o[..]).unwrap(), PacketView::new_checked(&i[..]).unwrap());
            assert_eq!(*a.five_tuple(), b.five_tuple().reversed());
            assert!(wire::rewrite::checksums_valid(&a));
            assert_eq!(a.payload(), b.payload());
            assert_eq!((&o[..6], &o[6..12]), (&i[6..12], &i[..6]));
        }
        assert_eq!(wire::Stamp::read(&out[0][42..]), Some(wire::Stamp { seq: 3, tx_ns: 99 }));
        assert_eq!(out[2][34], 0, "echo reply");
        assert_eq!(wire::checksum::checksum(&out[2][34..]), 0, "ICMP checksum");
        assert_eq!(app.metrics()["drop_malformed"], 1.0);
    }
}
