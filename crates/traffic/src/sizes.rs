//! Packet-size distributions. Sizes are Ethernet frame lengths including the FCS (see `wire::frame`).

use crate::config::GenError;
use crate::trace::TraceReader;
use rand::Rng;
use rand_distr::Distribution;
use rand_distr::weighted::WeightedAliasIndex;
use serde::Deserialize;
use std::path::PathBuf;
use std::str::FromStr;
use wire::frame::{MAX_FRAME, MIN_FRAME};

/// How packet sizes are chosen, as written in a config or on the command line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum SizeSpec {
    /// Every frame this long (64..=1518): `"64"`.
    Fixed(usize),
    /// Simple IMIX: 64, 570 and 1518 B frames in the ratio 7:4:1: `"imix"`.
    Imix,
    /// Bimodal data-centre mix: `"dc"`. Benson, Akella and Maltz, "Network traffic characteristics of
    /// data centers in the wild" (IMC 2010, §4) find packet sizes clustered around 200 B and 1400 B;
    /// rxlab uses 200 B and 1400 B frames with equal weights (1:1), its own choice of the two modes' mass.
    Dc,
    /// The empirical frame-size distribution of a capture, clamped to 64..=1518: `"pcap:FILE"`.
    Pcap(PathBuf),
    /// Frame lengths with integer weights, `SIZE:WEIGHT` pairs joined by commas: `"64:2,1518:3"` sends
    /// 64 B and 1518 B frames in the ratio 2:3.
    Mix(Vec<(usize, u64)>),
}

impl Default for SizeSpec {
    fn default() -> Self {
        SizeSpec::Fixed(MIN_FRAME)
    }
}

impl FromStr for SizeSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<SizeSpec, String> {
        match s.trim() {
            "imix" => Ok(SizeSpec::Imix),
            "dc" => Ok(SizeSpec::Dc),
            t => match t.strip_prefix("pcap:") {
                Some(path) if !path.is_empty() => Ok(SizeSpec::Pcap(PathBuf::from(path))),
                _ if t.contains(':') => parse_mix(t).map(SizeSpec::Mix).map_err(|e| format!("bad packet size mix '{s}': {e}")),
                _ => t.parse().map(SizeSpec::Fixed).map_err(|_| {
                    format!(
                        "bad packet size '{s}': give a frame length {MIN_FRAME}..={MAX_FRAME}, imix, dc, SIZE:WEIGHT,... or pcap:FILE"
                    )
                }),
            },
        }
    }
}

/// `SIZE:WEIGHT,SIZE:WEIGHT,...`: frame lengths in 64..=1518, each once, weights positive integers.
fn parse_mix(t: &str) -> Result<Vec<(usize, u64)>, String> {
    let mut pairs: Vec<(usize, u64)> = Vec::new();
    for part in t.split(',') {
        let (size, weight) = part.split_once(':').ok_or_else(|| format!("'{}' is not SIZE:WEIGHT", part.trim()))?;
        let size: usize = size.trim().parse().map_err(|_| format!("'{}' is not a frame length", size.trim()))?;
        let weight: u64 =
            weight.trim().parse().map_err(|_| format!("'{}' is not a whole-number weight", weight.trim()))?;
        if !(MIN_FRAME..=MAX_FRAME).contains(&size) {
            return Err(format!("frame length {size} is outside {MIN_FRAME}..={MAX_FRAME}"));
        }
        if weight == 0 {
            return Err(format!("frame length {size} has weight 0; leave it out"));
        }
        if pairs.iter().any(|(s, _)| *s == size) {
            return Err(format!("frame length {size} is given twice"));
        }
        pairs.push((size, weight));
    }
    Ok(pairs)
}

impl TryFrom<String> for SizeSpec {
    type Error = String;

    fn try_from(s: String) -> Result<SizeSpec, String> {
        s.parse()
    }
}

/// A distribution over frame lengths (FCS included), sampled in constant time.
#[derive(Debug, Clone)]
pub struct SizeDist {
    sizes: Vec<usize>,
    weights: Vec<u64>,
    alias: Option<WeightedAliasIndex<f64>>,
}

impl SizeDist {
    /// Resolve a spec; `Pcap` reads the capture.
    pub fn from_spec(spec: &SizeSpec) -> Result<SizeDist, GenError> {
        match spec {
            SizeSpec::Fixed(len) => SizeDist::weighted(&[(*len, 1)]),
            SizeSpec::Imix => SizeDist::weighted(&[(64, 7), (570, 4), (1518, 1)]),
            SizeSpec::Dc => SizeDist::weighted(&[(200, 1), (1400, 1)]),
            SizeSpec::Mix(pairs) => SizeDist::weighted(pairs),
            SizeSpec::Pcap(path) => {
                let mut counts = vec![0u64; MAX_FRAME + 1];
                for p in TraceReader::open(path)? {
                    counts[p?.frame_len().clamp(MIN_FRAME, MAX_FRAME)] += 1;
                }
                let pairs: Vec<_> = counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(s, c)| (s, *c)).collect();
                if pairs.is_empty() {
                    return Err(GenError::Config(format!(
                        "{}: the capture has no packets to take sizes from; give a non-empty pcap",
                        path.display()
                    )));
                }
                SizeDist::weighted(&pairs)
            }
        }
    }

    /// A distribution from (frame length, weight) pairs; lengths must lie in 64..=1518.
    pub fn weighted(pairs: &[(usize, u64)]) -> Result<SizeDist, GenError> {
        if let Some((bad, _)) = pairs.iter().find(|(s, _)| !(MIN_FRAME..=MAX_FRAME).contains(s)) {
            return Err(GenError::Config(format!(
                "packet size {bad} B is out of range: Ethernet frames (FCS included) are {MIN_FRAME}..={MAX_FRAME} B"
            )));
        }
        let sizes = pairs.iter().map(|p| p.0).collect();
        let weights: Vec<u64> = pairs.iter().map(|p| p.1).collect();
        let alias = if pairs.len() > 1 {
            let w = weights.iter().map(|&w| w as f64).collect();
            Some(WeightedAliasIndex::new(w).map_err(|e| GenError::Config(format!("bad size weights: {e}")))?)
        } else {
            None
        };
        Ok(SizeDist { sizes, weights, alias })
    }

    /// Draw one frame length.
    #[inline]
    pub fn sample<R: Rng>(&self, rng: &mut R) -> usize {
        match &self.alias {
            Some(a) => self.sizes[a.sample(rng)],
            None => self.sizes[0],
        }
    }

    /// Smallest frame length with nonzero weight.
    pub fn min(&self) -> usize {
        self.sizes.iter().copied().min().unwrap_or(MIN_FRAME)
    }

    /// Largest frame length with nonzero weight.
    pub fn max(&self) -> usize {
        self.sizes.iter().copied().max().unwrap_or(MIN_FRAME)
    }

    /// Mean frame length.
    pub fn mean(&self) -> f64 {
        let total: u64 = self.weights.iter().sum();
        self.sizes.iter().zip(&self.weights).map(|(&s, &w)| s as f64 * w as f64).sum::<f64>() / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn specs_parse() {
        assert_eq!("64".parse(), Ok(SizeSpec::Fixed(64)));
        assert_eq!("imix".parse(), Ok(SizeSpec::Imix));
        assert_eq!("pcap:a.pcap".parse(), Ok(SizeSpec::Pcap("a.pcap".into())));
        assert!("huge".parse::<SizeSpec>().unwrap_err().contains("imix, dc, SIZE:WEIGHT,... or pcap:FILE"));
        assert_eq!("64:2, 1518:3".parse(), Ok(SizeSpec::Mix(vec![(64, 2), (1518, 3)])));
        assert_eq!("1518:1".parse(), Ok(SizeSpec::Mix(vec![(1518, 1)])));
        for bad in ["64:0", "63:1", "64:1,64:2", "64", "64:x", "x:1", "64:1,", "64:-1"] {
            if bad != "64" {
                assert!(bad.parse::<SizeSpec>().is_err(), "{bad}");
            }
        }
        assert!(SizeDist::from_spec(&SizeSpec::Fixed(63)).is_err());
        assert!(SizeDist::from_spec(&SizeSpec::Fixed(1519)).is_err());
    }

    #[test]
    fn imix_ratio_is_7_4_1() {
        let d = SizeDist::from_spec(&SizeSpec::Imix).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let n = 120_000;
        let mut c = [0usize; 3];
        for _ in 0..n {
            c[match d.sample(&mut rng) {
                64 => 0,
                570 => 1,
                _ => 2,
            }] += 1;
        }
        for (got, want) in c.iter().zip([7.0 / 12.0, 4.0 / 12.0, 1.0 / 12.0]) {
            assert!((*got as f64 / n as f64 - want).abs() < 0.01, "{c:?}");
        }
        assert!((d.mean() - (7.0 * 64.0 + 4.0 * 570.0 + 1518.0) / 12.0).abs() < 1e-9);
    }

    #[test]
    fn a_mix_has_its_weights_mean() {
        let d = SizeDist::from_spec(&"64:2,1518:3".parse().unwrap()).unwrap();
        assert!((d.mean() - (2.0 * 64.0 + 3.0 * 1518.0) / 5.0).abs() < 1e-9);
        assert_eq!((d.min(), d.max()), (64, 1518));
    }

    proptest::proptest! {
        /// Any text either parses to a mix whose every pair is in range, or is refused; a mix written out
        /// parses back to itself.
        #[test]
        fn mixes_parse_or_are_refused(text in "[0-9:, x]{0,24}") {
            if let Ok(SizeSpec::Mix(pairs)) = text.parse::<SizeSpec>() {
                proptest::prop_assert!(!pairs.is_empty());
                for (s, w) in &pairs {
                    proptest::prop_assert!((MIN_FRAME..=MAX_FRAME).contains(s) && *w > 0);
                }
            }
        }

        #[test]
        fn written_mixes_parse_back(pairs in proptest::collection::btree_map(MIN_FRAME..=MAX_FRAME, 1u64..1000, 1..6)) {
            let pairs: Vec<(usize, u64)> = pairs.into_iter().collect();
            let text: Vec<String> = pairs.iter().map(|(s, w)| format!("{s}:{w}")).collect();
            proptest::prop_assert_eq!(text.join(",").parse::<SizeSpec>(), Ok(SizeSpec::Mix(pairs)));
        }
    }
}
