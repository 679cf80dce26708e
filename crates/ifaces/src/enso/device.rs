//! Ensō's NIC side (Ensō §5.2): the RX pipe managers (write, advance Tail_NIC, decide whether to notify),
//! the notification buffer manager, and the TX datapath (fetch TX notifications, send their chunks,
//! overwrite them with completions).

use super::notif::{RxNotifNic, TxChunk, TxNotifNic};
use super::pipe::{Framing, PipeNic, PipeShared};
use super::{EnsoConfig, NotifyMode};
use crate::design::{DeviceSide, DropReason, Metrics, Occupancy};
use crate::probe::Probe;
use crate::sync::{Arc, AtomicU64, Ordering};
use crate::txfetch::{in_turn, send_or_wait};
use wire::QueueId;

/// One thread's pipes and notification buffers, as the NIC sees them.
#[derive(Debug)]
pub(super) struct NicThread {
    /// RX (unified RX/TX) pipes, local ids `0..pipes_per_core`.
    pub rx: Vec<PipeNic>,
    /// Every pipe by local id: the RX pipes, then the TX-only pipe.
    pub all: Vec<Arc<PipeShared>>,
    pub notif: RxNotifNic,
    pub tx: TxNotifNic,
    /// The oldest pending TX notification once fetched (the NIC reads it once) and the position
    /// reached inside it.
    pub tx_cur: Option<(TxChunk, u64)>,
    /// Messages written to this thread's pipes.
    pub written: u64,
    /// Messages software has taken, published by the driver once per burst.
    pub taken: Arc<AtomicU64>,
}

/// Ensō's NIC side.
#[derive(Debug)]
pub struct EnsoDevice {
    pub(super) threads: Vec<NicThread>,
    pub(super) opts: EnsoConfig,
    pub(super) framing: Framing,
    next_tx: usize,
    notifications: u64,
    suppressed: u64,
    tx_notifications: u64,
}

impl EnsoDevice {
    pub(super) fn new(threads: Vec<NicThread>, opts: EnsoConfig, framing: Framing) -> EnsoDevice {
        EnsoDevice { threads, opts, framing, next_tx: 0, notifications: 0, suppressed: 0, tx_notifications: 0 }
    }

    /// Bytes the NIC has written into RX pipes (sum of Tail_NIC) and bytes software has freed (sum of
    /// Head_SW): byte conservation says the difference is what is still in the pipes.
    pub fn pipe_bytes(&self) -> (u64, u64) {
        self.threads.iter().flat_map(|t| &t.rx).fold((0, 0), |(w, f), r| (w + r.tail(), f + r.shared().head()))
    }

    /// Fetch what doorbells announced, then send up to `budget` packets of fetched chunks, the threads in
    /// turn.
    fn transmit_fetched<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        for th in &mut self.threads {
            th.tx.fetch(p);
        }
        in_turn(self.threads.len(), self.next_tx, budget, |t, left| self.transmit_thread(p, t, wire, left))
    }

    /// Send the chunks of thread `t`'s fetched TX notifications, up to `budget` messages.
    fn transmit_thread<P: Probe, W: FnMut(&[u8])>(
        &mut self,
        p: &mut P,
        t: usize,
        wire: &mut W,
        budget: usize,
    ) -> usize {
        let th = &mut self.threads[t];
        let mut sent = 0;
        while sent < budget {
            let (c, from) = match th.tx_cur {
                Some(cur) => cur,
                None => {
                    let Some(c) = th.tx.peek() else { break };
                    (c, c.start)
                }
            };
            let (to, n) = th.all[c.pipe as usize].transmit(p, from, c.end, budget - sent, wire);
            sent += n;
            if to >= c.end {
                th.tx.complete(p);
                th.tx_cur = None;
                self.tx_notifications += 1;
            } else {
                th.tx_cur = Some((c, to));
            }
        }
        sent
    }
}

impl DeviceSide for EnsoDevice {
    #[inline]
    fn data_regions(&self) -> Vec<std::ops::Range<usize>> {
        self.threads.iter().flat_map(|t| t.all.iter().map(|p| p.range())).collect()
    }

    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let th = &mut self.threads[usize::from(queue)];
        // The NIC's flow table steers a flow to one pipe of the thread; rxlab uses the RSS hash's high bits.
        let pipe = (hash >> 16) as usize % th.rx.len();
        let per_packet = self.opts.notify == NotifyMode::PerPacket;
        if per_packet && th.notif.is_full() {
            // The notification buffer is this design's completion ring.
            return Err(DropReason::CompletionRingFull);
        }
        let a = th.rx[pipe].arrive(p, frame, self.framing)?;
        th.written += 1;
        if per_packet || a.was_idle {
            let pushed = th.notif.push(p, (pipe as u32, a.tail));
            // Reactive: a pipe has at most one notification in the ring (status 0 -> 1 pushes; only an
            // update that found Head_SW = Tail_NIC, after software consumed it, resets the status), and
            // the buffer has at least one entry per pipe (checked at build).
            assert!(pushed, "Ensō notification buffer overflowed");
            self.notifications += 1;
        } else {
            self.suppressed += 1;
        }
        Ok(())
    }

    /// The threads' TX notifications are read as doorbells bring them, while the NIC sends chunks whose
    /// notifications it has; with none on the NIC, it waits for the first read to arrive.
    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        let sent = send_or_wait(
            self,
            p,
            |d, p| d.transmit_fetched(p, wire, budget),
            |d| d.threads.iter().filter_map(|t| t.tx.waiting()).min(),
        );
        self.next_tx = (self.next_tx + 1) % self.threads.len();
        sent
    }

    fn occupancy(&self) -> Occupancy {
        self.threads.iter().fold(Occupancy::default(), |o, t| Occupancy {
            // Acquire: pairs with the driver's Release, so the count is never ahead of the packets.
            used: o.used + (t.written - t.taken.load(Ordering::Acquire)),
            capacity: o.capacity + t.rx.iter().map(|r| r.shared().size() / super::pipe::QUANTUM as u64).sum::<u64>(),
        })
    }

    fn tx_pending(&self) -> u64 {
        self.threads.iter().map(|t| t.tx.pending_packets()).sum()
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("notifications".into(), self.notifications as f64),
            ("notifications_suppressed".into(), self.suppressed as f64),
            ("tx_notifications".into(), self.tx_notifications as f64),
        ])
    }
}
