//! The RSS indirection table (redirection table, "RETA"): hash → receive queue, as NICs implement it.

use std::fmt;

/// Index of a receive queue (or, for shared designs, of whatever the table steers to).
pub type QueueId = u16;

/// Entries in the indirection table: 128, as on Intel and Mellanox NICs and in the Microsoft specification.
pub const RETA_SIZE: usize = 128;

/// A 128-entry indirection table. The NIC indexes it with the low 7 bits of the Toeplitz hash.
#[derive(Clone, PartialEq, Eq)]
pub struct IndirectionTable {
    entries: [QueueId; RETA_SIZE],
}

impl IndirectionTable {
    /// The drivers' default: entry `i` steers to queue `i mod queues`. `queues` must be at least 1.
    pub fn round_robin(queues: usize) -> Result<IndirectionTable, String> {
        if queues == 0 || queues > usize::from(QueueId::MAX) {
            return Err(format!("the indirection table needs between 1 and {} queues, got {queues}", QueueId::MAX));
        }
        Ok(IndirectionTable { entries: std::array::from_fn(|i| (i % queues) as QueueId) })
    }

    /// A table from explicit entries (e.g. to weight queues or steer traffic away from one).
    pub fn from_entries(entries: [QueueId; RETA_SIZE]) -> IndirectionTable {
        IndirectionTable { entries }
    }

    /// The queue for a packet whose RSS hash is `hash`.
    #[inline]
    pub fn queue(&self, hash: u32) -> QueueId {
        self.entries[hash as usize % RETA_SIZE]
    }

    /// The entries, in index order.
    pub fn entries(&self) -> &[QueueId; RETA_SIZE] {
        &self.entries
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
        assert_eq!(t.queues(), 3);
        assert!(IndirectionTable::round_robin(0).is_err());
    }
}
