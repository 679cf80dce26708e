//! How a poll-mode driver gives its receive ring fresh buffers. DPDK's scalar receive paths repost each
//! slot in the burst that empties it (mlx5's `mlx5_rx_burst` allocates the replacement `rep` first;
//! i40e's `i40e_recv_pkts` likewise), as the papers' listings do (shRing Listing 1 lines 14-15,
//! rxBisect Listing 1). The vector paths, which DPDK picks whenever the queue's offloads allow, leave
//! emptied slots empty and repost them in bulk at the start of a later burst:
//!
//! - mlx5 (`rxq_burst_v` calls `mlx5_rx_replenish_bulk_mbuf` first; `drivers/net/mlx5/mlx5_rxtx_vec.c`,
//!   DPDK 20.11): once at least `MLX5_VPMD_RXQ_RPLNSH_THRESH(n)` = min(64, n / 4) slots are empty, all
//!   but `MLX5_VPMD_DESCS_PER_LOOP` (4) of them, never across the ring's end;
//! - i40e and ice (`i40e_rxq_rearm`, `ice_rxq_rearm`): once more than `RTE_I40E_RXQ_REARM_THRESH` (32)
//!   or `ICE_RXQ_REARM_THRESH` (64) slots are empty, exactly that many.
//!
//! So a vector path's ring holds fewer posted buffers than its size when a core stops polling: an mlx5
//! ring of 128 has 65 to 124 (docs/model.md, "The driver's refill").
//!
//! The vector paths also stop a burst at the ring's end ([`AtRingEnd`]): mlx5's `rxq_burst_v` takes at
//! most `q_n - elts_idx` completions and `mlx5_rx_burst_vec` calls it again, refill check first, until the
//! burst is full or the completion queue empty; i40e's and ice's `_recv_raw_pkts_vec` read the ring's
//! trailing dummy descriptors (never done) and return the shorter burst.

use std::fmt;
use std::str::FromStr;

/// A driver's receive refill policy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RxRefill {
    /// Each slot gets its replacement in the burst that empties it (DPDK's scalar receive paths).
    #[default]
    PerSlot,
    /// mlx5's vector path: when at least min(64, n / 4) slots are empty, all but four.
    Mlx5,
    /// i40e's and ice's vector paths: when more than `chunk` slots are empty, `chunk` of them (i40e 32,
    /// ice 64).
    Intel {
        /// `RTE_I40E_RXQ_REARM_THRESH` or `ICE_RXQ_REARM_THRESH`.
        chunk: u32,
    },
}

/// What a receive burst does when it reaches the ring's last slot ([`RxRefill::at_ring_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtRingEnd {
    /// Goes on from the first slot (the scalar paths).
    Continue,
    /// Goes on after another bulk refill check (mlx5's `mlx5_rx_burst_vec` calling `rxq_burst_v` again).
    Refill,
    /// Ends the burst there (i40e's and ice's vector paths).
    Stop,
}

/// mlx5's `MLX5_VPMD_DESCS_PER_LOOP`: the slots its bulk refill leaves empty.
const MLX5_HOLD: u32 = 4;
/// mlx5's `MLX5_VPMD_RX_MAX_BURST`: the cap of its refill threshold.
const MLX5_MAX_THRESH: u32 = 64;

impl RxRefill {
    /// Whether a slot is reposted in the burst that empties it.
    pub fn per_slot(self) -> bool {
        self == RxRefill::PerSlot
    }

    /// How many slots to repost now, in a ring of `n` whose next slot to repost is `slot` and which has
    /// `empty` slots without a buffer: zero until the policy's threshold.
    pub fn due(self, n: u32, slot: u32, empty: u32) -> u32 {
        match self {
            RxRefill::PerSlot => empty,
            RxRefill::Mlx5 if empty >= Self::mlx5_threshold(n) => (empty - MLX5_HOLD).min(n - slot),
            RxRefill::Intel { chunk } if empty > chunk => chunk,
            _ => 0,
        }
    }

    /// What a burst that has taken the ring's last slot does next.
    pub fn at_ring_end(self) -> AtRingEnd {
        match self {
            RxRefill::PerSlot => AtRingEnd::Continue,
            RxRefill::Mlx5 => AtRingEnd::Refill,
            RxRefill::Intel { .. } => AtRingEnd::Stop,
        }
    }

    /// Checks that a ring of `n` entries suits this policy; the error says why not.
    pub fn check(self, n: u32) -> Result<(), String> {
        match self {
            RxRefill::PerSlot => Ok(()),
            RxRefill::Mlx5 if Self::mlx5_threshold(n) <= MLX5_HOLD => Err(format!(
                "mlx5's vector refill needs a ring of at least 32 entries (its threshold n/4 above 4), got {n}"
            )),
            RxRefill::Intel { chunk } if chunk == 0 || n <= chunk || !n.is_multiple_of(chunk) => {
                Err(format!("an Intel vector refill of {chunk} needs a ring that is a larger multiple of it, got {n}"))
            }
            _ => Ok(()),
        }
    }

    fn mlx5_threshold(n: u32) -> u32 {
        MLX5_MAX_THRESH.min(n / 4)
    }
}

impl fmt::Display for RxRefill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RxRefill::PerSlot => f.write_str("slot"),
            RxRefill::Mlx5 => f.write_str("mlx5"),
            RxRefill::Intel { chunk: 32 } => f.write_str("i40e"),
            RxRefill::Intel { chunk: 64 } => f.write_str("ice"),
            RxRefill::Intel { chunk } => write!(f, "intel:{chunk}"),
        }
    }
}

impl FromStr for RxRefill {
    type Err = String;

    /// `slot`, `mlx5`, `i40e`, `ice`, or `intel:CHUNK`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "slot" => Ok(RxRefill::PerSlot),
            "mlx5" => Ok(RxRefill::Mlx5),
            "i40e" => Ok(RxRefill::Intel { chunk: 32 }),
            "ice" => Ok(RxRefill::Intel { chunk: 64 }),
            _ => s
                .strip_prefix("intel:")
                .and_then(|c| c.parse().ok())
                .map(|chunk| RxRefill::Intel { chunk })
                .ok_or_else(|| format!("unknown receive refill `{s}`: slot, mlx5, i40e, ice or intel:CHUNK")),
        }
    }
}

impl serde::Serialize for RxRefill {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for RxRefill {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mlx5: nothing below min(64, n/4) empty slots, then all but four, stopping at the ring's end.
    #[test]
    fn mlx5_reposts_all_but_four_once_a_quarter_is_empty() {
        let r = RxRefill::Mlx5;
        assert_eq!(r.due(128, 0, 31), 0);
        assert_eq!(r.due(128, 0, 32), 28);
        assert_eq!(r.due(128, 120, 40), 8, "never across the ring's end");
        assert_eq!(r.due(1024, 0, 63), 0);
        assert_eq!(r.due(1024, 0, 64), 60);
        assert!(r.check(16).is_err());
        assert!(r.check(32).is_ok());
    }

    /// i40e: exactly 32 once more than 32 are empty.
    #[test]
    fn intel_rearms_a_fixed_chunk() {
        let r: RxRefill = "i40e".parse().unwrap();
        assert_eq!(r.due(512, 0, 32), 0);
        assert_eq!(r.due(512, 0, 33), 32);
        assert_eq!(r.due(512, 480, 100), 32);
        assert!(r.check(32).is_err());
        assert!(r.check(96).is_ok());
        assert!("ice".parse::<RxRefill>().unwrap().check(96).is_err());
    }

    #[test]
    fn names_round_trip_and_bad_ones_are_refused() {
        for name in ["slot", "mlx5", "i40e", "ice", "intel:16"] {
            assert_eq!(name.parse::<RxRefill>().unwrap().to_string(), name);
        }
        assert!("bulk".parse::<RxRefill>().is_err());
        assert!("intel:x".parse::<RxRefill>().is_err());
        assert_eq!(RxRefill::PerSlot.due(64, 3, 5), 5);
    }
}
