//! Ensō Pipes (Ensō §3, Figure 3): data ring buffers the NIC writes messages into back to back, with
//! Head_SW (bytes software has freed, an MMIO register) and Tail_NIC (bytes the NIC has written).
//!
//! Layout: messages start on a 64-byte quantum. rxlab's NIC frames each message with a 4-byte word (frame
//! length, and the message's extent in quanta), as a NIC that delivers messages would (Ensō §6): rxlab's
//! frames need not be IPv4 (test frames, other link types), so software cannot take the length from the
//! IP header as Ensō's library does. A 60-byte frame still fills exactly one quantum. Chaotic Ensō
//! (§7.2.3) adds a gap after each message, computed from the message's position only.
//!
//! Positions are free-running byte counts (`u64`); the byte at position `x` is `x mod size` of the pipe.
//! Who may touch which bytes: the NIC writes only `[Tail_NIC, Head_SW + size)`; software reads only
//! `[Head_SW, Tail_NIC)` as far as notifications told it. The hand-offs are the Release/Acquire pairs on
//! the state word (Tail_NIC) and the Head_SW register, written down at each atomic below.

#![allow(unsafe_code)]

use super::mirror::Mirror;
use crate::core::CoreCtx;
use crate::design::DropReason;
use crate::packet::Packet;
use crate::probe::{Access, Probe};
use crate::sync::{Arc, AtomicU64, Ordering};

/// Ensō's allocation unit in a pipe and the size of a notification (§4.1): one cache line.
pub const QUANTUM: usize = 64;
/// Bytes of rxlab's message header.
pub const MSG_HDR: usize = 4;
/// Largest frame a message can carry (the header's 16-bit length).
pub const MAX_FRAME: usize = u16::MAX as usize;

/// How the NIC lays out messages in a pipe: back to back (Ensō), or with gaps (Chaotic Ensō, §7.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Framing {
    /// Largest gap after a message, in quanta (0: none).
    pub gap_max: u32,
}

impl Framing {
    /// Gap after the message at `pos`, in quanta: a hash of the position, so software that walks the
    /// pipe pays nothing to find the next message (§7.2.3, "computed deterministically").
    #[inline]
    fn gap(&self, pos: u64) -> u64 {
        if self.gap_max == 0 {
            return 0;
        }
        ((pos / QUANTUM as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % (u64::from(self.gap_max) + 1)
    }

    /// Bytes a message of a `len`-byte frame occupies at `pos`, header, padding and gap included.
    #[inline]
    pub fn extent(&self, pos: u64, len: usize) -> u64 {
        ((MSG_HDR + len).div_ceil(QUANTUM) as u64 + self.gap(pos)) * QUANTUM as u64
    }
}

/// A message header: the frame length and the extent in quanta.
#[inline]
fn header(len: usize, extent: u64) -> [u8; MSG_HDR] {
    let quanta = (extent / QUANTUM as u64) as u32;
    (len as u32 | quanta << 16).to_le_bytes()
}

/// Parse a message header: `(frame length, extent in bytes)`.
#[inline]
pub(super) fn parse_header(h: [u8; MSG_HDR]) -> (usize, u64) {
    let w = u32::from_le_bytes(h);
    ((w & 0xffff) as usize, u64::from(w >> 16) * QUANTUM as u64)
}

/// One cache line, so the NIC's and software's words do not share one.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Line(AtomicU64);

/// A pipe's memory and its two coordination words, shared by the NIC and the core.
#[derive(Debug)]
pub struct PipeShared {
    mem: Mirror,
    /// Head_SW: the MMIO register software writes when it frees bytes.
    head: Line,
    /// Tail_NIC << 1 | status bit (Figure 5): one word, so the NIC's arrival handler and the update
    /// handler serialise on it as they do inside the NIC's pipe manager.
    state: Line,
}

impl PipeShared {
    /// The pipe's memory, both mappings (packet data: what the NIC's DMA moves here is goodput).
    pub fn range(&self) -> std::ops::Range<usize> {
        self.mem.range()
    }

    /// A pipe over fresh mirrored memory.
    pub fn new(mem: Mirror) -> Arc<PipeShared> {
        Arc::new(PipeShared { mem, head: Line::default(), state: Line::default() })
    }

    /// Pipe size in bytes.
    pub fn size(&self) -> u64 {
        self.mem.size() as u64
    }

    /// Head_SW as the NIC reads it.
    pub fn head(&self) -> u64 {
        // Acquire: as the NIC's read in `arrive`.
        self.head.0.load(Ordering::Acquire)
    }

    /// Address of position `pos` (for probe reports).
    pub fn addr(&self, pos: u64) -> usize {
        self.mem.addr(pos)
    }

    /// The message at `pos`: `(frame length, extent)`.
    ///
    /// # Safety
    /// The caller holds `pos`'s header: no agent writes it now, and it was handed over by a
    /// release/acquire after its last write.
    #[inline]
    unsafe fn message(&self, pos: u64) -> (usize, u64) {
        // SAFETY: forwarded from the caller.
        parse_header(unsafe { self.mem.read(pos, MSG_HDR, |b| b.try_into().expect("4 bytes")) })
    }

    /// The NIC transmits the messages in `[pos, end)` that fit in `budget`: each frame goes to `wire`.
    /// Returns the position reached and the number of frames sent. The caller (the NIC) must hold the
    /// range: software posted it in a TX notification (whose doorbell the NIC acquired) and does not touch
    /// it until the completion. The NIC reads the messages it sends as one contiguous DMA read (§4.1.1:
    /// the notification gives a chunk's address and size), which PCIe splits into read requests.
    pub fn transmit<P: Probe, W: FnMut(&[u8])>(
        &self,
        p: &mut P,
        pos: u64,
        end: u64,
        budget: usize,
        wire: &mut W,
    ) -> (u64, usize) {
        let (mut to, mut sent) = (pos, 0);
        while to < end && sent < budget {
            // SAFETY: the range was handed to the NIC by the TX notification (see above).
            to += unsafe { self.message(to) }.1;
            sent += 1;
        }
        if sent > 0 {
            p.touch(self.addr(pos), (to - pos) as usize, Access::Read);
        }
        let mut at = pos;
        while at < to {
            // SAFETY: as above.
            let (len, extent) = unsafe { self.message(at) };
            // SAFETY: as above.
            unsafe { self.mem.read(at + MSG_HDR as u64, len, &mut *wire) };
            at += extent;
        }
        (to, sent)
    }
}

/// The NIC's side of an RX pipe.
#[derive(Debug)]
pub struct PipeNic {
    shared: Arc<PipeShared>,
    tail: u64,
}

/// What the NIC did with an arriving message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Tail_NIC after the message.
    pub tail: u64,
    /// The status bit was 0 (software knew of no pending data): a reactive NIC notifies now.
    pub was_idle: bool,
}

impl PipeNic {
    /// The NIC side of `shared`.
    pub fn new(shared: Arc<PipeShared>) -> PipeNic {
        PipeNic { shared, tail: 0 }
    }

    /// The shared pipe.
    pub fn shared(&self) -> &Arc<PipeShared> {
        &self.shared
    }

    /// Tail_NIC.
    pub fn tail(&self) -> u64 {
        self.tail
    }

    /// `onPktArrival` (Figure 5): DMA-write `frame` at Tail_NIC, advance it and set the status bit.
    #[inline]
    pub fn arrive<P: Probe>(&mut self, p: &mut P, frame: &[u8], framing: Framing) -> Result<Arrival, DropReason> {
        let size = self.shared.size();
        let extent = framing.extent(self.tail, frame.len());
        if frame.len() > MAX_FRAME || extent > size || extent / QUANTUM as u64 > u64::from(u16::MAX) {
            return Err(DropReason::TooLong);
        }
        // Acquire: pairs with software's Release store of Head_SW, so software's last reads of the bytes
        // it freed happen before the NIC overwrites them.
        let head = self.shared.head.0.load(Ordering::Acquire);
        if self.tail + extent - head > size {
            return Err(DropReason::PipeFull);
        }
        p.touch(self.shared.addr(self.tail), MSG_HDR + frame.len(), Access::Write);
        // SAFETY: `[tail, tail + extent)` lies in `[Tail_NIC, Head_SW + size)`, which software never holds
        // (it reads only below Tail_NIC, published below), and the NIC is this pipe's only writer.
        unsafe {
            self.shared.mem.write(self.tail, &header(frame.len(), extent));
            self.shared.mem.write(self.tail + MSG_HDR as u64, frame);
        }
        self.tail += extent;
        // AcqRel: Release publishes the bytes with the new Tail_NIC; Acquire orders after a status reset
        // by the update handler, whose outcome (status 0) this swap reads.
        let old = self.shared.state.0.swap(self.tail << 1 | 1, Ordering::AcqRel);
        Ok(Arrival { tail: self.tail, was_idle: old & 1 == 0 })
    }
}

/// Software's side of an RX pipe: Head_SW, what notifications said (known Tail_NIC) and how far it has
/// read.
#[derive(Debug)]
pub struct PipeSw {
    shared: Arc<PipeShared>,
    head: u64,
    known: u64,
    read: u64,
}

impl PipeSw {
    /// Software's side of `shared`.
    pub fn new(shared: Arc<PipeShared>) -> PipeSw {
        PipeSw { shared, head: 0, known: 0, read: 0 }
    }

    /// The shared pipe.
    pub fn shared(&self) -> &Arc<PipeShared> {
        &self.shared
    }

    /// A notification said Tail_NIC reached `tail`; whether that is news (the known tail moved).
    #[inline]
    pub fn notified(&mut self, tail: u64) -> bool {
        let news = tail > self.known;
        self.known = self.known.max(tail);
        news
    }

    /// Head_SW, the read position and the known tail.
    pub fn positions(&self) -> (u64, u64, u64) {
        (self.head, self.read, self.known)
    }

    /// Bytes notified and not yet read.
    #[inline]
    pub fn unread(&self) -> u64 {
        self.known - self.read
    }

    /// Read the next notified message: `(position, frame length, extent)`, advancing the read position.
    /// Its header is read as the app's loop reaches the message ([`Probe::read_on_use`]): Ensō's apps walk
    /// a batch in place once, the iterator reading each length as it goes (`software/examples/echo.cpp`).
    #[inline]
    pub fn next_message<P: Probe>(&mut self, p: &mut P) -> Option<(u64, usize, u64)> {
        if self.read == self.known {
            return None;
        }
        let pos = self.read;
        p.read_on_use(self.shared.addr(pos), MSG_HDR);
        // SAFETY: `pos < known <= Tail_NIC`: the NIC wrote the header before the Release that published
        // the tail a notification carried (acquired by the notification buffer or by `update`), and it
        // does not write below Tail_NIC until Head_SW passes it.
        let (len, extent) = unsafe { self.shared.message(pos) };
        self.read += extent;
        debug_assert!(self.read <= self.known, "message runs past the notified tail");
        Some((pos, len, extent))
    }

    /// The unread notified bytes `[read, known)` as one contiguous slice, for `f` (the chunk API).
    pub fn peek<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        // SAFETY: as in `next_message`, for the whole range; `&self` keeps the read position (and so
        // `lend`, which needs `&mut self`) from moving into it while `f` runs.
        unsafe { self.shared.mem.read(self.read, (self.known - self.read) as usize, f) }
    }

    /// Mark `n` more bytes as read (`ConfirmBytes`). Panics past the known tail.
    pub fn confirm(&mut self, n: u64) {
        assert!(self.read + n <= self.known, "confirm past the notified tail");
        self.read += n;
    }

    /// A packet over the message at `pos` (its frame of `len` bytes, room up to the end of its last
    /// quantum), returned as `token` when dropped.
    #[inline]
    pub fn lend<'c>(&self, core: &'c CoreCtx, pos: u64, len: usize, token: u64) -> Packet<'c> {
        assert!(pos >= self.head && pos + (MSG_HDR + len) as u64 <= self.read, "lending bytes not read");
        let room = (MSG_HDR + len).div_ceil(QUANTUM) * QUANTUM - MSG_HDR;
        let ptr = self.shared.mem.window(pos + MSG_HDR as u64, room);
        // SAFETY: the bytes were read (published to software, see `next_message`); the NIC does not write
        // them until Head_SW passes `pos`, which the driver does only after `token` comes back or the
        // transmit completion for them arrives; `read` passed them, so they are lent once.
        unsafe { Packet::lent(core, ptr, len as u32, room as u32, token) }
    }

    /// Rewrite the frame length of the message at `pos` (an app trimmed or grew the packet in place).
    pub fn set_frame_len(&self, pos: u64, len: usize) {
        // SAFETY: the driver calls this on a message it holds (taken back from the packet, not yet
        // posted for transmission), so no one else touches the header.
        let (_, extent) = unsafe { self.shared.message(pos) };
        // SAFETY: as above.
        unsafe { self.shared.mem.write(pos, &header(len, extent)) }
    }

    /// Free bytes up to `head` (`Free`, an MMIO write of Head_SW) and run the NIC's `onRxUpdate`
    /// (Figure 5) when `reactive`: the tail of the notification it sends, if it sends one (which
    /// software learns of when it arrives, [`super::notif::RxNotifSw::answer`]).
    #[inline]
    pub fn free_to<P: Probe>(&mut self, p: &mut P, head: u64, reactive: bool) -> Option<u64> {
        assert!(self.head <= head && head <= self.read, "freeing bytes not read");
        self.head = head;
        p.mmio_write(&self.shared.head as *const Line as usize, 8);
        // Release: software's reads of the freed bytes happen before the NIC, acquiring Head_SW, reuses them.
        self.shared.head.0.store(head, Ordering::Release);
        if !reactive {
            return None;
        }
        let state = &self.shared.state.0;
        // Acquire: a Tail_NIC read here comes with the bytes the NIC wrote before publishing it.
        let mut s = state.load(Ordering::Acquire);
        loop {
            let tail = s >> 1;
            if tail != head {
                // Head_SW != Tail_NIC: software is unaware of some data; notify it (status stays 1).
                return Some(tail);
            }
            // Empty: reset the status bit, unless the NIC advanced the tail meanwhile (then retry and
            // notify); the arrival that follows a successful reset sees status 0 and notifies itself.
            match state.compare_exchange_weak(s, tail << 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return None,
                Err(now) => s = now,
            }
        }
    }

    /// Notification prefetching (§4.2): write Head_SW again, unchanged (the library's `prefetch_pipe`,
    /// software/src/pcie.cpp), so the NIC runs `onRxUpdate` as for a free: it answers with Tail_NIC
    /// whenever that differs from Head_SW (`pkt_queue_manager.sv`, a descriptor-only update), news or not.
    #[inline]
    pub fn prefetch<P: Probe>(&mut self, p: &mut P) -> Option<u64> {
        self.free_to(p, self.head, true)
    }
}

/// Software's side of a TX-only pipe (§3, "Sending messages is symmetric"): software appends messages at
/// Tail_SW; bytes come back when the NIC's completion says it sent them (Head_NIC).
#[derive(Debug)]
pub struct TxPipeSw {
    shared: Arc<PipeShared>,
    tail: u64,
    head: u64,
}

impl TxPipeSw {
    /// Software's side of a TX pipe over `shared`.
    pub fn new(shared: Arc<PipeShared>) -> TxPipeSw {
        TxPipeSw { shared, tail: 0, head: 0 }
    }

    /// The shared pipe.
    pub fn shared(&self) -> &Arc<PipeShared> {
        &self.shared
    }

    /// Tail_SW.
    pub fn tail(&self) -> u64 {
        self.tail
    }

    /// Copy `frame` in as the next message; returns its `[start, end)`, or `None` if the pipe is full.
    pub fn append<P: Probe>(&mut self, p: &mut P, frame: &[u8]) -> Option<(u64, u64)> {
        let extent = Framing::default().extent(self.tail, frame.len());
        if frame.len() > MAX_FRAME || self.tail + extent - self.head > self.shared.size() {
            return None;
        }
        p.touch(self.shared.addr(self.tail), MSG_HDR + frame.len(), Access::Write);
        // SAFETY: `[tail, tail + extent)` is past every range posted to the NIC and not yet completed
        // (those lie in `[head, tail)`), so software is its only user until it posts it.
        unsafe {
            self.shared.mem.write(self.tail, &header(frame.len(), extent));
            self.shared.mem.write(self.tail + MSG_HDR as u64, frame);
        }
        let start = self.tail;
        self.tail += extent;
        Some((start, self.tail))
    }

    /// Give back messages never posted: Tail_SW returns to `to`.
    pub fn rewind(&mut self, to: u64) {
        assert!(self.head <= to && to <= self.tail);
        self.tail = to;
    }

    /// The NIC completed everything before `end`.
    pub fn completed(&mut self, end: u64) {
        self.head = self.head.max(end);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::NoProbe;

    fn pipe(pages: usize) -> (PipeNic, PipeSw) {
        let s = PipeShared::new(Mirror::new(pages * super::super::mirror::page_size()).unwrap());
        (PipeNic::new(s.clone()), PipeSw::new(s))
    }

    #[test]
    fn messages_wrap_contiguously_and_reactive_notifications_follow_figure_5() {
        let (mut nic, mut sw) = pipe(1);
        let p = &mut NoProbe::default();
        let f = Framing::default();
        let size = nic.shared().size();
        let frame = [7u8; 100];
        // First arrival notifies (status 0 -> 1); the second is suppressed.
        assert!(nic.arrive(p, &frame, f).unwrap().was_idle);
        assert!(!nic.arrive(p, &frame, f).unwrap().was_idle);
        sw.notified(128);
        let (pos, len, extent) = sw.next_message(p).unwrap();
        assert_eq!((pos, len, extent), (0, 100, 128));
        assert!(sw.next_message(p).is_none(), "only the first message was notified");
        // Freeing the first message: Head_SW != Tail_NIC, so the update handler notifies, with the tail
        // it read; a message landing before the answer is taken waits for the next notification.
        let answer = sw.free_to(p, 128, true);
        assert_eq!(answer, Some(256));
        assert!(sw.next_message(p).is_none(), "the answer has not been taken yet");
        nic.arrive(p, &frame, f).unwrap();
        sw.notified(answer.unwrap());
        while sw.next_message(p).is_some() {}
        assert_eq!(sw.free_to(p, 256, true), Some(384), "the third message makes the update notify");
        sw.notified(384);
        while sw.next_message(p).is_some() {}
        assert_eq!(sw.free_to(p, 384, true), None, "empty: status reset, no notification");
        // Fill until full, then drain.
        let mut last = nic.tail();
        let full = loop {
            match nic.arrive(p, &frame, f) {
                Ok(a) => last = a.tail,
                Err(e) => break e,
            }
        };
        assert_eq!((full, last - 384), (DropReason::PipeFull, size));
        sw.notified(last);
        while sw.next_message(p).is_some() {}
        assert_eq!(sw.free_to(p, last, true), None);
        // Step one quantum at a time to 64 B before the end; then a 200-byte frame crosses the wrap-around.
        while nic.tail() % size != size - 64 {
            let t = nic.arrive(p, &[1u8; 60], f).unwrap().tail;
            sw.notified(t);
            sw.next_message(p).unwrap();
            sw.free_to(p, t, true);
        }
        let wrap = nic.tail();
        let big: Vec<u8> = (0..200u8).collect();
        assert!(nic.arrive(p, &big, f).unwrap().was_idle);
        sw.notified(nic.tail());
        sw.peek(|b| assert_eq!(&b[MSG_HDR..MSG_HDR + 200], &big[..]));
        let (pos, len, _) = sw.next_message(p).unwrap();
        assert_eq!((pos, len), (wrap, 200));
    }

    #[test]
    fn a_prefetch_is_answered_while_bytes_are_not_freed_news_or_not() {
        let (mut nic, mut sw) = pipe(1);
        let p = &mut NoProbe::default();
        let frame = [7u8; 100];
        assert_eq!(sw.prefetch(p), None, "an empty pipe has nothing to tell");
        nic.arrive(p, &frame, Framing::default()).unwrap();
        assert_eq!(sw.prefetch(p), Some(128), "a new message");
        sw.notified(128);
        sw.next_message(p).unwrap();
        assert_eq!(sw.prefetch(p), Some(128), "read but not freed: the NIC answers with the tail software knows");
        sw.free_to(p, 128, true);
        assert_eq!(sw.prefetch(p), None, "all freed");
        assert!(nic.arrive(p, &frame, Framing::default()).unwrap().was_idle, "the status was reset");
    }

    #[test]
    fn chaotic_gaps_are_deterministic_and_bounded() {
        let f = Framing { gap_max: 3 };
        let gaps: Vec<u64> = (0..64).map(|q| f.extent(q * 64, 60) / 64 - 1).collect();
        assert!(gaps.iter().all(|&g| g <= 3));
        assert!(gaps.iter().any(|&g| g > 0) && gaps.contains(&0));
        assert_eq!(gaps, (0..64).map(|q| f.extent(q * 64, 60) / 64 - 1).collect::<Vec<_>>());
    }
}
