//! Ring sizes and ring indices.
//!
//! Hardware rings have power-of-two sizes so that a free-running index maps to a slot with a mask, and
//! so that the wrap of a 32-bit counter falls on a ring boundary (rxBisect §2's sense-reverse generation
//! bit is then simply bit log2(size) of the counter).

use std::fmt;

/// A ring size: a power of two between 2 and 2^24, checked once at construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(into = "u32")]
pub struct RingSize(u32);

/// Why a number is not a ring size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ring size {0} is not a power of two between 2 and 16777216 (try {hint})", hint = suggest(*.0))]
pub struct RingSizeError(pub u64);

fn suggest(n: u64) -> u64 {
    n.clamp(2, 1 << 24).next_power_of_two()
}

impl RingSize {
    /// Largest supported ring.
    pub const MAX: u32 = 1 << 24;

    /// Check that `n` is a power of two in `2..=2^24`.
    pub fn new(n: u64) -> Result<RingSize, RingSizeError> {
        if n.is_power_of_two() && (2..=u64::from(Self::MAX)).contains(&n) {
            Ok(RingSize(n as u32))
        } else {
            Err(RingSizeError(n))
        }
    }

    /// The size as a number of entries.
    #[inline(always)]
    pub fn get(self) -> u32 {
        self.0
    }

    /// The size as a `usize`.
    #[inline(always)]
    pub fn len(self) -> usize {
        self.0 as usize
    }

    /// Never true: a ring has at least two entries (present for clippy's `len_without_is_empty`).
    pub fn is_empty(self) -> bool {
        false
    }

    /// The slot of free-running index `i`.
    #[inline(always)]
    pub fn slot(self, i: u32) -> usize {
        (i & (self.0 - 1)) as usize
    }

    /// Free-running indices `first..first + n` (at most the ring) as runs of contiguous slots
    /// `(slot, count)`: one, or two where the ring wraps.
    #[inline]
    pub fn runs(self, first: u32, n: u32) -> impl Iterator<Item = (usize, usize)> {
        let slot = self.slot(first);
        let n = n as usize;
        let head = n.min(self.len() - slot);
        [(slot, head), (0, n - head)].into_iter().filter(|&(_, k)| k > 0)
    }

    /// The sense-reverse generation of free-running index `i`: flips on every pass through the ring.
    #[inline(always)]
    pub fn generation(self, i: u32) -> bool {
        i & self.0 != 0
    }
}

impl From<RingSize> for u32 {
    fn from(r: RingSize) -> u32 {
        r.0
    }
}

impl fmt::Display for RingSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for RingSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let n: u64 = parse_count(s)?;
        RingSize::new(n).map_err(|e| e.to_string())
    }
}

/// Parse a count or a size, rxlab's one grammar for them on the command line and in experiment files: a
/// number (`_` between digits allowed, a decimal point where the result is whole) and an optional SI
/// suffix `k`/`K` (10^3), `M` (10^6), `G` (10^9), `T` (10^12) or binary suffix `Ki`, `Mi`, `Gi`, `Ti`
/// (2^10 ...), optionally followed by `B`: `1024`, `1Ki`, `1M` (1000000), `2MiB`, `1.5K` (1500).
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let t = t.strip_suffix('B').unwrap_or(&t);
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let mult: u64 = match suffix {
        "" => 1,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        other => return Err(format!("'{s}': unknown suffix '{other}' (use k, M, G, T or Ki, Mi, Gi, Ti)")),
    };
    let not_a_number = || format!("'{s}' is not a count (examples: 1024, 1Ki, 1M, 2MiB)");
    if let Some((whole, frac)) = num.split_once('.') {
        let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() && frac.is_empty() || !digits(whole) || !digits(frac) {
            return Err(not_a_number());
        }
        let x = num.parse::<f64>().map_err(|_| not_a_number())? * mult as f64;
        if x.fract() != 0.0 || x >= u64::MAX as f64 {
            return Err(format!("'{s}' is not a whole number"));
        }
        return Ok(x as u64);
    }
    let n: u64 = num.parse().map_err(|_| not_a_number())?;
    n.checked_mul(mult).ok_or_else(|| format!("'{s}' is too large"))
}

/// [`parse_count`] into any integer type, for command-line options (`value_parser = count::<usize>`).
pub fn count<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    let n = parse_count(s)?;
    T::try_from(n).map_err(|_| format!("'{s}' is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_where_the_ring_wraps() {
        let size = RingSize::new(8).unwrap();
        assert_eq!(size.runs(2, 4).collect::<Vec<_>>(), [(2, 4)]);
        assert_eq!(size.runs(14, 5).collect::<Vec<_>>(), [(6, 2), (0, 3)]);
        assert_eq!(size.runs(0, 0).count(), 0);
    }

    #[test]
    fn sizes() {
        assert!(RingSize::new(1024).is_ok());
        assert_eq!(
            RingSize::new(1000).unwrap_err().to_string(),
            "ring size 1000 is not a power of two between 2 and 16777216 (try 1024)"
        );
        assert!(RingSize::new(0).is_err());
        assert!(RingSize::new(1).is_err());
        assert_eq!("1Ki".parse::<RingSize>().unwrap().get(), 1024);
        assert!("12x".parse::<RingSize>().is_err());
        assert!("1K".parse::<RingSize>().unwrap_err().contains("try 1024"));
    }

    #[test]
    fn counts_take_si_and_binary_suffixes() {
        for (text, n) in [
            ("1024", 1024),
            ("1Ki", 1024),
            ("1k", 1000),
            ("1M", 1_000_000),
            ("4Mi", 4 << 20),
            ("2MiB", 2 << 20),
            ("64B", 64),
            ("1.5K", 1500),
            ("1_000", 1000),
            ("1G", 1_000_000_000),
        ] {
            assert_eq!(parse_count(text), Ok(n), "{text}");
        }
        for bad in ["", "M", "1x", "1.5", "-1", "1..2K", "99999999999T"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
        assert_eq!(count::<u8>("1K"), Err("'1K' is too large".into()));
    }

    #[test]
    fn slot_and_generation_wrap_with_the_counter() {
        let r = RingSize::new(4).unwrap();
        assert_eq!(r.slot(5), 1);
        assert!(!r.generation(3));
        assert!(r.generation(4));
        assert!(!r.generation(8));
        assert!(r.generation(u32::MAX));
        assert!(!r.generation(u32::MAX.wrapping_add(1)));
    }
}
