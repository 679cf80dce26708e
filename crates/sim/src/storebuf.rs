//! A core's store buffer, where it matters: behind uncached (UC) stores to device registers.
//!
//! Stores commit from the store buffer in program order (x86-TSO). A store to UC memory leaves for the
//! device only once the stores before it have committed, and commits only a round trip later, when it is
//! known to be ordered: UC stores go out one at a time (J. McCalpin, Intel Community, "Why do MemReq TLPs
//! take 100s nanoseconds to be generated after MMIO writes?", 2020; the profile's `cpu.uc_write_ns`). The
//! stores behind one wait in the buffer meanwhile; the core goes on until the buffer is full, then waits
//! for its oldest entry to commit. A store with nothing uncommitted ahead of it commits at once (its own
//! fill is [`crate::probe`]'s business), so only a design whose registers are mapped uncached
//! ([`ifaces::Design::UNCACHED_REGISTERS`]) ever fills this buffer.

use std::collections::VecDeque;

/// The uncommitted entries of one core's store buffer: their commit times, oldest first, non-decreasing.
#[derive(Debug, Clone, Default)]
pub struct StoreBuffer {
    commits: VecDeque<u64>,
}

impl StoreBuffer {
    /// An uncached store issued at `now` that keeps the next store `gap` behind it, with `entries` in
    /// the buffer: when the core may go on, and when the store leaves for the device.
    pub fn uncached(&mut self, now: u64, gap: u64, entries: usize) -> (u64, u64) {
        let go_on = self.room(now, entries);
        let leaves = self.commits.back().map_or(go_on, |&c| c.max(go_on));
        self.commits.push_back(leaves + gap);
        (go_on, leaves)
    }

    /// `n` cacheable stores issued at `now`: when the core may go on. They commit at once unless stores
    /// ahead of them are still uncommitted.
    pub fn cached(&mut self, now: u64, n: u64, entries: usize) -> u64 {
        let mut now = now;
        for _ in 0..n {
            now = self.room(now, entries);
            match self.commits.back() {
                Some(&c) => self.commits.push_back(c),
                None => break,
            }
        }
        now
    }

    /// When every store issued so far has committed (what an atomic or a fence waits for), from `now`.
    pub fn drained(&self, now: u64) -> u64 {
        self.commits.back().map_or(now, |&c| c.max(now))
    }

    /// Forget the entries committed by `now`; if `entries` are still uncommitted, wait for the oldest.
    fn room(&mut self, mut now: u64, entries: usize) -> u64 {
        while self.commits.front().is_some_and(|&c| c <= now) {
            self.commits.pop_front();
        }
        while self.commits.len() >= entries {
            now = now.max(self.commits.pop_front().expect("a full store buffer"));
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uncached stores leave a gap apart and the core runs ahead of them until its buffer is full of
    /// them and the stores behind them; with nothing uncached ahead, stores cost the buffer nothing.
    #[test]
    fn uncached_stores_leave_one_at_a_time_and_hold_the_stores_behind_them() {
        let mut sb = StoreBuffer::default();
        assert_eq!(sb.cached(0, 8, 4), 0, "no uncached store ahead: they commit at once");
        assert_eq!(sb.uncached(100, 50, 4), (100, 100), "the first leaves when issued");
        assert_eq!(sb.uncached(101, 50, 4), (101, 150), "the next a gap later");
        assert_eq!(sb.cached(102, 1, 4), 102, "a store behind them waits in the buffer, the core goes on");
        assert_eq!(sb.drained(102), 200, "it commits with the second one");
        assert_eq!(sb.uncached(103, 50, 4), (103, 200), "four entries: the buffer is full now");
        assert_eq!(sb.cached(104, 1, 4), 150, "a fifth store waits for the oldest to commit");
        assert_eq!(sb.uncached(1000, 50, 4), (1000, 1000), "all committed after a pause");
    }
}
