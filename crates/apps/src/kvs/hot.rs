//! nmKVS's hot items of one server core (nicmem §4.2.2, §5): the hottest keys of the core's partition,
//! found by Space-Saving over the requests it serves, are moved into NIC memory and served zero-copy
//! ([`ifaces::nicmem::kvs`] holds the stable/pending protocol); colder ones go back to the host log.
//!
//! The paper assumes hot items are identified "using a heavy hitters algorithm [19, 23, 87]" and moved
//! to nicmem "while evicting colder items back to hostmem", without a schedule; rxlab re-ranks every
//! `epoch` requests: the top `budget` keys by Space-Saving count are made hot (as far as NIC memory
//! allows), hot keys that left the top are evicted once no transmit descriptor references them, and a
//! value written while hot is stored back in the log on eviction.

use super::store::{KeyHash, Partition};
use ifaces::Probe;
use ifaces::nicmem::NicMem;
use ifaces::nicmem::kvs::{Evicted, HotSet, KeyMap, Payload, SpaceSaving};
use ifaces::sync::Arc;

/// Space-Saving counters per hot item: with `k` counters every key of frequency above `N/k` is counted
/// (Metwally et al., Theorem 2), so 4 per hot item tolerates a long tail of cold keys between hot ones.
const COUNTERS_PER_ITEM: usize = 4;
/// Fewest counters, so that small budgets still rank.
const MIN_COUNTERS: usize = 64;

/// What the hot-item mode counted.
#[derive(Debug, Default, Clone, Copy)]
pub struct HotStats {
    /// Gets answered zero-copy from NIC memory.
    pub zero_copy: u64,
    /// Gets of hot items answered with a copy of the pending buffer (a descriptor held the stale stable
    /// buffer).
    pub copies: u64,
    /// Sets of hot items.
    pub sets: u64,
    /// Keys made hot.
    pub promoted: u64,
    /// Keys made cold again.
    pub evicted: u64,
    /// Promotions refused because NIC memory was full.
    pub nicmem_full: u64,
}

/// The hot items of one core and how they are chosen.
#[derive(Debug)]
pub struct HotItems {
    set: HotSet,
    counts: SpaceSaving,
    /// Most hot items on this core.
    budget: usize,
    /// Requests between re-rankings.
    epoch: u64,
    since: u64,
    /// The key bytes of each hot item, to store it back in the log.
    keys: KeyMap<Vec<u8>>,
    stats: HotStats,
}

impl HotItems {
    /// Up to `budget` hot items of core `core` in `nicmem`, re-ranked every `epoch` requests; values
    /// shorter than `min_zero_copy` are answered by copy.
    pub fn new(nicmem: Arc<NicMem>, core: u16, budget: usize, epoch: u64, min_zero_copy: usize) -> HotItems {
        HotItems {
            set: HotSet::new(nicmem, core, min_zero_copy),
            counts: SpaceSaving::new((budget * COUNTERS_PER_ITEM).max(MIN_COUNTERS)),
            budget,
            epoch: epoch.max(1),
            since: 0,
            keys: KeyMap::default(),
            stats: HotStats::default(),
        }
    }

    /// Count a request for `h`; every `epoch` requests, re-rank and move items between the log and NIC
    /// memory.
    pub fn observe<P: Probe>(&mut self, p: &mut P, h: KeyHash, part: &mut Partition) {
        self.counts.offer(p, h.0);
        self.since += 1;
        if self.since >= self.epoch {
            self.since = 0;
            self.rerank(p, part);
        }
    }

    fn rerank<P: Probe>(&mut self, p: &mut P, part: &mut Partition) {
        let top = self.counts.top(p, self.budget);
        let wanted: KeyMap<()> = top.iter().map(|&k| (k, ())).collect();
        let cold: Vec<u64> = self.set.keys().filter(|k| !wanted.contains_key(k)).collect();
        for k in cold {
            // Still referenced by a queued response: try again next epoch.
            let Some(e) = self.set.evict(k) else { continue };
            self.stats.evicted += 1;
            let key = self.keys.remove(&k).expect("hot items have their key");
            if let Evicted::Dirty(value) = e {
                part.put(p, &key, &value, KeyHash(k));
                self.set.recycle(value);
            }
        }
        for k in top {
            if self.set.len() >= self.budget {
                break;
            }
            if self.set.contains(k) {
                continue;
            }
            // Only items the log holds can be made hot.
            let Some((key, value)) = part.get_by_hash(p, KeyHash(k)) else { continue };
            if self.set.insert(p, k, value).is_err() {
                self.stats.nicmem_full += 1;
                break;
            }
            self.keys.insert(k, key.to_vec());
            self.stats.promoted += 1;
        }
    }

    /// A get of `h`: the hot item's answer, or `None` if it is not hot.
    pub fn get<P: Probe>(&mut self, p: &mut P, h: KeyHash) -> Option<Payload<'_>> {
        let r = self.set.get(p, h.0)?;
        match &r {
            Payload::ZeroCopy(_) => self.stats.zero_copy += 1,
            Payload::Copy(_) => self.stats.copies += 1,
        }
        Some(r)
    }

    /// A set of `h` to `value`: true if it is hot (and so stored here rather than in the log).
    pub fn set<P: Probe>(&mut self, p: &mut P, h: KeyHash, value: &[u8]) -> bool {
        let hot = self.set.set(p, h.0, value);
        self.stats.sets += u64::from(hot);
        hot
    }

    /// Items hot now.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether no item is hot.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Counters.
    pub fn stats(&self) -> HotStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ifaces::{BufLayout, NoProbe};

    fn put(part: &mut Partition, k: u32, v: &[u8]) -> KeyHash {
        let p = &mut NoProbe::new();
        let h = KeyHash::of(p, &k.to_le_bytes());
        assert!(part.put(p, &k.to_le_bytes(), v, h));
        h
    }

    #[test]
    fn the_hottest_keys_move_to_nicmem_and_back() {
        let nm = NicMem::new(4 * 2048, BufLayout::PACKED_2K).unwrap();
        let mut part = Partition::new(256, 1 << 20);
        let hs: Vec<KeyHash> = (0..100u32).map(|k| put(&mut part, k, &[k as u8; 100])).collect();
        let mut hot = HotItems::new(nm.clone(), 0, 3, 50, 6);
        let p = &mut NoProbe::new();
        // Keys 0..3 take half the requests.
        for i in 0..1000usize {
            let k = if i % 2 == 0 { i % 3 } else { 3 + i % 97 };
            hot.observe(p, hs[k], &mut part);
        }
        assert_eq!(hot.len(), 3);
        for (k, h) in hs.iter().enumerate().take(3) {
            let Some(Payload::ZeroCopy(z)) = hot.get(p, *h) else { panic!("key {k} is hot") };
            assert_eq!(z.len(), 100);
        }
        assert!(hot.get(p, hs[50]).is_none());
        // A set while hot is stored back in the log once the key cools down.
        assert!(hot.set(p, hs[1], b"new"));
        for i in 0..2000usize {
            hot.observe(p, hs[10 + i % 3], &mut part);
        }
        assert!(hot.get(p, hs[1]).is_none(), "key 1 cooled down");
        let key = 1u32.to_le_bytes();
        assert_eq!(part.get(p, &key, hs[1]), Some(&b"new"[..]));
        let s = hot.stats();
        assert_eq!((s.promoted, s.evicted, s.zero_copy, s.sets), (6, 3, 3, 1), "{s:?}");
        drop(hot);
        assert_eq!(nm.available(), 4);
    }
}
