//! Offered rates and durations as users write them: `10G`, `5Mpps`, `100us`.

use serde::Deserialize;
use std::fmt;
use std::str::FromStr;
use wire::frame::wire_bits;

/// An offered load: a bit rate that counts Ethernet framing (preamble, SFD, FCS, inter-frame gap) as
/// line rates do, or a packet rate.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub enum Rate {
    /// Gigabits per second on the wire, framing included.
    Gbps(f64),
    /// Million packets per second.
    Mpps(f64),
}

impl Rate {
    /// Time between the starts of two frames when the first is `frame_len` bytes (FCS included), in
    /// picoseconds.
    pub fn gap_ps(&self, frame_len: usize) -> f64 {
        match *self {
            Rate::Gbps(g) => wire_bits(frame_len) as f64 * 1000.0 / g,
            Rate::Mpps(m) => 1e6 / m,
        }
    }

    /// The rate as a positive finite number, or why it is not one.
    pub fn check(&self) -> Result<(), String> {
        let v = match *self {
            Rate::Gbps(v) | Rate::Mpps(v) => v,
        };
        if v.is_finite() && v > 0.0 { Ok(()) } else { Err(format!("rate {self} must be positive, e.g. 10G or 5Mpps")) }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::Gbps(g) => write!(f, "{g}Gbps"),
            Rate::Mpps(m) => write!(f, "{m}Mpps"),
        }
    }
}

impl FromStr for Rate {
    type Err = String;

    /// Parse `10G`, `10Gbps`, `400Mbps`, `5Mpps`, `500Kpps` or `1000pps` (case-insensitive).
    fn from_str(s: &str) -> Result<Rate, String> {
        let lower = s.trim().to_ascii_lowercase();
        let split = lower.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(lower.len());
        let (num, unit) = lower.split_at(split);
        let bad = || format!("bad rate '{s}': write a number and a unit, e.g. 10G, 400Mbps, 5Mpps or 500Kpps");
        let v: f64 = num.trim().parse().map_err(|_| bad())?;
        let rate = match unit {
            "g" | "gbps" | "gbit" => Rate::Gbps(v),
            "m" | "mbps" | "mbit" => Rate::Gbps(v / 1e3),
            "mpps" => Rate::Mpps(v),
            "kpps" => Rate::Mpps(v / 1e3),
            "pps" => Rate::Mpps(v / 1e6),
            _ => return Err(bad()),
        };
        rate.check()?;
        Ok(rate)
    }
}

impl TryFrom<String> for Rate {
    type Error = String;

    fn try_from(s: String) -> Result<Rate, String> {
        s.parse()
    }
}

/// Parse a duration such as `10ms`, `250us`, `1.5s` or `800ns` into nanoseconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic() || c == 'µ').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("bad duration '{s}': write a number and a unit, e.g. 10ms, 250us, 1s or 800ns");
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(bad()),
    };
    let ns = v * scale;
    if !(ns.is_finite() && ns >= 0.0 && ns < u64::MAX as f64) {
        return Err(format!("duration '{s}' is out of range"));
    }
    Ok(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_units() {
        assert_eq!("10G".parse(), Ok(Rate::Gbps(10.0)));
        assert_eq!("100gbps".parse(), Ok(Rate::Gbps(100.0)));
        assert_eq!("5Mpps".parse(), Ok(Rate::Mpps(5.0)));
        assert_eq!("500Kpps".parse(), Ok(Rate::Mpps(0.5)));
        assert_eq!("400Mbps".parse(), Ok(Rate::Gbps(0.4)));
        for bad in ["0G", "-5G", "fast", "10", "10Tbps", "NaNG", "infG"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
        assert!("-5G".parse::<Rate>().unwrap_err().contains("positive"));
    }

    #[test]
    fn gap_counts_framing() {
        // 64 B at 10 Gbps: (64 + 20) * 8 bits / 10 Gbps = 67.2 ns.
        assert!((Rate::Gbps(10.0).gap_ps(64) - 67_200.0).abs() < 1e-6);
        assert!((Rate::Mpps(5.0).gap_ps(1518) - 200_000.0).abs() < 1e-6);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("10ms"), Ok(10_000_000));
        assert_eq!(parse_duration_ns("250us"), Ok(250_000));
        assert_eq!(parse_duration_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration_ns("800ns"), Ok(800));
        assert!(parse_duration_ns("10").is_err());
        assert!(parse_duration_ns("-1ms").is_err());
    }
}
