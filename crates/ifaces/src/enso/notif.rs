//! Notification buffers (Ensō §4.1, Figure 4): 64-byte entries carrying a pipe id, a new tail and a flag.
//!
//! RX: the NIC writes notifications for all the pipes of one thread into that thread's buffer; software
//! polls this one buffer for all its pipes and advances NotificationHead_SW with an MMIO write. That is a
//! completion ring exactly ([`crate::cqring`]: the sense-reverse done bit is the flag), so it is one.
//! Notifications the NIC sends in answer to a Head_SW update or a prefetch request (§4.2) are decided where
//! the MMIO write happens (see `pipe.rs`) and queued on software's side of the buffer until the answer
//! can have arrived ([`crate::probe::Probe::answer_ns`]): the write's trip to the NIC and the
//! notification's DMA back. The tail they carry is Tail_NIC as the decision read it: the NIC writes the
//! answer a posted write before software can take it, so bytes landing meanwhile wait for the next one.
//!
//! Software reads notifications a batch at a time, as Ensō's library does (`__get_new_tails`,
//! software/src/pcie.cpp): up to [`BATCH`] at once, each setting its pipe's pending tail, then hands the
//! batch's pipe ids out one by one, each with its pipe's newest tail; so several notifications for one
//! pipe in a batch bring news once.
//!
//! TX (§4.1.1): software enqueues a notification per chunk to send and advances NotificationTail_SW; the NIC
//! overwrites each notification with a completion once it sent the chunk, flipping its flag.

use crate::cqring::{CqConsumer, CqFormat, CqProducer, completion_ring};
use crate::doorbell::Doorbell;
use crate::probe::{Access, Probe};
use crate::ringsize::RingSize;
use crate::sync::{Arc, AtomicU32, AtomicU64, Ordering};
use crate::txfetch::TxFetch;
use std::collections::VecDeque;

/// One RX notification: pipe id (local to its buffer) and the new Tail_NIC.
pub type Notification = (u32, u64);

/// Notifications software reads at once: Ensō's `kBatchSize` (software/include/enso/consts.h), which its
/// comment in `__get_next_enso_pipe_id` says "performs **significantly** better compared to always
/// fetching the latest notification".
pub const BATCH: usize = 64;

/// A thread's RX notification buffer for `pipes` pipes: the NIC's half and software's half.
pub fn rx_notification_buffer(size: RingSize, pipes: usize) -> (RxNotifNic, RxNotifSw) {
    let (prod, cons) = completion_ring(size, CqFormat::Cqe64 { compress: false });
    let sw = RxNotifSw {
        ring: cons,
        answered: VecDeque::new(),
        ids: VecDeque::with_capacity(BATCH),
        tails: vec![0; pipes],
        consumed: 0,
    };
    (RxNotifNic(prod), sw)
}

/// The NIC's half of an RX notification buffer.
#[derive(Debug)]
pub struct RxNotifNic(CqProducer);

impl RxNotifNic {
    /// True if the buffer has no free entry.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.0.is_full()
    }

    /// Write a notification (a 64-byte DMA write; the flag's Release publishes it). False if full.
    #[inline]
    pub fn push<P: Probe>(&mut self, p: &mut P, (pipe, tail): Notification) -> bool {
        self.0.push(p, [u64::from(pipe), tail, 0], None)
    }

    /// Notifications written so far.
    pub fn written(&self) -> u32 {
        self.0.produced()
    }
}

/// Software's half of an RX notification buffer.
#[derive(Debug)]
pub struct RxNotifSw {
    ring: CqConsumer,
    /// Answers on their way: the notification, and when it is in host memory (ns).
    answered: VecDeque<(Notification, u64)>,
    /// The pipe ids of the batch read last, in order, not yet handed out (`next_rx_pipe_ids`).
    ids: VecDeque<u32>,
    /// Per pipe, the newest tail a notification brought (`pending_rx_pipe_tails`).
    tails: Vec<u64>,
    consumed: u64,
}

impl RxNotifSw {
    /// The NIC will answer an MMIO write of this thread (an update or a prefetch) with notification
    /// `n`, in host memory at `at_ns`.
    #[inline]
    pub fn answer(&mut self, n: Notification, at_ns: u64) {
        self.answered.push_back((n, at_ns));
    }

    /// The next pipe id of the batch, with its pipe's newest tail; when the batch is used up, read the
    /// next one first (`__get_next_enso_pipe_id`).
    #[inline]
    pub fn next<P: Probe>(&mut self, p: &mut P) -> Option<Notification> {
        if self.ids.is_empty() {
            self.read_batch(p);
        }
        let pipe = self.ids.pop_front()?;
        Some((pipe, self.tails[pipe as usize]))
    }

    /// Read up to [`BATCH`] notifications for the pipes' pending tails only (`get_new_tails`, which
    /// `RxPipe::Peek` runs on every visit of an app that visits its pipes in turn); returns how many.
    #[inline]
    pub fn get_new_tails<P: Probe>(&mut self, p: &mut P) -> usize {
        self.read(p, false)
    }

    /// The newest tail a notification brought for `pipe` (`pending_rx_pipe_tails`).
    #[inline]
    pub fn pending_tail(&self, pipe: usize) -> u64 {
        self.tails[pipe]
    }

    fn read_batch<P: Probe>(&mut self, p: &mut P) {
        self.read(p, true);
    }

    /// Read up to [`BATCH`] notifications (`__get_new_tails`), queueing their pipe ids to hand out if
    /// `hand_out`: answers that have arrived first (they are the most recent news), then the ring's. The
    /// library keeps the tail of the later entry; the NIC writes a pipe's tails in increasing order, and
    /// answers here are queued apart from the ring, so the newest is the largest.
    fn read<P: Probe>(&mut self, p: &mut P, hand_out: bool) -> usize {
        let room = if hand_out { BATCH - self.ids.len() } else { BATCH };
        let mut read = 0;
        while read < room {
            let (pipe, tail) = match self.answered.front() {
                Some(&(n, at)) if at <= p.now_ns() => {
                    self.answered.pop_front();
                    n
                }
                _ => match self.ring.poll_full(p) {
                    Some([pipe, tail, _]) => (pipe as u32, tail),
                    None => break,
                },
            };
            let pending = &mut self.tails[pipe as usize];
            *pending = (*pending).max(tail);
            if hand_out {
                self.ids.push_back(pipe);
            }
            read += 1;
        }
        self.consumed += read as u64;
        read
    }

    /// Advance NotificationHead_SW (an MMIO write), if notifications were consumed from the ring.
    #[inline]
    pub fn ring_doorbell<P: Probe>(&mut self, p: &mut P) {
        self.ring.ring_doorbell(p)
    }

    /// Notifications consumed so far (ring and answers).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }
}

/// A TX notification is pending until the NIC overwrites it with a completion.
const PENDING: u64 = 1;
/// The completion's flag value.
const DONE: u64 = 2;

/// One TX notification: a chunk `[start, end)` of one pipe holding `packets` messages.
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct TxEntry {
    pipe: AtomicU32,
    packets: AtomicU32,
    start: AtomicU64,
    end: AtomicU64,
    flag: AtomicU64,
    /// When the completion lands in host memory, ns ([`Probe::write_lands_ns`]).
    lands: AtomicU64,
}

/// What a TX notification asks the NIC to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxChunk {
    /// Pipe id, local to the thread.
    pub pipe: u32,
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Messages in the chunk.
    pub packets: u32,
}

#[derive(Debug)]
struct TxShared {
    size: RingSize,
    entries: Box<[TxEntry]>,
    /// NotificationTail_SW.
    doorbell: Doorbell,
}

/// A thread's TX notification buffer: software's half and the NIC's half.
pub fn tx_notification_buffer(size: RingSize) -> (TxNotifSw, TxNotifNic) {
    let shared = Arc::new(TxShared {
        size,
        entries: (0..size.len()).map(|_| TxEntry::default()).collect(),
        doorbell: Doorbell::new(0),
    });
    (
        TxNotifSw { shared: shared.clone(), tail: 0, done: 0, rung: 0 },
        TxNotifNic { shared, head: 0, fetch: TxFetch::default() },
    )
}

/// Software's half of a TX notification buffer.
#[derive(Debug)]
pub struct TxNotifSw {
    shared: Arc<TxShared>,
    tail: u32,
    done: u32,
    rung: u32,
}

impl TxNotifSw {
    /// Enqueue a notification for `chunk`; false if every entry is pending.
    #[inline]
    pub fn post<P: Probe>(&mut self, p: &mut P, c: TxChunk) -> bool {
        if self.tail.wrapping_sub(self.done) >= self.shared.size.get() {
            return false;
        }
        let e = &self.shared.entries[self.shared.size.slot(self.tail)];
        p.touch(e as *const TxEntry as usize, 64, Access::Write);
        // Relaxed: the doorbell's Release store publishes the entry to the NIC.
        e.pipe.store(c.pipe, Ordering::Relaxed);
        e.packets.store(c.packets, Ordering::Relaxed);
        e.start.store(c.start, Ordering::Relaxed);
        e.end.store(c.end, Ordering::Relaxed);
        e.flag.store(PENDING, Ordering::Relaxed);
        self.tail = self.tail.wrapping_add(1);
        true
    }

    /// Advance NotificationTail_SW (an MMIO write) if notifications were posted since the last call.
    #[inline]
    pub fn ring_doorbell<P: Probe>(&mut self, p: &mut P) {
        if self.rung != self.tail {
            self.shared.doorbell.ring(p, self.tail);
            self.rung = self.tail;
        }
    }

    /// Take the oldest completion, if the NIC has overwritten that notification.
    #[inline]
    pub fn completion<P: Probe>(&mut self, p: &mut P) -> Option<TxChunk> {
        if self.done == self.tail {
            return None;
        }
        let e = &self.shared.entries[self.shared.size.slot(self.done)];
        p.touch(e as *const TxEntry as usize, 64, Access::Read);
        // Acquire: pairs with the NIC's Release of the completion flag: it finished reading the chunk.
        if e.flag.load(Ordering::Acquire) != DONE || e.lands.load(Ordering::Relaxed) > p.now_ns() {
            return None;
        }
        self.done = self.done.wrapping_add(1);
        Some(chunk(e))
    }

    /// Notifications posted and not completed.
    pub fn in_flight(&self) -> u32 {
        self.tail.wrapping_sub(self.done)
    }
}

/// Read an entry's chunk (Relaxed: the caller acquired the doorbell or the flag that published it).
fn chunk(e: &TxEntry) -> TxChunk {
    TxChunk {
        pipe: e.pipe.load(Ordering::Relaxed),
        start: e.start.load(Ordering::Relaxed),
        end: e.end.load(Ordering::Relaxed),
        packets: e.packets.load(Ordering::Relaxed),
    }
}

/// TX notifications the NIC reads in one request: `MAX_TX_DSC_BATCH` of the hardware's `cpu_to_fpga.sv`
/// (a quarter of its 1,024-entry read queue).
pub const TX_FETCH_BATCH: u32 = 256;

/// The NIC's half of a TX notification buffer.
#[derive(Debug)]
pub struct TxNotifNic {
    shared: Arc<TxShared>,
    head: u32,
    /// Its reads of the notifications software posted ([`crate::txfetch`]).
    fetch: TxFetch,
}

impl TxNotifNic {
    /// Once software rang the doorbell (Acquire), read the notifications posted since the last read, up to
    /// [`TX_FETCH_BATCH`], in one DMA read, beside the reads already on their way ([`TxFetch::fetch`]). A
    /// chunk's data can be read only once its notification is on the NIC: its address is in it.
    #[inline]
    pub fn fetch<P: Probe>(&mut self, p: &mut P) {
        let shared = &self.shared;
        self.fetch.fetch(p, shared.doorbell.read(), TX_FETCH_BATCH, shared.size, |p, slot, k| {
            p.touch(&shared.entries[slot] as *const TxEntry as usize, 64 * k, Access::Read);
        });
    }

    /// When the notifications on their way arrive, ns, if the NIC has none to send meanwhile.
    #[inline]
    pub fn waiting(&self) -> Option<u64> {
        self.fetch.waiting(self.head)
    }

    /// The oldest pending notification, if it is on the NIC.
    #[inline]
    pub fn peek(&self) -> Option<TxChunk> {
        self.fetch.has(self.head).then(|| chunk(&self.shared.entries[self.shared.size.slot(self.head)]))
    }

    /// Overwrite the oldest pending notification with its completion (a 64-byte DMA write).
    #[inline]
    pub fn complete<P: Probe>(&mut self, p: &mut P) {
        let e = &self.shared.entries[self.shared.size.slot(self.head)];
        p.touch(e as *const TxEntry as usize, 64, Access::Write);
        e.lands.store(p.write_lands_ns(), Ordering::Relaxed);
        // Release: the NIC's reads of the chunk happen before software, acquiring the flag, reuses it.
        e.flag.store(DONE, Ordering::Release);
        self.head = self.head.wrapping_add(1);
    }

    /// Messages in pending notifications (the first one counted whole).
    pub fn pending_packets(&self) -> u64 {
        let tail = self.shared.doorbell.read();
        let mut n = 0;
        let mut i = self.head;
        while i != tail {
            n += u64::from(self.shared.entries[self.shared.size.slot(i)].packets.load(Ordering::Relaxed));
            i = i.wrapping_add(1);
        }
        n
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::CountingProbe;

    #[test]
    fn a_batch_hands_out_each_pipes_newest_tail() {
        let (mut nic, mut sw) = rx_notification_buffer(RingSize::new(8).unwrap(), 2);
        let p = &mut CountingProbe::default();
        for n in [(0, 10), (1, 5), (0, 20)] {
            assert!(nic.push(p, n));
        }
        // An answer that has arrived joins the batch; one still on its way waits for the next.
        sw.answer((1, 7), 0);
        sw.answer((0, 30), 100);
        let batch: Vec<_> = std::iter::from_fn(|| sw.next(p)).collect();
        assert_eq!(batch, [(1, 7), (0, 20), (1, 7), (0, 20)], "every id of the batch carries its pipe's newest tail");
        assert_eq!(sw.consumed(), 4);
        p.now = 100;
        assert_eq!(sw.next(p), Some((0, 30)));
        assert_eq!(sw.next(p), None);
    }

    /// A completion is written once the NIC has read the chunk it reports, and software sees it only when
    /// that write lands: the NIC's data read and a posted write after it.
    #[test]
    fn a_completion_is_seen_once_it_lands() {
        let (mut sw, mut nic) = tx_notification_buffer(RingSize::new(8).unwrap());
        let p = &mut CountingProbe { read_ns: 500, write_ns: 200, ..CountingProbe::default() };
        assert!(sw.post(p, TxChunk { pipe: 0, start: 0, end: 64, packets: 1 }));
        sw.ring_doorbell(p);
        nic.fetch(p);
        p.now = 500;
        nic.fetch(p);
        assert!(nic.peek().is_some(), "the notification is on the NIC");
        nic.complete(p);
        p.now = 1_199;
        assert_eq!(sw.completion(p), None, "the completion is still on its way");
        p.now = 1_200;
        assert_eq!(sw.completion(p).map(|c| c.end), Some(64));
    }

    #[test]
    fn a_batch_reads_at_most_batch_notifications() {
        let (mut nic, mut sw) = rx_notification_buffer(RingSize::new(128).unwrap(), 1);
        let p = &mut CountingProbe::default();
        for tail in 1..=100 {
            assert!(nic.push(p, (0, tail)));
        }
        assert_eq!(sw.next(p), Some((0, BATCH as u64)), "the first batch ends at entry {BATCH}");
        for _ in 1..BATCH {
            assert_eq!(sw.next(p), Some((0, BATCH as u64)));
        }
        assert_eq!(sw.next(p), Some((0, 100)), "the next batch reads the rest");
    }
}
