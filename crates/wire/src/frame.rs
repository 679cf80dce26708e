//! Ethernet framing: what a frame costs on the wire beyond its bytes.
//!
//! rxlab names a packet by its Ethernet frame size including the FCS, as RFC 2544 and packet generators
//! (T-Rex, pktgen) do: a "64 B packet" is 60 bytes of header and payload plus a 4-byte FCS. The NIC strips
//! the FCS, so a received buffer holds `frame_len - FCS_LEN` bytes.

/// Frame check sequence appended to every frame (IEEE 802.3).
pub const FCS_LEN: usize = 4;
/// Preamble (7 B) and start-of-frame delimiter (1 B) sent before every frame.
pub const PREAMBLE_LEN: usize = 8;
/// Minimum inter-frame gap, 96 bit times.
pub const IFG_LEN: usize = 12;
/// Bytes on the wire beyond the frame itself.
pub const WIRE_OVERHEAD: usize = PREAMBLE_LEN + IFG_LEN;
/// Smallest legal Ethernet frame, FCS included.
pub const MIN_FRAME: usize = 64;
/// Largest standard (non-jumbo) Ethernet frame, FCS included: 1500 B MTU + 14 B header + 4 B FCS.
pub const MAX_FRAME: usize = 1518;

/// Bits one frame of `frame_len` bytes (FCS included) occupies on the wire, preamble and gap included.
pub fn wire_bits(frame_len: usize) -> u64 {
    ((frame_len + WIRE_OVERHEAD) * 8) as u64
}

/// Frames per second a link of `gbps` carries at `frame_len` bytes per frame (FCS included).
pub fn line_rate_pps(gbps: f64, frame_len: usize) -> f64 {
    gbps * 1e9 / wire_bits(frame_len) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_gig_line_rate_at_64_bytes_is_14_88_mpps() {
        let pps = line_rate_pps(10.0, 64);
        assert!((pps - 14_880_952.0).abs() < 1.0, "{pps}");
    }

    #[test]
    fn hundred_gig_at_1518_bytes() {
        // 100e9 / (1538 * 8) = 8.127 Mpps, the usual figure for MTU-sized frames at 100 GbE.
        assert!((line_rate_pps(100.0, 1518) - 8_127_438.2).abs() < 1.0);
    }
}
