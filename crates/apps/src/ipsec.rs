//! `ipsec`: the ipsec-gw workload of COREC §4 (DPDK's IPsec security gateway): a per-flow policy sends one
//! third of the flows out unchanged, drops one third, and encrypts one third in software and forwards it.
//! Encryption is ESP in transport mode (RFC 4303) with AES-128-GCM (RFC 4106) from the `aes-gcm` crate:
//! the IP payload becomes `SPI | sequence | IV | AES-GCM(payload | padding | pad length | next header) |
//! ICV`, the IP protocol becomes 50 and the header checksum is recomputed.
//!
//! Parameters: none.

use crate::flow::{self, tuple_hash};
use crate::params::Reader;
use crate::{App, AppError};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, KeyInit, Nonce};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use wire::view::L3;

/// The security association's key (a fixed test key: the lab measures cost, not secrecy).
pub const KEY: [u8; 16] = *b"rxlab-ipsec-key!";
/// The salt completing the 12-byte GCM nonce (RFC 4106 §4).
pub const SALT: [u8; 4] = [0x5a, 0x17, 0x5a, 0x17];
/// The security parameter index of the outbound SA.
pub const SPI: u32 = 0x1000;
/// ESP header (SPI, sequence) plus the 8-byte IV.
pub const ESP_HEADER: usize = 16;
/// The AES-GCM ICV.
pub const ICV: usize = 16;
/// IP protocol number of ESP.
pub const ESP_PROTO: u8 = 50;
/// Cycles for the policy lookup and the ESP framing around the cipher: hashing the 5-tuple, moving the
/// payload by 16 bytes, the trailer and the header checksum.
const FRAME_WORK: u32 = 80;
/// Cycles of AES-128-GCM with AES-NI and carry-less multiply: about 150 to set up (key schedule is
/// cached; counter block, hash subkey powers) and about one per byte.
const GCM_SETUP_WORK: u32 = 150;

/// What the policy does with a flow (COREC §4: a third each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Send out unchanged.
    Forward,
    /// Discard.
    Drop,
    /// Encrypt with ESP and send out.
    Encrypt,
}

/// The policy of a flow with 5-tuple hash `hash`.
pub fn action(hash: u64) -> Action {
    match hash % 3 {
        0 => Action::Forward,
        1 => Action::Drop,
        _ => Action::Encrypt,
    }
}

/// The gateway.
pub struct Ipsec {
    /// Boxed: the expanded key schedules are 800 bytes, kept out of the app enum.
    cipher: Box<Aes128Gcm>,
    seq: u32,
    forwarded: u64,
    dropped: u64,
    encrypted: u64,
    malformed: u64,
    not_ipv4: u64,
    too_big: u64,
}

impl std::fmt::Debug for Ipsec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ipsec(seq {}, {} encrypted)", self.seq, self.encrypted)
    }
}

impl Ipsec {
    /// Build from parameters (none).
    pub fn new(r: Reader<'_>) -> Result<Ipsec, AppError> {
        r.finish()?;
        Ok(Ipsec {
            cipher: Box::new(Aes128Gcm::new(&KEY.into())),
            seq: 0,
            forwarded: 0,
            dropped: 0,
            encrypted: 0,
            malformed: 0,
            not_ipv4: 0,
            too_big: 0,
        })
    }

    /// Encapsulate the IP payload at `off..end` of `frame` (whose buffer may grow to `capacity`) in ESP;
    /// returns the new frame length, or `None` if it would not fit.
    fn encrypt(&mut self, frame: &mut [u8], l3: usize, off: usize, end: usize) -> Option<usize> {
        let n = end - off;
        let pad = (4 - (n + 2) % 4) % 4;
        let body = n + pad + 2;
        let new_end = off + ESP_HEADER + body + ICV;
        if new_end > frame.len() {
            return None;
        }
        let proto = frame[l3 + 9];
        frame.copy_within(off..end, off + ESP_HEADER);
        let trailer = off + ESP_HEADER + n;
        for (i, b) in frame[trailer..trailer + pad].iter_mut().enumerate() {
            *b = i as u8 + 1; // RFC 4303 §2.4: padding bytes 1, 2, 3, ...
        }
        frame[trailer + pad] = pad as u8;
        frame[trailer + pad + 1] = proto;
        self.seq = self.seq.wrapping_add(1);
        let mut esp = [0u8; ESP_HEADER];
        esp[..4].copy_from_slice(&SPI.to_be_bytes());
        esp[4..8].copy_from_slice(&self.seq.to_be_bytes());
        // The IV is the 64-bit sequence number: unique per packet under one key (RFC 4106 §3.1).
        esp[8..].copy_from_slice(&u64::from(self.seq).to_be_bytes());
        frame[off..off + ESP_HEADER].copy_from_slice(&esp);
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(&SALT);
        nonce[4..].copy_from_slice(&esp[8..]);
        let (aad, rest) = frame[off..].split_at_mut(8);
        let data = &mut rest[8..8 + body];
        let tag = self.cipher.encrypt_in_place_detached(Nonce::from_slice(&nonce), aad, data).ok()?;
        frame[new_end - ICV..new_end].copy_from_slice(&tag);
        // IP header: new total length and protocol, checksum recomputed.
        frame[l3 + 2..l3 + 4].copy_from_slice(&((new_end - l3) as u16).to_be_bytes());
        frame[l3 + 9] = ESP_PROTO;
        wire::rewrite::fill_ipv4_checksum(frame, l3);
        Some(new_end.max(60))
    }
}

impl App for Ipsec {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            let addr = pkt.addr();
            let (l3, off, hash) = match flow::parse(p, &mut pkt) {
                Ok(v) if v.l3() == L3::V4 => (v.l3_offset(), v.l4_offset(), tuple_hash(v.five_tuple())),
                Ok(_) => {
                    self.not_ipv4 += 1;
                    continue;
                }
                Err(_) => {
                    self.malformed += 1;
                    continue;
                }
            };
            p.work(FRAME_WORK);
            match action(hash) {
                Action::Forward => {
                    self.forwarded += 1;
                    tx.push(pkt);
                }
                Action::Drop => self.dropped += 1,
                Action::Encrypt => {
                    // The parser checked that the IP total length lies within the frame.
                    let end = l3 + usize::from(u16::from_be_bytes([pkt[l3 + 2], pkt[l3 + 3]]));
                    pkt.set_len(pkt.capacity());
                    match self.encrypt(&mut pkt, l3, off, end) {
                        Some(len) => {
                            pkt.set_len(len);
                            p.work(GCM_SETUP_WORK + (end - off) as u32);
                            p.touch(addr + off, len - off, Access::Write);
                            self.encrypted += 1;
                            tx.push(pkt);
                        }
                        None => self.too_big += 1,
                    }
                }
            }
        }
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("forwarded".into(), self.forwarded as f64),
            ("encrypted".into(), self.encrypted as f64),
            ("dropped_by_policy".into(), self.dropped as f64),
            ("drop_malformed".into(), self.malformed as f64),
            ("drop_not_ipv4".into(), self.not_ipv4 as f64),
            ("drop_too_big".into(), self.too_big as f64),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;
    use aes_gcm::Tag;

    /// Decrypt an ESP packet back to the original IP payload and protocol.
    fn decrypt(f: &[u8]) -> (Vec<u8>, u8) {
        let ihl = usize::from(f[14] & 0x0F) * 4;
        let end = 14 + usize::from(u16::from_be_bytes([f[16], f[17]]));
        let esp = &f[14 + ihl..end];
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(&SALT);
        nonce[4..].copy_from_slice(&esp[8..16]);
        let mut body = esp[ESP_HEADER..esp.len() - ICV].to_vec();
        let tag = Tag::clone_from_slice(&esp[esp.len() - ICV..]);
        Aes128Gcm::new(&KEY.into())
            .decrypt_in_place_detached(Nonce::from_slice(&nonce), &esp[..8], &mut body, &tag)
            .unwrap();
        let next = body.pop().unwrap();
        let pad = body.pop().unwrap();
        body.truncate(body.len() - usize::from(pad));
        (body, next)
    }

    #[test]
    fn a_third_each_and_ciphertext_decrypts_to_the_input() {
        let core = TestCore::new();
        let mut app = Ipsec::new(AppParams::new().reader("ipsec")).unwrap();
        let mut by_action = [0usize; 3];
        for port in 0..300u16 {
            for len in [64, 1518] {
                let f = frame("10.0.0.1", port, "10.0.0.2", 80, if port % 2 == 0 { 17 } else { 6 }, len);
                let (a, hash) = {
                    let v = wire::PacketView::new_checked(&f[..]).unwrap();
                    (action(tuple_hash(v.five_tuple())), v.l4_offset())
                };
                let out = core.run(&mut app, std::slice::from_ref(&f));
                match a {
                    Action::Forward => assert_eq!(out, vec![f.clone()]),
                    Action::Drop => assert!(out.is_empty()),
                    Action::Encrypt => {
                        let o = &out[0];
                        assert_eq!(o[14 + 9], ESP_PROTO);
                        assert_eq!(wire::checksum::checksum(&o[14..34]), 0, "IPv4 header checksum");
                        let (plain, next) = decrypt(o);
                        let ip_end = 14 + usize::from(u16::from_be_bytes([f[16], f[17]]));
                        assert_eq!(plain, f[hash..ip_end]);
                        assert_eq!(next, f[14 + 9]);
                    }
                }
                by_action[a as usize] += 1;
            }
        }
        assert!(by_action.iter().all(|&n| (150..250).contains(&n)), "{by_action:?}");
        assert!(core.run(&mut app, &[vec![0; 9]]).is_empty());
        assert_eq!(app.metrics()["drop_malformed"], 1.0);
    }
}
