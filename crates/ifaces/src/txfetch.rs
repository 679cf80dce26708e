//! A device's reads of the transmit descriptors a doorbell announced (DPDK's transmit rings, Ensō's TX
//! notifications, mlx5's send WQEs as nicmem's designs post them). A descriptor holds the address of the
//! data it sends, so the device reads it before the data, and it cannot read it before the doorbell that
//! announces it. The device reads what a doorbell announced in one request when it reaches it, without
//! waiting for the reads already on their way (Ensō's `cpu_to_fpga.sv` queues a read of `head..tail`
//! per doorbell, up to `MAX_TX_DSC_BATCH`, and hands each to its read data mover as it comes), sends
//! what it has already read meanwhile, and waits only with nothing else to send: at low load a packet's
//! transmit stage holds both reads, under load the descriptor reads overlap the data's.

use crate::probe::Probe;
use crate::ringsize::RingSize;
use std::collections::VecDeque;

/// The read state of one ring of descriptors, by free-running index.
#[derive(Debug, Clone, Default)]
pub struct TxFetch {
    /// Descriptors before this index are on the device.
    fetched: u32,
    /// Descriptors before this index are read or being read.
    requested: u32,
    /// Reads on their way, oldest first: up to which index each reads, and when its data arrives (ns).
    fetching: VecDeque<(u32, u64)>,
}

impl TxFetch {
    /// Note the reads that have arrived by now; then, if software announced descriptors up to `announced`
    /// that no read asked for, read up to `batch` of them from a ring of `size` slots: `read(p, slot, k)`
    /// reports the read of `k` contiguous slots from `slot`, once, or twice where the ring wraps.
    #[inline]
    pub fn fetch<P: Probe>(
        &mut self,
        p: &mut P,
        announced: u32,
        batch: u32,
        size: RingSize,
        mut read: impl FnMut(&mut P, usize, usize),
    ) {
        while let Some(&(to, at)) = self.fetching.front()
            && at <= p.now_ns()
        {
            self.fetched = to;
            self.fetching.pop_front();
        }
        if self.requested == announced {
            return;
        }
        let n = announced.wrapping_sub(self.requested).min(batch);
        for (slot, k) in size.runs(self.requested, n) {
            read(p, slot, k);
        }
        self.requested = self.requested.wrapping_add(n);
        self.fetching.push_back((self.requested, p.read_done_ns()));
    }

    /// Whether descriptor `next`, the next the device sends, is on the device.
    #[inline]
    pub fn has(&self, next: u32) -> bool {
        next != self.fetched
    }

    /// When the oldest read on its way arrives, if the device has sent every descriptor it read (`next`
    /// is the next it sends).
    #[inline]
    pub fn waiting(&self, next: u32) -> Option<u64> {
        self.fetching.front().filter(|_| next == self.fetched).map(|&(_, at)| at)
    }
}

/// Send what `dev` has read (`send` fetches what doorbells announced and returns the packets sent); with
/// nothing sent, wait for the first read on its way (`waiting`) and send again.
#[inline]
pub fn send_or_wait<D, P: Probe>(
    dev: &mut D,
    p: &mut P,
    mut send: impl FnMut(&mut D, &mut P) -> usize,
    waiting: impl FnOnce(&D) -> Option<u64>,
) -> usize {
    let sent = send(dev, p);
    match waiting(dev) {
        Some(at) if sent == 0 => {
            p.wait_until_ns(at);
            send(dev, p)
        }
        _ => sent,
    }
}

/// Serve `n` queues in turn from queue `first` until `budget` packets are sent: `send(q, left)` sends up
/// to `left` packets of queue `q` and returns how many it sent. Returns the packets sent.
#[inline]
pub fn in_turn(n: usize, first: usize, budget: usize, mut send: impl FnMut(usize, usize) -> usize) -> usize {
    let mut sent = 0;
    for i in 0..n {
        if sent >= budget {
            break;
        }
        sent += send((first + i) % n, budget - sent);
    }
    sent
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::{CountingProbe, NoProbe};

    /// Ring of the tests' reads, larger than any of them: each read is one run.
    fn size() -> RingSize {
        RingSize::new(16).unwrap()
    }

    /// Where reads take no time (the live engine), a read is on the device at the next call; a read a
    /// call, up to the batch, without waiting for the one before.
    #[test]
    fn reads_up_to_the_batch_without_waiting_for_the_last() {
        let p = &mut NoProbe::default();
        let mut f = TxFetch::default();
        let mut reads = vec![];
        f.fetch(p, 10, 4, size(), |_, slot, k| reads.push((slot, k)));
        assert!(!f.has(0) && f.waiting(0).is_some(), "on its way");
        f.fetch(p, 10, 4, size(), |_, slot, k| reads.push((slot, k)));
        f.fetch(p, 10, 4, size(), |_, slot, k| reads.push((slot, k)));
        assert_eq!(reads, [(0, 4), (4, 4), (8, 2)]);
        f.fetch(p, 10, 4, size(), |_, _, _| panic!("nothing announced is left to read"));
        assert!(f.has(9) && !f.has(10) && f.waiting(10).is_none());
    }

    /// A doorbell's read goes out while an earlier one is on its way; the device has a descriptor once the
    /// read that asked for it has arrived, in order.
    #[test]
    fn a_read_a_doorbell_in_flight_together() {
        let p = &mut CountingProbe { read_ns: 500, ..CountingProbe::default() };
        let mut f = TxFetch::default();
        let mut reads = vec![];
        f.fetch(p, 4, 64, size(), |p, slot, k| reads.push((slot, k, p.now)));
        p.now = 100;
        f.fetch(p, 8, 64, size(), |p, slot, k| reads.push((slot, k, p.now)));
        assert_eq!(reads, [(0, 4, 0), (4, 4, 100)], "the second read does not wait for the first");
        assert_eq!((f.has(0), f.waiting(0)), (false, Some(500)));
        p.now = 500;
        f.fetch(p, 8, 64, size(), |_, _, _| panic!("both reads are on their way"));
        assert!(f.has(3) && !f.has(4));
        assert_eq!(f.waiting(4), Some(600));
        p.now = 600;
        f.fetch(p, 8, 64, size(), |_, _, _| panic!("nothing announced is left to read"));
        assert!(f.has(7) && !f.has(8) && f.waiting(8).is_none());
    }
}
