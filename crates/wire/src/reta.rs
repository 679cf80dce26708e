//! The RSS indirection table (redirection table, "RETA"): hash → receive queue, as NICs implement it.

use std::fmt;

/// Index of a receive queue (or, for shared designs, of whatever the table steers to).
pub type QueueId = u16;

/// Entries of the table the Microsoft RSS specification describes, the default where no NIC driver says
/// otherwise (the live engine's software NIC).
pub const RETA_SIZE: usize = 128;

/// An indirection table of a power-of-two number of entries, indexed with the hash's low bits. Its size
/// is the NIC driver's (a machine profile's `nic.reta_entries`): filled round-robin, a table spreads queues
/// unevenly when their count does not divide it, 14 queues over 128 entries giving two of them 10 entries
/// and the other twelve 9 (9 % more load on two cores), over 512 entries 37 and 36 (1 %).
#[derive(Clone, PartialEq, Eq)]
pub struct IndirectionTable {
    entries: Box<[QueueId]>,
}

impl IndirectionTable {
    /// The drivers' default fill of a [`RETA_SIZE`]-entry table: entry `i` steers to queue `i mod queues`.
    pub fn round_robin(queues: usize) -> Result<IndirectionTable, String> {
        IndirectionTable::round_robin_sized(queues, RETA_SIZE)
    }

    /// Whether a table can have `entries` entries: a power of two, as the hash's low bits index it.
    pub fn check_entries(entries: usize) -> Result<(), String> {
        if entries.is_power_of_two() {
            Ok(())
        } else {
            Err(format!("an indirection table has a power-of-two number of entries, not {entries}"))
        }
    }

    /// The drivers' default fill of a table of `entries` entries (a power of two, at least `queues`): entry
    /// `i` steers to queue `i mod queues`.
    pub fn round_robin_sized(queues: usize, entries: usize) -> Result<IndirectionTable, String> {
        IndirectionTable::check_entries(entries)?;
        let most = entries.min(usize::from(QueueId::MAX));
        if queues == 0 || queues > most {
            return Err(format!(
                "the indirection table of {entries} entries steers to 1 to {most} queues, not {queues}"
            ));
        }
        Ok(IndirectionTable { entries: (0..entries).map(|i| (i % queues) as QueueId).collect() })
    }

    /// The queue for a packet whose RSS hash is `hash`.
    #[inline]
    pub fn queue(&self, hash: u32) -> QueueId {
        self.entries[hash as usize & (self.entries.len() - 1)]
    }

    /// Number of entries.
    pub fn size(&self) -> usize {
        self.entries.len()
    }

    /// Number of distinct queues the table steers to (its largest entry plus one).
    pub fn queues(&self) -> usize {
        self.entries.iter().map(|&q| usize::from(q) + 1).max().unwrap_or(1)
    }
}

impl fmt::Debug for IndirectionTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IndirectionTable({:?})", &self.entries[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_uses_low_bits() {
        let t = IndirectionTable::round_robin(3).unwrap();
        assert_eq!(t.queue(0), 0);
        assert_eq!(t.queue(4), 1);
        assert_eq!(t.queue(128 + 5), 2);
        assert_eq!((t.queues(), t.size()), (3, 128));
        assert!(IndirectionTable::round_robin(0).is_err());
    }

    #[test]
    fn a_larger_table_spreads_fourteen_queues_evenly() {
        let share = |entries| {
            let t = IndirectionTable::round_robin_sized(14, entries).unwrap();
            let mut n = [0usize; 14];
            (0..entries as u32).for_each(|h| n[usize::from(t.queue(h))] += 1);
            (*n.iter().min().unwrap(), *n.iter().max().unwrap())
        };
        assert_eq!(share(128), (9, 10));
        assert_eq!(share(512), (36, 37));
        // A power-of-two queue count steers alike in any table.
        let (a, b) = (IndirectionTable::round_robin(8).unwrap(), IndirectionTable::round_robin_sized(8, 512).unwrap());
        assert!((0..4096).all(|h| a.queue(h) == b.queue(h)));
        assert!(IndirectionTable::round_robin_sized(4, 100).is_err());
        assert!(IndirectionTable::round_robin_sized(200, 128).is_err());
    }
}
