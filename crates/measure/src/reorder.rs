//! RFC 4737 packet reordering metrics, computed online over received sequence numbers.
//!
//! Feed [`ReorderTracker::record`] the sequence number of every packet of one stream in arrival order;
//! [`ReorderTracker::report`] gives the reordered ratio (§4.1), the reordering extent (§4.2) and
//! n-reordering (§5). Sequence numbers count from 0 (or any start: NextExp begins below everything).
//!
//! Memory is bounded by one parameter, the window `W` (default [`DEFAULT_WINDOW`]), about 56 bytes per
//! slot, whatever the length of the stream:
//! - duplicates (§3.3: not counted) are recognised among sequence numbers within `W` of the highest one
//!   received; an older sequence number cannot be checked, is counted as received and reported in
//!   [`ReorderReport::unchecked_for_duplicates`];
//! - extents and n-reordering look back at most `W` distinct arrivals, as §4.2 allows for a bounded
//!   receiver buffer: a packet whose extent exceeds `W` is counted in [`ExtentSummary::beyond_window`];
//!   n-reordering is exact for every n <= `W`.
//!
//! Each packet costs O(log W) (a binary search over the in-window "records") plus amortised O(1).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// Default window: 1024 distinct arrivals of history and 1024 sequence numbers of duplicate detection.
pub const DEFAULT_WINDOW: usize = 1024;
/// Largest window accepted (about 56 MiB); larger requests are clamped to it.
pub const MAX_WINDOW: usize = 1 << 20;

/// Online RFC 4737 reordering metrics over one stream of sequence numbers, in bounded memory.
#[derive(Debug, Clone)]
pub struct ReorderTracker {
    window: u64,
    /// Highest sequence number received; RFC 4737 §3.3's NextExp is `max + 1`.
    max: Option<u64>,
    /// `tags[s % tags.len()] == s` iff `s` was received (exact for `s` within `W` of `max`, see
    /// `is_duplicate`); `tags.len()` is `W` rounded up to a power of two, so the slot is a mask.
    tags: Vec<u64>,
    /// In-order packets (those that raised NextExp) among the last `W` arrivals, as (index, seq). Both
    /// fields increase from front to back, so the first one above a reordered seq is found by bisection.
    records: VecDeque<(u64, u64)>,
    /// Sequence number of the last record dropped from the front of `records`.
    evicted_record: Option<u64>,
    /// The last `W` arrivals that have no later, smaller arrival yet, as (index, seq): the candidates for
    /// "previous smaller sequence number", increasing from front to back (a monotonic stack).
    smaller: VecDeque<(u64, u64)>,
    smaller_evicted: bool,
    /// Distinct packets received so far; the arrival index of the next one.
    received: u64,
    duplicates: u64,
    unchecked: u64,
    reordered: u64,
    /// `extents[e]`: reordered packets with extent `e` (1..=W).
    extents: Vec<u64>,
    beyond_window: u64,
    /// `runs[m]`: reordered packets preceded by exactly `m` larger arrivals in a row (`m == W`: at least W).
    runs: Vec<u64>,
}

/// The RFC 4737 metrics of one stream.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReorderReport {
    /// Distinct packets received (duplicates removed).
    pub received: u64,
    /// Arrivals recognised as duplicates and left out of every metric.
    pub duplicates: u64,
    /// Arrivals too far below the highest sequence number (by `window` or more) to check for duplication;
    /// they are counted as distinct.
    pub unchecked_for_duplicates: u64,
    /// Reordered packets (§3.3: sequence number below NextExp).
    pub reordered: u64,
    /// Reordered packet ratio, `reordered / received` (§4.1); 0 when nothing was received.
    pub ratio: f64,
    /// The window the tracker ran with.
    pub window: u64,
    /// Reordering extent of the reordered packets (§4.2).
    pub extent: ExtentSummary,
    /// `(n, packets that are n-reordered)` for n = 1 up to the largest n with a packet (§5).
    pub n_reordered: Vec<(u64, u64)>,
}

/// Distribution of the reordering extent (RFC 4737 §4.2) over the reordered packets.
///
/// In-order packets have no extent (there are `received - reordered` of them); reordered packets whose
/// extent exceeds the window have no exact one and are counted in `beyond_window`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ExtentSummary {
    /// Largest extent within the window; 0 if none.
    pub max: u64,
    /// Mean extent of the packets with an extent within the window; 0 if none.
    pub mean: f64,
    /// Reordered packets whose extent is larger than the window.
    pub beyond_window: u64,
    /// `(extent, packets)` for every extent that occurred, ascending.
    pub histogram: Vec<(u64, u64)>,
}

impl ReorderReport {
    /// The metrics of two independent streams (e.g. two NIC ports' sequence spaces) taken together:
    /// counts and histograms add up, the ratio and mean extent are over both.
    pub fn merge(&mut self, o: &ReorderReport) {
        self.received += o.received;
        self.duplicates += o.duplicates;
        self.unchecked_for_duplicates += o.unchecked_for_duplicates;
        self.reordered += o.reordered;
        self.ratio = if self.received == 0 { 0.0 } else { self.reordered as f64 / self.received as f64 };
        self.window = self.window.max(o.window);
        self.extent.merge(&o.extent);
        self.n_reordered = add_counts(&self.n_reordered, &o.n_reordered);
    }
}

impl ExtentSummary {
    fn merge(&mut self, o: &ExtentSummary) {
        let within = |h: &[(u64, u64)]| h.iter().map(|&(_, c)| c).sum::<u64>() as f64;
        let (a, b) = (within(&self.histogram), within(&o.histogram));
        self.mean = if a + b == 0.0 { 0.0 } else { (self.mean * a + o.mean * b) / (a + b) };
        self.max = self.max.max(o.max);
        self.beyond_window += o.beyond_window;
        self.histogram = add_counts(&self.histogram, &o.histogram);
    }
}

/// Two ascending `(key, count)` lists as one, counts of equal keys added.
fn add_counts(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for &(k, c) in a.iter().chain(b) {
        *m.entry(k).or_insert(0) += c;
    }
    m.into_iter().collect()
}

impl Default for ReorderTracker {
    fn default() -> Self {
        Self::new(DEFAULT_WINDOW)
    }
}

impl ReorderTracker {
    /// A tracker with a window of `window` (clamped to `1..=MAX_WINDOW`); see the module doc.
    pub fn new(window: usize) -> Self {
        let w = window.clamp(1, MAX_WINDOW);
        ReorderTracker {
            window: w as u64,
            max: None,
            // u64::MAX never matches wrongly: a query for it only happens once it is the maximum, i.e.
            // once it was received and its slot written.
            tags: vec![u64::MAX; w.next_power_of_two()],
            records: VecDeque::with_capacity(w),
            evicted_record: None,
            smaller: VecDeque::with_capacity(w),
            smaller_evicted: false,
            received: 0,
            duplicates: 0,
            unchecked: 0,
            reordered: 0,
            extents: vec![0; w + 1],
            beyond_window: 0,
            runs: vec![0; w + 1],
        }
    }

    /// Record the arrival of the packet with sequence number `seq`.
    pub fn record(&mut self, seq: u64) {
        // RFC 4737 §3.3: reordered iff seq < NextExp (= max + 1), i.e. seq <= max.
        let below_next_exp = self.max.filter(|&max| seq <= max);
        if below_next_exp.is_some_and(|max| self.is_duplicate(seq, max)) {
            self.duplicates += 1;
            return;
        }
        let i = self.received;
        self.received += 1;
        self.evict_older_than(i);
        self.mark_seen(seq);
        let run = self.push_smaller(i, seq);
        if below_next_exp.is_some() {
            self.reordered += 1;
            self.record_extent(i, seq);
            // RFC 4737 §5: n-reordered for every n <= run.
            if let Some(slot) = self.runs.get_mut(run.min(self.window) as usize) {
                *slot += 1;
            }
        } else {
            // RFC 4737 §3.3: NextExp = seq + 1.
            self.max = Some(seq);
            self.records.push_back((i, seq));
        }
    }

    /// Record every sequence number of `seqs`, in order.
    pub fn record_all(&mut self, seqs: impl IntoIterator<Item = u64>) {
        seqs.into_iter().for_each(|s| self.record(s));
    }

    /// Whether `seq` (at most `max`) was already received; counts it as unchecked when it is too old.
    fn is_duplicate(&mut self, seq: u64, max: u64) -> bool {
        if max - seq >= self.window {
            self.unchecked += 1;
            return false;
        }
        // Within the window the slot cannot hold a newer sequence number (that would be > max), and the
        // in-window numbers written to it are at least `tags.len() >= W` apart, so equality means exactly
        // "seen".
        self.tags[self.slot(seq)] == seq
    }

    fn mark_seen(&mut self, seq: u64) {
        // Only in-window sequence numbers are written, so an in-window tag is never overwritten by an
        // older one.
        if self.max.is_none_or(|max| seq > max || max - seq < self.window) {
            let slot = self.slot(seq);
            self.tags[slot] = seq;
        }
    }

    #[inline]
    fn slot(&self, seq: u64) -> usize {
        seq as usize & (self.tags.len() - 1)
    }

    /// Forget history older than `W` arrivals before index `i`.
    fn evict_older_than(&mut self, i: u64) {
        let Some(oldest) = i.checked_sub(self.window) else { return };
        while let Some(&(_, seq)) = self.records.front().filter(|r| r.0 < oldest) {
            self.evicted_record = Some(seq);
            self.records.pop_front();
        }
        while self.smaller.front().is_some_and(|s| s.0 < oldest) {
            self.smaller.pop_front();
            self.smaller_evicted = true;
        }
    }

    /// RFC 4737 §4.2: extent e = i - j for the smallest j with s[j] > s[i].
    ///
    /// That j is always a record (a packet above everything before it), and records are increasing, so
    /// j is the first record above `seq`. If a record already evicted is above `seq`, j is older than the
    /// window and the extent exceeds it.
    fn record_extent(&mut self, i: u64, seq: u64) {
        let first_above = if self.evicted_record.is_some_and(|r| r > seq) {
            None
        } else {
            self.records.get(self.records.partition_point(|r| r.1 <= seq))
        };
        match first_above.and_then(|&(j, _)| self.extents.get_mut((i - j) as usize)) {
            Some(count) => *count += 1,
            None => self.beyond_window += 1,
        }
    }

    /// Push arrival (i, seq) on the monotonic stack; return how many arrivals right before it are larger
    /// (capped at W), the largest n for which it is n-reordered (RFC 4737 §5).
    fn push_smaller(&mut self, i: u64, seq: u64) -> u64 {
        while self.smaller.back().is_some_and(|s| s.1 > seq) {
            self.smaller.pop_back();
        }
        let run = match self.smaller.back() {
            Some(&(k, _)) => i - 1 - k,
            // Nothing smaller in the window: if something was evicted the run is at least W long,
            // otherwise every earlier arrival is larger.
            None if self.smaller_evicted => self.window,
            None => i,
        };
        self.smaller.push_back((i, seq));
        run
    }

    /// Distinct packets received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Reordered packets so far.
    pub fn reordered(&self) -> u64 {
        self.reordered
    }

    /// Packets that are n-reordered (RFC 4737 §5); `None` for n = 0 and for n > window (not tracked).
    pub fn n_reordered(&self, n: u64) -> Option<u64> {
        let n = usize::try_from(n).ok().filter(|&n| n >= 1 && n as u64 <= self.window)?;
        // A packet is n-reordered for every n from 1 up to its run.
        Some(self.runs.iter().skip(n).sum())
    }

    /// The metrics so far.
    pub fn report(&self) -> ReorderReport {
        let histogram: Vec<(u64, u64)> =
            (1u64..).zip(self.extents.iter().skip(1).copied()).filter(|&(_, count)| count > 0).collect();
        let within: u64 = histogram.iter().map(|&(_, c)| c).sum();
        let weighted: f64 = histogram.iter().map(|&(e, c)| e as f64 * c as f64).sum();
        let extent = ExtentSummary {
            max: histogram.last().map_or(0, |&(e, _)| e),
            mean: if within == 0 { 0.0 } else { weighted / within as f64 },
            beyond_window: self.beyond_window,
            histogram,
        };
        let top_run = self.runs.iter().rposition(|&c| c > 0).unwrap_or(0) as u64;
        let n_reordered = (1..=top_run).filter_map(|n| Some((n, self.n_reordered(n)?))).collect();
        ReorderReport {
            received: self.received,
            duplicates: self.duplicates,
            unchecked_for_duplicates: self.unchecked,
            reordered: self.reordered,
            // RFC 4737 §4.1: reordered ratio over the packets received, duplicates removed.
            ratio: if self.received == 0 { 0.0 } else { self.reordered as f64 / self.received as f64 },
            window: self.window,
            extent,
            n_reordered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whole-stream RFC 4737 metrics, straight from the definitions, in O(n²).
    struct Oracle {
        received: u64,
        duplicates: u64,
        reordered: u64,
        /// Extent of every reordered packet.
        extents: Vec<u64>,
        /// Largest n for which each reordered packet is n-reordered.
        runs: Vec<u64>,
    }

    fn oracle(arrivals: &[u64]) -> Oracle {
        let mut seen = std::collections::HashSet::new();
        let s: Vec<u64> = arrivals.iter().copied().filter(|&x| seen.insert(x)).collect();
        let (mut next_exp, mut reordered, mut extents, mut runs) = (0, 0, vec![], vec![]);
        for i in 0..s.len() {
            if s[i] >= next_exp {
                next_exp = s[i] + 1;
                continue;
            }
            reordered += 1;
            let j = (0..i).find(|&j| s[j] > s[i]).unwrap();
            extents.push((i - j) as u64);
            runs.push((0..i).rev().take_while(|&k| s[k] > s[i]).count() as u64);
        }
        Oracle { received: s.len() as u64, duplicates: (arrivals.len() - s.len()) as u64, reordered, extents, runs }
    }

    fn run(window: usize, arrivals: &[u64]) -> ReorderTracker {
        let mut t = ReorderTracker::new(window);
        t.record_all(arrivals.iter().copied());
        t
    }

    fn n_counts(t: &ReorderTracker, max_n: u64) -> Vec<u64> {
        (1..=max_n).map(|n| t.n_reordered(n).unwrap()).collect()
    }

    // Worked examples in the shape of RFC 4737 §7 (one packet reordered, two reordered, two separate
    // single-packet reorderings, three reordered plus a duplicate). The values below are derived by hand
    // from the definitions of §3.3, §4.1, §4.2 and §5, not copied from the RFC's tables.

    #[test]
    fn one_packet_reordered() {
        // Packet 4 arrives after 5, 6, 7 and 8: j is the position of 5, four arrivals earlier.
        let r = run(DEFAULT_WINDOW, &[1, 2, 3, 5, 6, 7, 8, 4, 9, 10]).report();
        assert_eq!((r.received, r.reordered, r.duplicates), (10, 1, 0));
        assert_eq!(r.ratio, 0.1);
        assert_eq!(r.extent.histogram, vec![(4, 1)]);
        assert_eq!((r.extent.max, r.extent.mean, r.extent.beyond_window), (4, 4.0, 0));
        // 5, 6, 7, 8 right before it are all larger: 1-, 2-, 3- and 4-reordered, not 5-reordered.
        assert_eq!(r.n_reordered, vec![(1, 1), (2, 1), (3, 1), (4, 1)]);
    }

    #[test]
    fn two_packets_reordered() {
        // 3 and 4 arrive after 5, 6, 7. Both have extents (3 and 4) but only 3 is n-reordered: 4 arrives
        // right after 3, which is smaller (§5 counts consecutive larger predecessors).
        let t = run(DEFAULT_WINDOW, &[1, 2, 5, 6, 7, 3, 4, 8, 9, 10]);
        let r = t.report();
        assert_eq!((r.reordered, r.ratio), (2, 0.2));
        assert_eq!(r.extent.histogram, vec![(3, 1), (4, 1)]);
        assert_eq!(r.extent.mean, 3.5);
        assert_eq!(n_counts(&t, 4), vec![1, 1, 1, 0]);
    }

    #[test]
    fn two_single_packet_reorderings() {
        let r = run(DEFAULT_WINDOW, &[1, 3, 2, 4, 6, 5, 7, 8, 9, 10]).report();
        assert_eq!((r.reordered, r.ratio), (2, 0.2));
        assert_eq!(r.extent.histogram, vec![(1, 2)]);
        assert_eq!(r.n_reordered, vec![(1, 2)]);
    }

    #[test]
    fn three_packets_reordered_and_a_duplicate() {
        // 5 arrives twice; the copy is dropped before any metric, so the indices are those of
        // 1 2 3 7 4 5 6 8 9 10: extents 1, 2, 3 (all measured from 7); only 4 directly follows a larger one.
        let t = run(DEFAULT_WINDOW, &[1, 2, 3, 7, 4, 5, 5, 6, 8, 9, 10]);
        let r = t.report();
        assert_eq!((r.received, r.duplicates, r.reordered), (10, 1, 3));
        assert_eq!(r.ratio, 0.3);
        assert_eq!(r.extent.histogram, vec![(1, 1), (2, 1), (3, 1)]);
        assert_eq!(r.n_reordered, vec![(1, 1)]);
    }

    #[test]
    fn in_order_stream_and_empty_stream() {
        let r = run(4, &(0..100).collect::<Vec<_>>()).report();
        assert_eq!((r.received, r.reordered, r.ratio, r.duplicates), (100, 0, 0.0, 0));
        assert!(r.extent.histogram.is_empty() && r.n_reordered.is_empty());
        assert_eq!(ReorderTracker::default().report().ratio, 0.0);
    }

    #[test]
    fn extents_beyond_the_window_are_counted_not_guessed() {
        // 0 arrives after 1..=10 with a window of 4: its extent is 10.
        let mut seqs: Vec<u64> = (1..=10).collect();
        seqs.push(0);
        let t = run(4, &seqs);
        let r = t.report();
        assert_eq!((r.reordered, r.extent.beyond_window, r.extent.max), (1, 1, 0));
        assert_eq!(n_counts(&t, 4), vec![1, 1, 1, 1]);
        assert_eq!(t.n_reordered(5), None);
        // Too old to check for duplication: counted once, as distinct.
        assert_eq!(r.unchecked_for_duplicates, 1);
    }

    #[test]
    fn extreme_sequence_numbers_and_windows() {
        let r = run(0, &[u64::MAX, u64::MAX, 0, u64::MAX - 1]).report();
        assert_eq!((r.received, r.window), (3, 1));
        let r = run(usize::MAX, &[u64::MAX, u64::MAX, 0, u64::MAX - 1]).report();
        assert_eq!((r.received, r.duplicates, r.reordered, r.window), (3, 1, 2, MAX_WINDOW as u64));
    }

    #[test]
    fn report_serialises() {
        let r = run(16, &[0, 2, 1]).report();
        let back: ReorderReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    /// Check the tracker against the oracle; `window` must not hide duplicates (see callers).
    fn agrees_with_oracle(window: usize, arrivals: &[u64]) -> Result<(), TestCaseError> {
        let (t, o) = (run(window, arrivals), oracle(arrivals));
        let r = t.report();
        prop_assert_eq!((r.received, r.duplicates, r.reordered), (o.received, o.duplicates, o.reordered));
        let want_ratio = if o.received == 0 { 0.0 } else { o.reordered as f64 / o.received as f64 };
        prop_assert_eq!(r.ratio, want_ratio);
        let w = window as u64;
        prop_assert_eq!(r.extent.beyond_window, o.extents.iter().filter(|&&e| e > w).count() as u64);
        for &(e, count) in &r.extent.histogram {
            prop_assert_eq!(count, o.extents.iter().filter(|&&x| x == e).count() as u64);
        }
        prop_assert_eq!(r.extent.histogram.iter().map(|h| h.1).sum::<u64>() + r.extent.beyond_window, o.reordered);
        for n in 1..=w.min(64) {
            prop_assert_eq!(t.n_reordered(n), Some(o.runs.iter().filter(|&&m| m >= n).count() as u64));
        }
        Ok(())
    }

    fn permutation(max_len: usize) -> impl Strategy<Value = Vec<u64>> {
        (0..max_len).prop_flat_map(|n| Just((0..n as u64).collect::<Vec<_>>()).prop_shuffle())
    }

    #[test]
    fn merged_reports_are_those_of_both_streams() {
        let report = |arrivals: &[u64]| {
            let mut t = ReorderTracker::new(16);
            arrivals.iter().for_each(|&s| t.record(s));
            t.report()
        };
        let (a, b) = (report(&[0, 2, 1, 3]), report(&[1, 0, 4, 2, 3, 3]));
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.received, a.received + b.received);
        assert_eq!(m.reordered, a.reordered + b.reordered);
        assert_eq!(m.duplicates, 1);
        assert_eq!(m.ratio, m.reordered as f64 / m.received as f64);
        let n = |r: &ReorderReport| r.extent.histogram.iter().map(|&(_, c)| c).sum::<u64>();
        assert_eq!(n(&m), n(&a) + n(&b));
        assert_eq!(m.extent.max, a.extent.max.max(b.extent.max));
    }

    proptest! {
        /// Ratio, extents and n-reordering on random permutations equal the brute-force definitions,
        /// with a window large enough to see everything and with a tiny one.
        #[test]
        fn permutations_match_oracle(seqs in permutation(60), window in 1usize..8) {
            agrees_with_oracle(64, &seqs)?;
            agrees_with_oracle(window, &seqs)?;
        }

        /// Duplicates anywhere in the stream are removed before any metric (window covers all values).
        #[test]
        fn duplicates_match_oracle(seqs in prop::collection::vec(0u64..40, 0..80)) {
            agrees_with_oracle(64, &seqs)?;
        }

        /// Sparse sequence numbers (losses and large gaps) within the window behave the same.
        #[test]
        fn gaps_match_oracle(seqs in prop::collection::btree_set(0u64..1_000_000, 0..60)
                                         .prop_map(|s| s.into_iter().collect::<Vec<_>>()).prop_shuffle()) {
            agrees_with_oracle(64, &seqs)?;
        }

        /// Never panics, and the counts add up, whatever the input and window.
        #[test]
        fn counts_are_consistent(seqs in prop::collection::vec(any::<u64>(), 0..100), window in 0usize..16) {
            let r = run(window, &seqs).report();
            prop_assert_eq!(r.received + r.duplicates, seqs.len() as u64);
            prop_assert!(r.reordered <= r.received);
        }
    }
}
