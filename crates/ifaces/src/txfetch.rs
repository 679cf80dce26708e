//! A device's reads of the transmit descriptors a doorbell announced (Ensō's TX notifications, mlx5's send
//! WQEs as nicmem's designs post them). A descriptor holds the address of the data it sends, so the device
//! reads it before the data. The device reads what a doorbell announced in one request when it reaches it
//! (Ensō's `cpu_to_fpga.sv` queues a read of `head..tail` per doorbell, up to `MAX_TX_DSC_BATCH`), sends
//! what it has already read while that request is on its way, and waits for it only with nothing else to
//! send: at low load a packet's transmit stage holds both reads, under load the descriptor reads overlap
//! the data's.

use crate::probe::Probe;
use crate::ringsize::RingSize;

/// The read state of one ring of descriptors, by free-running index.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxFetch {
    /// Descriptors before this index are on the device.
    fetched: u32,
    /// A read on its way: up to which index, and when its data arrives (ns).
    fetching: Option<(u32, u64)>,
}

impl TxFetch {
    /// Note a read that has arrived by now; then, if none is on its way and software announced
    /// descriptors up to `announced`, read up to `batch` of those not read: `read(p, first, n)` reports
    /// the read of descriptors `first..first + n` ([`ring_runs`] splits them where the ring wraps).
    #[inline]
    pub fn fetch<P: Probe>(&mut self, p: &mut P, announced: u32, batch: u32, read: impl FnOnce(&mut P, u32, u32)) {
        if let Some((to, at)) = self.fetching
            && at <= p.now_ns()
        {
            self.fetched = to;
            self.fetching = None;
        }
        if self.fetching.is_some() || self.fetched == announced {
            return;
        }
        let n = announced.wrapping_sub(self.fetched).min(batch);
        read(p, self.fetched, n);
        self.fetching = Some((self.fetched.wrapping_add(n), p.read_done_ns()));
    }

    /// Whether descriptor `next`, the next the device sends, is on the device.
    #[inline]
    pub fn has(&self, next: u32) -> bool {
        next != self.fetched
    }

    /// When the read on its way arrives, if the device has sent every descriptor it read (`next` is the
    /// next it sends).
    #[inline]
    pub fn waiting(&self, next: u32) -> Option<u64> {
        self.fetching.filter(|_| next == self.fetched).map(|(_, at)| at)
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

/// Descriptors `first..first + n` of a ring of `size` slots as runs of contiguous slots `(slot, count)`:
/// one, or two where the ring wraps.
#[inline]
pub fn ring_runs(size: RingSize, first: u32, n: u32) -> impl Iterator<Item = (usize, usize)> {
    let slot = size.slot(first);
    let n = n as usize;
    let head = n.min(size.len() - slot);
    [(slot, head), (0, n - head)].into_iter().filter(|&(_, k)| k > 0)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::NoProbe;

    #[test]
    fn runs_split_where_the_ring_wraps() {
        let size = RingSize::new(8).unwrap();
        assert_eq!(ring_runs(size, 2, 4).collect::<Vec<_>>(), [(2, 4)]);
        assert_eq!(ring_runs(size, 14, 5).collect::<Vec<_>>(), [(6, 2), (0, 3)]);
        assert_eq!(ring_runs(size, 0, 0).count(), 0);
    }

    /// Where reads take no time (the live engine), a read is on the device at the next call; one read at
    /// a time, up to the batch.
    #[test]
    fn reads_up_to_the_batch_one_at_a_time() {
        let p = &mut NoProbe::default();
        let mut f = TxFetch::default();
        let mut reads = vec![];
        f.fetch(p, 10, 4, |_, first, n| reads.push((first, n)));
        assert!(!f.has(0) && f.waiting(0).is_some(), "on its way");
        f.fetch(p, 10, 4, |_, first, n| reads.push((first, n)));
        f.fetch(p, 10, 4, |_, first, n| reads.push((first, n)));
        assert_eq!(reads, [(0, 4), (4, 4), (8, 2)]);
        f.fetch(p, 10, 4, |_, _, _| panic!("nothing announced is left to read"));
        assert!(f.has(9) && !f.has(10) && f.waiting(10).is_none());
    }
}
