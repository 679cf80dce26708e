//! Ensō's software API (Ensō §5.1 and the library's names, STYLE.md): a [`Device`] per thread with one
//! notification buffer for all its pipes, [`Device::next_rx_pipe_to_recv`], and per pipe `Peek`,
//! `ConfirmBytes`, `Recv` (= peek + confirm) and `Free(bytes)`. Chunks are contiguous thanks to the
//! mirror; [`Chunk::packets`] walks the messages in place. This is what a streaming app (a log monitor)
//! uses directly; the burst adapter (`driver.rs`) builds packets on the same calls.

use super::notif::{RxNotifSw, TxNotifSw};
use super::pipe::{MSG_HDR, PipeSw, TxPipeSw, parse_header};
use super::{EnsoConfig, NotifyMode};
use crate::probe::{Access, Probe};

/// One thread's view of its pipes: `RxTxPipe`s (ids `0..n`), a TX pipe, and the notification buffers.
#[derive(Debug)]
pub struct Device {
    pub(super) pipes: Vec<PipeSw>,
    pub(super) notif: RxNotifSw,
    pub(super) tx: TxNotifSw,
    pub(super) tx_pipe: TxPipeSw,
    pub(super) opts: EnsoConfig,
}

impl Device {
    pub(super) fn new(
        pipes: Vec<PipeSw>,
        notif: RxNotifSw,
        tx: TxNotifSw,
        tx_pipe: TxPipeSw,
        opts: EnsoConfig,
    ) -> Device {
        Device { pipes, notif, tx, tx_pipe, opts }
    }

    /// Number of RX/TX pipes.
    pub fn pipes(&self) -> usize {
        self.pipes.len()
    }

    /// Poll this thread's notification buffer once (§4.1.2): the pipe a notification names, with its
    /// known tail updated. With prefetching on (§4.2, low-latency mode), a notification that brings news
    /// first asks the NIC for a fresh notification for the pipe it names, the next pipe software will
    /// read, so that one is on its way while software consumes what this one announced: Ensō's library
    /// (`Device::NextRxPipeToRecv` and `NextRxTxPipeToRecv` with `LATENCY_OPT`, software/src/enso/pipe.cpp)
    /// prefetches the pipe it is about to return, and only one whose notified tail moved. One that
    /// repeats a tail software knows asks for nothing: else every answer, itself a notification, would
    /// ask again. Notifications come a batch at a time (`notif.rs`), so several for one pipe in a batch
    /// are one piece of news and ask once.
    #[inline]
    pub fn next_rx_pipe_to_recv<P: Probe>(&mut self, p: &mut P) -> Option<usize> {
        let (pipe, tail) = self.notif.next(p)?;
        let pipe = pipe as usize;
        let news = self.pipes[pipe].notified(tail);
        if self.opts.prefetch
            && news
            && let Some(tail) = self.pipes[pipe].prefetch(p)
        {
            self.notif.answer((pipe as u32, tail), p.answer_ns());
        }
        Some(pipe)
    }

    /// `PeekPkts` on `pipe` by an app that visits its pipes in turn ([`super::Visit::RoundRobin`]): read
    /// the notifications that arrived (`get_new_tails`, advancing NotificationHead_SW if it took any) and
    /// learn the pipe's pending tail. With prefetching on, a visit that finds data asks the NIC for a fresh
    /// notification for the next pipe in turn (`echo_prefetch.cpp`: `pipes[(i + 1) & queue_mask]->
    /// Prefetch()`). Returns whether the pipe has unread bytes.
    #[inline]
    pub fn peek_pipe<P: Probe>(&mut self, p: &mut P, pipe: usize) -> bool {
        self.notif.get_new_tails(p);
        self.notif.ring_doorbell(p);
        self.pipes[pipe].notified(self.notif.pending_tail(pipe));
        let found = self.pipes[pipe].unread() > 0;
        if found && self.opts.prefetch {
            let next = (pipe + 1) % self.pipes.len();
            if let Some(tail) = self.pipes[next].prefetch(p) {
                self.notif.answer((next as u32, tail), p.answer_ns());
            }
        }
        found
    }

    /// `Device::ProcessCompletions`' loop over the thread's RX/TX pipes, which both loops run before
    /// reading: each pipe's TX capacity is read to see whether completions freed bytes to give back.
    #[inline]
    pub fn scan_pipes<P: Probe>(&self, p: &mut P) {
        for s in &self.pipes {
            p.touch(s as *const PipeSw as usize, std::mem::size_of::<PipeSw>(), Access::Read);
        }
    }

    /// Advance NotificationHead_SW for the notifications consumed so far (once per batch).
    pub fn ring_notification_doorbell<P: Probe>(&mut self, p: &mut P) {
        self.notif.ring_doorbell(p)
    }

    /// `Peek`: the bytes of `pipe` notified and not yet confirmed, as one contiguous chunk, for `f`.
    pub fn peek<R>(&self, pipe: usize, f: impl FnOnce(Chunk<'_>) -> R) -> R {
        self.pipes[pipe].peek(|b| f(Chunk(b)))
    }

    /// `ConfirmBytes`: mark `n` peeked bytes of `pipe` as received.
    pub fn confirm_bytes(&mut self, pipe: usize, n: u64) {
        self.pipes[pipe].confirm(n)
    }

    /// `Recv`: peek every notified byte of `pipe`, hand them to `f` and confirm them; returns `f`'s result
    /// and the number of bytes.
    pub fn recv<R>(&mut self, pipe: usize, f: impl FnOnce(Chunk<'_>) -> R) -> (R, u64) {
        let n = self.pipes[pipe].unread();
        let r = self.peek(pipe, f);
        self.confirm_bytes(pipe, n);
        (r, n)
    }

    /// `Free`: give the oldest `bytes` received bytes of `pipe` back to the NIC (an MMIO write of
    /// Head_SW). Reactive notifications (§4.2, Figure 5) may answer with a notification.
    #[inline]
    pub fn free<P: Probe>(&mut self, p: &mut P, pipe: usize, bytes: u64) {
        let head = self.pipes[pipe].positions().0 + bytes;
        self.free_to(p, pipe, head);
    }

    /// Free `pipe` up to position `head`.
    #[inline]
    pub(super) fn free_to<P: Probe>(&mut self, p: &mut P, pipe: usize, head: u64) {
        let reactive = self.opts.notify == NotifyMode::Reactive;
        if let Some(tail) = self.pipes[pipe].free_to(p, head, reactive) {
            self.notif.answer((pipe as u32, tail), p.answer_ns());
        }
    }

    /// Notifications consumed so far.
    pub fn notifications_consumed(&self) -> u64 {
        self.notif.consumed()
    }
}

/// A contiguous run of received messages in a pipe.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a>(&'a [u8]);

impl<'a> Chunk<'a> {
    /// The raw bytes (message headers included), e.g. for a streaming parser.
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }

    /// The frames in the chunk, in order, each a slice of the pipe (parsed in place, never copied).
    pub fn packets(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let b = self.0;
        let mut off = 0usize;
        std::iter::from_fn(move || {
            let h = b.get(off..off + MSG_HDR)?;
            let (len, extent) = parse_header(h.try_into().expect("4 bytes"));
            let frame = &b[off + MSG_HDR..off + MSG_HDR + len];
            off += extent as usize;
            Some(frame)
        })
    }
}
