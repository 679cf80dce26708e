//! The stamp every generated packet carries at the start of its L4 payload, or as its trailer (the last
//! [`STAMP_LEN`] bytes) after a request that fills the start (a key-value request; a server echoes it at
//! the end of its response).
//!
//! A receiver reads it back to measure latency (send time) and reordering (sequence number, RFC 4737).
//! Sixteen bytes fit in the payload of the smallest UDP/IPv4 frame (64 B: 42 B of headers, 18 B payload).
//! The top 16 bits of each of its two words are magic numbers, so a receiver can tell a stamp from payload
//! an app rewrote (an encrypted packet, a key-value response echoing part of a request) instead of
//! reading garbage as a sequence number.

/// Length of a [`Stamp`] on the wire.
pub const STAMP_LEN: usize = 16;

/// Marks the first word of a stamp ("RX").
const MAGIC: u64 = 0x5258;
/// Marks the second word ("LB").
const MAGIC2: u64 = 0x4c42;
/// Sequence numbers and send times have 48 bits: 2.8e14 packets (16 days of 200 Gbps of 64 B frames),
/// 78 hours of nanoseconds.
pub const SEQ_MASK: u64 = (1 << 48) - 1;

/// Sequence number and send time of a generated packet, little-endian at the start of the L4 payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// Position of the packet in its source's stream, from 0 (48 bits are carried: [`SEQ_MASK`]).
    pub seq: u64,
    /// Send time in nanoseconds on the sender's clock (trace time for generated traces; 48 bits).
    pub tx_ns: u64,
}

impl Stamp {
    /// Write the stamp into the first [`STAMP_LEN`] bytes of `payload`; `None` if it is too short.
    #[inline]
    pub fn write(&self, payload: &mut [u8]) -> Option<()> {
        let dst = payload.get_mut(..STAMP_LEN)?;
        dst[..8].copy_from_slice(&(MAGIC << 48 | (self.seq & SEQ_MASK)).to_le_bytes());
        dst[8..].copy_from_slice(&(MAGIC2 << 48 | (self.tx_ns & SEQ_MASK)).to_le_bytes());
        Some(())
    }

    /// Read a stamp from the first [`STAMP_LEN`] bytes of `payload`; `None` if it is too short or does
    /// not carry the stamp's magic numbers.
    #[inline]
    pub fn read(payload: &[u8]) -> Option<Stamp> {
        let src = payload.get(..STAMP_LEN)?;
        let (a, b) = (u64::from_le_bytes(src[..8].try_into().ok()?), u64::from_le_bytes(src[8..].try_into().ok()?));
        (a >> 48 == MAGIC && b >> 48 == MAGIC2).then_some(Stamp { seq: a & SEQ_MASK, tx_ns: b & SEQ_MASK })
    }

    /// Where the stamp of an L4 payload starts: at 0, else as its trailer; `None` if neither place holds
    /// one (the magic numbers make probing both safe).
    #[inline]
    pub fn locate(payload: &[u8]) -> Option<usize> {
        let trailer = payload.len().checked_sub(STAMP_LEN)?;
        [0, trailer].into_iter().find(|&at| Stamp::read(&payload[at..]).is_some())
    }

    /// The stamp of an L4 payload, at its start or as its trailer ([`Stamp::locate`]).
    #[inline]
    pub fn find(payload: &[u8]) -> Option<Stamp> {
        Stamp::read(payload.get(Stamp::locate(payload)?..)?)
    }

    /// The stamp of a whole frame: in the L4 payload starting at `payload_at` when the caller knows
    /// where its frames' payloads start (both engines do for the frames they generate, and apps forward
    /// them with headers of the same length), else in the payload of the parsed frame (one an app rebuilt
    /// with other headers, or a replayed capture's). Skipping the parse matters: a full parse of every
    /// frame coming back took a third of the live NIC thread.
    #[inline]
    pub fn in_frame(frame: &[u8], payload_at: Option<usize>) -> Option<Stamp> {
        payload_at
            .and_then(|at| frame.get(at..))
            .and_then(Stamp::find)
            .or_else(|| crate::PacketView::new_checked(frame).ok().and_then(|v| Stamp::find(v.payload())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_short_payload() {
        let s = Stamp { seq: 0x0102_0304_0506, tx_ns: 42 };
        let mut buf = [0u8; 18];
        s.write(&mut buf).unwrap();
        assert_eq!(Stamp::read(&buf), Some(s));
        assert_eq!(Stamp::read(&buf[..15]), None);
        assert_eq!(s.write(&mut buf[..3]), None);
    }

    #[test]
    fn rewritten_payload_is_not_a_stamp() {
        assert_eq!(Stamp::read(&[0xab; 16]), None);
        assert_eq!(Stamp::read(&[0; 16]), None);
        // A key-value response echoes bytes 4..12 of the request: the first magic, not the second.
        let mut req = [0u8; 16];
        Stamp { seq: 1, tx_ns: 7 }.write(&mut req).unwrap();
        let mut resp = [0u8; 16];
        resp[4..12].copy_from_slice(&req[4..12]);
        assert_eq!(Stamp::read(&resp), None);
    }

    #[test]
    fn found_in_a_frame_with_or_without_the_payload_offset() {
        let tuple = crate::FiveTuple {
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            src_port: 1,
            dst_port: 2,
            proto: 17,
        };
        let mut frame = crate::build_frame(&crate::FrameSpec { tuple, frame_len: 128 }, &[]).unwrap();
        let s = Stamp { seq: 9, tx_ns: 3 };
        s.write(&mut frame[42..]).unwrap();
        assert_eq!(Stamp::in_frame(&frame, Some(42)), Some(s));
        assert_eq!(Stamp::in_frame(&frame, None), Some(s), "found by parsing");
        assert_eq!(Stamp::in_frame(&frame, Some(50)), Some(s), "a wrong hint falls back to the parse");
        assert_eq!(Stamp::in_frame(&frame[..30], Some(42)), None);
    }

    #[test]
    fn found_at_the_start_or_as_trailer() {
        let s = Stamp { seq: 5, tx_ns: 6 };
        let mut buf = [0u8; 40];
        s.write(&mut buf[24..]).unwrap();
        assert_eq!((Stamp::locate(&buf), Stamp::find(&buf)), (Some(24), Some(s)));
        s.write(&mut buf).unwrap();
        assert_eq!((Stamp::locate(&buf), Stamp::find(&buf)), (Some(0), Some(s)));
        assert_eq!(Stamp::find(&buf[..15]), None);
        assert_eq!(Stamp::find(&[7; 40]), None);
    }
}
