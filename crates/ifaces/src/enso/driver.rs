//! The burst adapter (the seam's `DriverSide`): apps written for packets run unchanged on Ensō. Each
//! received message becomes a [`Packet`] lent over the pipe's bytes; transmitting it posts the bytes in
//! place (unified RX/TX pipes, Ensō §5.1), one TX notification per run of consecutive messages. Pool
//! packets an app built itself (a response) are copied into the thread's TX pipe.
//!
//! Head_SW can only pass a contiguous prefix of messages that are done: dropped by the app, or sent and
//! completed. A per-pipe ledger keeps the state of every lent message, in pipe order.

use super::Visit;
use super::api::Device;
use crate::core::CoreCtx;
use crate::design::{DriverSide, Metrics};
use crate::packet::{Backing, Packet};
use crate::probe::{Phase, Probe, in_phase};
use crate::sync::{Arc, AtomicU64, Ordering};
use std::collections::VecDeque;

use super::notif::TxChunk;

/// Where a lent message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// In a packet the app holds.
    Lent,
    /// Posted for transmission, not completed.
    Tx,
    /// Free to pass.
    Done,
}

/// One lent message.
#[derive(Debug, Clone, Copy)]
struct Msg {
    start: u64,
    end: u64,
    len: u32,
    held: Held,
}

/// A pipe's lent messages, oldest first; `first` is the sequence number of the front.
#[derive(Debug, Default)]
struct Ledger {
    first: u64,
    msgs: VecDeque<Msg>,
}

impl Ledger {
    fn get(&mut self, seq: u64) -> &mut Msg {
        let i = seq.checked_sub(self.first).expect("message already passed by Head_SW") as usize;
        &mut self.msgs[i]
    }

    /// Pop the done prefix; returns the new head position if it moved.
    fn pass_done(&mut self) -> Option<u64> {
        let mut head = None;
        while self.msgs.front().is_some_and(|m| m.held == Held::Done) {
            head = self.msgs.pop_front().map(|m| m.end);
            self.first += 1;
        }
        head
    }
}

const SEQ_BITS: u32 = 48;

/// A lent packet's token: pipe and message sequence number.
fn token(pipe: usize, seq: u64) -> u64 {
    (pipe as u64) << SEQ_BITS | (seq & ((1 << SEQ_BITS) - 1))
}

/// A run of consecutive messages of one pipe, to post as one TX notification.
#[derive(Debug, Clone, Copy)]
struct Run {
    chunk: TxChunk,
    first_seq: u64,
}

/// Ensō's driver side for one thread.
#[derive(Debug)]
pub struct EnsoDriver {
    dev: Device,
    ledgers: Vec<Ledger>,
    /// Per posted TX notification, in order: the run it carries.
    posted: VecDeque<Run>,
    returned: Vec<u64>,
    current: Option<usize>,
    /// The pipe the next visit reads, with [`Visit::RoundRobin`].
    next_visit: usize,
    taken: Arc<AtomicU64>,
    taken_n: u64,
    tx_full_drops: u64,
}

impl EnsoDriver {
    pub(super) fn new(dev: Device, taken: Arc<AtomicU64>) -> EnsoDriver {
        let ledgers = (0..dev.pipes()).map(|_| Ledger::default()).collect();
        EnsoDriver {
            dev,
            ledgers,
            posted: VecDeque::new(),
            returned: Vec::new(),
            current: None,
            next_visit: 0,
            taken,
            taken_n: 0,
            tx_full_drops: 0,
        }
    }

    /// The thread's Ensō device, for streaming apps that consume chunks (`Recv`, `Free`) instead of
    /// packets. Do not mix the two on one pipe while packets are lent.
    pub fn device(&mut self) -> &mut Device {
        &mut self.dev
    }

    /// Collect returned packets and TX completions, and pass Head_SW over what is done.
    fn reclaim<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        core.take_returned(&mut self.returned);
        for t in self.returned.drain(..) {
            let m = self.ledgers[(t >> SEQ_BITS) as usize].get(t & ((1 << SEQ_BITS) - 1));
            assert_eq!(m.held, Held::Lent, "Ensō: a packet returned twice");
            m.held = Held::Done;
        }
        let tx_pipe = self.dev.pipes();
        while let Some(c) = self.dev.tx.completion(p) {
            let run = self.posted.pop_front().expect("a completion for a posted notification");
            debug_assert_eq!(run.chunk, c);
            if c.pipe as usize == tx_pipe {
                self.dev.tx_pipe.completed(c.end);
                continue;
            }
            let l = &mut self.ledgers[c.pipe as usize];
            for s in run.first_seq..run.first_seq + u64::from(c.packets) {
                l.get(s).held = Held::Done;
            }
        }
        for pipe in 0..self.ledgers.len() {
            if let Some(head) = self.ledgers[pipe].pass_done() {
                self.dev.free_to(p, pipe, head);
            }
        }
    }

    /// Post `run` as a TX notification; if the buffer is full, give its messages up. Returns the
    /// messages posted.
    fn post<P: Probe>(&mut self, p: &mut P, run: Run) -> usize {
        let n = run.chunk.packets as usize;
        if self.dev.tx.post(p, run.chunk) {
            self.posted.push_back(run);
            return n;
        }
        self.tx_full_drops += n as u64;
        if run.chunk.pipe as usize == self.dev.pipes() {
            self.dev.tx_pipe.rewind(run.chunk.start);
        } else {
            let l = &mut self.ledgers[run.chunk.pipe as usize];
            for s in run.first_seq..run.first_seq + n as u64 {
                l.get(s).held = Held::Done;
            }
        }
        0
    }

    /// Add a message to the current run, or post that run and start a new one.
    fn extend<P: Probe>(
        &mut self,
        p: &mut P,
        run: &mut Option<Run>,
        pipe: usize,
        seq: u64,
        start: u64,
        end: u64,
    ) -> usize {
        if let Some(r) = run
            && r.chunk.pipe as usize == pipe
            && r.chunk.end == start
        {
            r.chunk.end = end;
            r.chunk.packets += 1;
            return 0;
        }
        let chunk = TxChunk { pipe: pipe as u32, start, end, packets: 1 };
        run.replace(Run { chunk, first_seq: seq }).map_or(0, |r| self.post(p, r))
    }

    /// `Device::ProcessCompletions`, which both of the library's loops run before reading: a read of every
    /// pipe's state, then the returned packets and TX completions passed back to the NIC.
    fn process_completions<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        self.dev.scan_pipes(p);
        self.reclaim(p, core);
    }

    /// `NextRxTxPipeToRecv` and `PeekPkts` until `max` messages: the pipes notifications name, in turn.
    fn recv_notified<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        out: &mut Vec<Packet<'c>>,
        max: usize,
    ) -> usize {
        self.process_completions(p, core);
        let mut n = 0;
        while n < max {
            match self.current.filter(|&c| self.dev.pipes[c].unread() > 0) {
                Some(pipe) => n += self.take(p, core, pipe, out, max - n),
                None => match self.dev.next_rx_pipe_to_recv(p) {
                    Some(pipe) => self.current = Some(pipe),
                    None => break,
                },
            }
        }
        self.dev.ring_notification_doorbell(p);
        n
    }

    /// `PeekPkts` on each pipe in turn (`echo.cpp`'s loop) until one has messages, at most once round:
    /// each visit processes completions, reads the notifications that arrived and takes what its pipe's
    /// pending tail announces.
    fn recv_in_turn<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        out: &mut Vec<Packet<'c>>,
        max: usize,
    ) -> usize {
        for _ in 0..self.dev.pipes() {
            let pipe = self.next_visit;
            self.next_visit = (pipe + 1) % self.dev.pipes();
            self.process_completions(p, core);
            if self.dev.peek_pipe(p, pipe) {
                return self.take(p, core, pipe, out, max);
            }
        }
        0
    }

    /// Lend up to `max` of `pipe`'s notified messages as packets.
    fn take<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        pipe: usize,
        out: &mut Vec<Packet<'c>>,
        max: usize,
    ) -> usize {
        let sw = &mut self.dev.pipes[pipe];
        let l = &mut self.ledgers[pipe];
        let mut n = 0;
        while n < max {
            let Some((pos, len, extent)) = sw.next_message(p) else { break };
            let seq = l.first + l.msgs.len() as u64;
            l.msgs.push_back(Msg { start: pos, end: pos + extent, len: len as u32, held: Held::Lent });
            out.push(sw.lend(core, pos, len, token(pipe, seq)));
            n += 1;
        }
        n
    }
}

impl DriverSide for EnsoDriver {
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            let n = match self.dev.opts.visit {
                Visit::Notified => self.recv_notified(p, core, out, max),
                Visit::RoundRobin => self.recv_in_turn(p, core, out, max),
            };
            if n > 0 {
                self.taken_n += n as u64;
                // Release: pairs with the device's Acquire in `occupancy`.
                self.taken.store(self.taken_n, Ordering::Release);
            }
            n
        })
    }

    fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
        in_phase(p, Phase::Tx, |p| {
            self.reclaim(p, core);
            let tx_pipe = self.dev.pipes();
            let mut run = None;
            let mut sent = 0;
            for pkt in pkts.drain(..) {
                match pkt.backing() {
                    Backing::Lent(_) if self.dev.opts.tx_copy => {
                        // Ensō §7.2.2's forwarder: the message is read from its RX pipe and copied into
                        // the TX pipe; dropping it returns its RX message. The copy loop's loads do not
                        // depend on each other, so an out-of-order core overlaps them.
                        p.load_overlapped(pkt.addr(), pkt.len());
                        match self.dev.tx_pipe.append(p, &pkt) {
                            Some((start, end)) => sent += self.extend(p, &mut run, tx_pipe, 0, start, end),
                            None => self.tx_full_drops += 1,
                        }
                    }
                    Backing::Lent(t) => {
                        let parts = pkt.into_parts();
                        assert!(parts.tail.is_none(), "Ensō packets have one segment");
                        let (pipe, seq) = ((t >> SEQ_BITS) as usize, t & ((1 << SEQ_BITS) - 1));
                        let m = self.ledgers[pipe].get(seq);
                        assert_eq!(m.held, Held::Lent, "Ensō: a packet sent twice");
                        m.held = Held::Tx;
                        let m = *m;
                        if m.len != parts.len {
                            self.dev.pipes[pipe].set_frame_len(m.start, parts.len as usize);
                        }
                        sent += self.extend(p, &mut run, pipe, seq, m.start, m.end);
                    }
                    Backing::Buf(_) => match self.dev.tx_pipe.append(p, &pkt) {
                        Some((start, end)) => sent += self.extend(p, &mut run, tx_pipe, 0, start, end),
                        None => self.tx_full_drops += 1,
                    },
                }
            }
            if let Some(r) = run {
                sent += self.post(p, r);
            }
            self.dev.tx.ring_doorbell(p);
            sent
        })
    }

    fn teardown(&mut self, core: &CoreCtx) {
        self.reclaim(&mut crate::probe::NoProbe::default(), core);
        let held: usize = self.ledgers.iter().map(|l| l.msgs.len()).sum();
        assert!(
            held == 0 && self.posted.is_empty(),
            "Ensō teardown: {held} messages still lent or in flight, {} TX notifications pending; the run did not drain",
            self.posted.len()
        );
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("notifications_consumed".into(), self.dev.notifications_consumed() as f64),
            ("tx_full_drops".into(), self.tx_full_drops as f64),
        ])
    }
}
