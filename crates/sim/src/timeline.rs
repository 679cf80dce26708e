//! A run over time: ring occupancy and throughput in equal slices of the whole run, warm-up
//! included, so that a reader sees whether (and when) a run settled before its measurement window.

use serde::Serialize;

/// Slices a run is cut into.
pub const SLICES: usize = 40;

/// One slice of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Slice {
    /// Middle of the slice, µs of virtual time.
    pub t_us: f64,
    /// Mean ring occupancy (used / capacity over the design's rings) in the slice.
    pub occupancy: f64,
    /// Frames sent out during the slice, Gbps on the wire (with Ethernet's preamble and gap).
    pub gbps_wire: f64,
}

/// Accumulates a run's slices as events happen.
#[derive(Debug, Clone)]
pub struct Timeline {
    slice_ps: u64,
    /// Per slice: summed occupancy and its samples, and wire bits sent.
    acc: Vec<(f64, u64, u64)>,
}

impl Timeline {
    /// A timeline of a run offering traffic for `duration_ps`.
    pub fn new(duration_ps: u64) -> Timeline {
        Timeline { slice_ps: duration_ps.div_ceil(SLICES as u64).max(1), acc: vec![(0.0, 0, 0); SLICES] }
    }

    fn slot(&mut self, t: u64) -> Option<&mut (f64, u64, u64)> {
        self.acc.get_mut((t / self.slice_ps) as usize)
    }

    /// An occupancy sample at `t` (ignored after the offered traffic ends).
    #[inline]
    pub fn occupancy(&mut self, t: u64, share: f64) {
        if let Some(s) = self.slot(t) {
            s.0 += share;
            s.1 += 1;
        }
    }

    /// A frame of `wire_bits` left at `t`.
    #[inline]
    pub fn sent(&mut self, t: u64, wire_bits: u64) {
        if let Some(s) = self.slot(t) {
            s.2 += wire_bits;
        }
    }

    /// The slices that start before `end_ps` (a run that settled early ends before the timeline does).
    pub fn slices(&self, end_ps: u64) -> Vec<Slice> {
        let secs = self.slice_ps as f64 / 1e12;
        let n = end_ps.div_ceil(self.slice_ps) as usize;
        self.acc
            .iter()
            .take(n)
            .enumerate()
            .map(|(i, &(occ, n, bits))| Slice {
                t_us: (i as f64 + 0.5) * self.slice_ps as f64 / 1e6,
                occupancy: if n == 0 { 0.0 } else { occ / n as f64 },
                gbps_wire: bits as f64 / secs / 1e9,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_average_occupancy_and_rate() {
        let mut t = Timeline::new(40_000_000); // 40 µs: 1 µs slices
        t.occupancy(500_000, 0.2);
        t.occupancy(900_000, 0.4);
        t.sent(100_000, 12_304); // one 1518 B frame (1538 B with preamble and gap) in 1 µs
        t.occupancy(50_000_000, 1.0); // after the run: ignored
        let s = t.slices(40_000_000);
        assert_eq!(s.len(), SLICES);
        // A run that ended at 10.5 µs: the slices that started before.
        assert_eq!(t.slices(10_500_000).len(), 11);
        assert!((s[0].occupancy - 0.3).abs() < 1e-12 && (s[0].t_us - 0.5).abs() < 1e-12);
        assert!((s[0].gbps_wire - 12.304).abs() < 1e-9, "{}", s[0].gbps_wire);
        assert_eq!(s[1], Slice { t_us: 1.5, ..Slice::default() });
    }
}
