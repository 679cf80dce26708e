//! The periodic measurement fed to a design's controller ([`ifaces::DeviceSide::sample`]; dynamic
//! shRing, 000 §4.5-4.6): received throughput, memory bandwidth (the simulator measures it, as Intel PCM
//! does on the testbed) and each core's mean time between rx calls, over each [`PERIOD_PS`] of virtual
//! time.

use ifaces::Sample;

/// Sampling period, ps: shRing §4.6 samples every 10 ms.
pub const PERIOD_PS: u64 = 10_000_000_000;

/// Cumulative counters as of the last sample.
#[derive(Debug, Clone, Default)]
pub struct Sampler {
    at_ps: u64,
    rx_bytes: u64,
    mem_bytes: u64,
    polls: Vec<u64>,
}

impl Sampler {
    /// The sample for the period ending at `now_ps`, given the cumulative bytes the NIC accepted, bytes
    /// DRAM moved and rx calls per core.
    pub fn sample(&mut self, now_ps: u64, rx_bytes: u64, mem_bytes: u64, polls: &[u64]) -> Sample {
        let period_ps = now_ps.saturating_sub(self.at_ps).max(1);
        let secs = period_ps as f64 / 1e12;
        self.polls.resize(polls.len(), 0);
        let rx_gap_ns = polls
            .iter()
            .zip(&self.polls)
            .map(|(&n, &before)| period_ps as f64 / 1e3 / (n - before).max(1) as f64)
            .collect();
        let s = Sample {
            period_ns: period_ps / 1000,
            rx_bits_per_s: (rx_bytes - self.rx_bytes) as f64 * 8.0 / secs,
            mem_bytes_per_s: Some((mem_bytes - self.mem_bytes) as f64 / secs),
            rx_gap_ns,
        };
        (self.at_ps, self.rx_bytes, self.mem_bytes) = (now_ps, rx_bytes, mem_bytes);
        self.polls.copy_from_slice(polls);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_over_the_period() {
        let mut s = Sampler::default();
        let a = s.sample(PERIOD_PS, 125_000_000, 1_000_000_000, &[1000, 0]);
        assert_eq!(a.period_ns, 10_000_000);
        assert!((a.rx_bits_per_s - 100e9).abs() < 1.0);
        assert_eq!(a.mem_bytes_per_s, Some(100e9));
        assert_eq!(a.rx_gap_ns, [10_000.0, 10_000_000.0]);
        let b = s.sample(2 * PERIOD_PS, 125_000_000, 1_000_000_000, &[3000, 10]);
        assert_eq!(b.rx_bits_per_s, 0.0);
        assert_eq!(b.rx_gap_ns, [5_000.0, 1_000_000.0]);
    }
}
