//! The stamp every generated packet carries at the start of its L4 payload.
//!
//! A receiver reads it back to measure latency (send time) and reordering (sequence number, RFC 4737).
//! Sixteen bytes fit in the payload of the smallest UDP/IPv4 frame (64 B: 42 B of headers, 18 B payload).

/// Length of a [`Stamp`] on the wire.
pub const STAMP_LEN: usize = 16;

/// Sequence number and send time of a generated packet, little-endian at the start of the L4 payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// Position of the packet in its source's stream, from 0.
    pub seq: u64,
    /// Send time in nanoseconds on the sender's clock (trace time for generated traces).
    pub tx_ns: u64,
}

impl Stamp {
    /// Write the stamp into the first [`STAMP_LEN`] bytes of `payload`; `None` if it is too short.
    pub fn write(&self, payload: &mut [u8]) -> Option<()> {
        let dst = payload.get_mut(..STAMP_LEN)?;
        dst[..8].copy_from_slice(&self.seq.to_le_bytes());
        dst[8..].copy_from_slice(&self.tx_ns.to_le_bytes());
        Some(())
    }

    /// Read a stamp from the first [`STAMP_LEN`] bytes of `payload`; `None` if it is too short.
    pub fn read(payload: &[u8]) -> Option<Stamp> {
        let src = payload.get(..STAMP_LEN)?;
        Some(Stamp {
            seq: u64::from_le_bytes(src[..8].try_into().ok()?),
            tx_ns: u64::from_le_bytes(src[8..].try_into().ok()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_short_payload() {
        let s = Stamp { seq: 0x0102_0304_0506_0708, tx_ns: 42 };
        let mut buf = [0u8; 18];
        s.write(&mut buf).unwrap();
        assert_eq!(Stamp::read(&buf), Some(s));
        assert_eq!(Stamp::read(&buf[..15]), None);
        assert_eq!(s.write(&mut buf[..3]), None);
    }
}
