//! The event queue: a binary heap ordered by (time, sequence number), so events at the same virtual
//! time run in the order they were scheduled and every run with the same inputs is identical.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens at an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The NIC's receive DMA for the pending packet lands.
    NicRx,
    /// The NIC's transmit engine runs.
    NicTx,
    /// A core polls: receive burst and app.
    Core(u16),
    /// A core runs its transmit burst for what the app produced in its last poll.
    CoreTx(u16),
    /// The measurement window opens (end of warm-up).
    WindowStart,
    /// The measurement window closes (end of the offered traffic).
    WindowEnd,
    /// The design's controller gets its periodic sample.
    Sample,
}

/// A min-queue of events.
#[derive(Debug, Default)]
pub struct Queue {
    heap: BinaryHeap<Reverse<(u64, u64, Slot)>>,
    seq: u64,
    /// Events popped so far.
    pub processed: u64,
}

/// An event packed for the heap: the ordering looks only at time and sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Slot(u32);

impl Slot {
    fn pack(e: Event) -> Slot {
        Slot(match e {
            Event::NicRx => 0,
            Event::NicTx => 1,
            Event::WindowStart => 2,
            Event::WindowEnd => 3,
            Event::Sample => 4,
            Event::Core(c) => 6 + 2 * u32::from(c),
            Event::CoreTx(c) => 7 + 2 * u32::from(c),
        })
    }

    fn unpack(self) -> Event {
        match self.0 {
            0 => Event::NicRx,
            1 => Event::NicTx,
            2 => Event::WindowStart,
            3 => Event::WindowEnd,
            4 => Event::Sample,
            c if c % 2 == 0 => Event::Core(((c - 6) / 2) as u16),
            c => Event::CoreTx(((c - 7) / 2) as u16),
        }
    }
}

impl Queue {
    /// An empty queue.
    pub fn new() -> Queue {
        Queue::default()
    }

    /// Schedule `e` at `time` ps.
    #[inline]
    pub fn push(&mut self, time: u64, e: Event) {
        self.heap.push(Reverse((time, self.seq, Slot::pack(e))));
        self.seq += 1;
    }

    /// The earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        let Reverse((t, _, s)) = self.heap.pop()?;
        self.processed += 1;
        Some((t, s.unpack()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_schedule_order() {
        let mut q = Queue::new();
        q.push(5, Event::Core(3));
        q.push(1, Event::NicTx);
        q.push(5, Event::NicRx);
        q.push(5, Event::Core(0));
        q.push(5, Event::CoreTx(7));
        q.push(6, Event::Sample);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (1, Event::NicTx),
                (5, Event::Core(3)),
                (5, Event::NicRx),
                (5, Event::Core(0)),
                (5, Event::CoreTx(7)),
                (6, Event::Sample)
            ]
        );
        assert_eq!(q.processed, 6);
    }
}
