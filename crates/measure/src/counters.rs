//! Packet and byte counts over a duration, as the rates papers report: Mpps and Gbps.
//!
//! Bytes are Ethernet frame bytes with the FCS, as [`wire::frame`] names packets ("64 B packets"). Line
//! rate also counts what every frame costs on the wire beyond its bytes: preamble, start delimiter and
//! inter-frame gap ([`wire::frame::wire_bits`]), so 64 B frames fill 10 Gbps at 14.88 Mpps.

use serde::{Deserialize, Serialize};
use wire::frame::wire_bits;

/// Rates of a measured interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Million packets per second.
    pub mpps: f64,
    /// Gigabits per second of frame bytes (FCS included).
    pub gbps: f64,
    /// Gigabits per second on the wire: frame bytes plus preamble, delimiter and inter-frame gap.
    pub gbps_wire: f64,
}

impl Throughput {
    /// Rates of `packets` frames totalling `bytes` frame bytes in `seconds`; `None` unless `seconds` is
    /// finite and positive.
    pub fn over(packets: u64, bytes: u64, seconds: f64) -> Option<Throughput> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return None;
        }
        let bits = bytes as f64 * 8.0;
        // wire_bits(0): the per-frame overhead alone, in bits.
        let overhead_bits = packets as f64 * wire_bits(0) as f64;
        Some(Throughput {
            mpps: packets as f64 / seconds / 1e6,
            gbps: bits / seconds / 1e9,
            gbps_wire: (bits + overhead_bits) / seconds / 1e9,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_rate_of_small_and_large_frames() {
        // 10 GbE line rate: 14 880 952 frames/s of 64 B, 812 744 of 1518 B.
        let t = Throughput::over(14_880_952, 14_880_952 * 64, 1.0).unwrap();
        assert!((t.mpps - 14.880_952).abs() < 1e-9);
        assert!((t.gbps_wire - 10.0).abs() < 1e-5, "{t:?}");
        assert!((t.gbps - 7.619_047).abs() < 1e-5, "{t:?}");
        let t = Throughput::over(812_744, 812_744 * 1518, 1.0).unwrap();
        assert!((t.gbps_wire - 10.0).abs() < 1e-4, "{t:?}");
    }

    #[test]
    fn no_rate_without_a_duration() {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(Throughput::over(1, 64, s), None);
        }
        assert_eq!(Throughput::over(0, 0, 2.0).map(|t| t.gbps_wire), Some(0.0));
    }
}
