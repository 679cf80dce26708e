//! The event queue: at most one pending event per agent, ordered by (time, sequence number), so events
//! at the same virtual time run in the order they were scheduled and every run with the same inputs is
//! identical.
//!
//! Every agent (the arrivals, the NIC's receive pipeline and transmit engine, each core, the window and
//! the sampler) waits for one thing at a time, so scheduling an agent again replaces its pending event:
//! a core woken early leaves no later poll behind as a stale event. The queue is a tournament tree over
//! the agents: scheduling replays one leaf-to-root path (five comparisons for the 23 agents of a
//! 16-core run), and so does popping, deferred to the next use of the queue so that the usual pop of an
//! agent followed by scheduling it again replays once. It never allocates after it is made.

/// What happens at an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The next generated packet reaches the NIC.
    Arrival,
    /// The NIC's receive DMA of a held packet lands.
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
    /// A run that decides its own warm-up is observed ([`crate::settle`]).
    Observe,
    /// A co-located program on core `c` (numbered after the workers) runs a step ([`crate::antagonist`]).
    Antagonist(u16),
}

impl Event {
    /// The agent that waits for this event: a core's poll and its transmit burst are one agent.
    fn agent(self) -> usize {
        match self {
            Event::NicRx => 0,
            Event::NicTx => 1,
            Event::WindowStart => 2,
            Event::WindowEnd => 3,
            Event::Sample => 4,
            Event::Arrival => 5,
            Event::Observe => 6,
            Event::Core(c) | Event::CoreTx(c) | Event::Antagonist(c) => FIXED + usize::from(c),
        }
    }
}

/// Agents other than the cores.
const FIXED: usize = 7;
/// The key of an agent with nothing pending: after every real event.
const NONE: u128 = u128::MAX;
/// Bits of a key that name the agent.
const AGENT_BITS: u32 = 8;

/// Most agents a queue serves (a run of up to 249 cores).
const MAX_AGENTS: usize = 256;

/// A min-queue of events, one per agent.
#[derive(Debug)]
pub struct Queue {
    /// Tournament tree of keys: node `i` (from 1) holds the least key below it, node `MAX_AGENTS + a`
    /// agent `a`'s own. A key is the event's time, then its sequence number, then its agent, so one
    /// integer compare orders events; an agent with nothing pending has the key [`NONE`].
    tree: Box<[u128; 2 * MAX_AGENTS]>,
    /// Per agent: its pending event.
    events: Box<[Event; MAX_AGENTS]>,
    /// Tree levels above the leaves that hold a pending event (the rest stay [`NONE`]).
    levels: u32,
    /// The agent last popped, whose path is replayed only when the queue is next used (usually by
    /// scheduling that same agent again, which replays the path anyway), or `usize::MAX`.
    popped: usize,
    seq: u64,
    /// Events popped so far.
    pub processed: u64,
}

impl Queue {
    /// An empty queue for a run with `cores` cores (workers and co-located programs).
    pub fn new(cores: usize) -> Queue {
        let agents = FIXED + cores;
        assert!(agents <= MAX_AGENTS, "{cores} cores");
        Queue {
            tree: Box::new([NONE; 2 * MAX_AGENTS]),
            events: Box::new([Event::NicRx; MAX_AGENTS]),
            levels: agents.next_power_of_two().trailing_zeros(),
            popped: usize::MAX,
            seq: 0,
            processed: 0,
        }
    }

    /// Replay agent `a`'s matches from its leaf up to the root of the agents' subtree, then copy the
    /// winner up to the root of the whole tree (the other subtrees hold no agents).
    #[inline]
    fn replay(&mut self, a: usize) {
        let mut node = (MAX_AGENTS + a) & (2 * MAX_AGENTS - 1);
        let mut win = self.tree[node];
        for _ in 0..self.levels {
            win = win.min(self.tree[node ^ 1]);
            node /= 2;
            self.tree[node] = win;
        }
        self.tree[1] = win;
    }

    /// Replay the path of the agent last popped, unless it is `next`, which is about to be replayed.
    #[inline]
    fn settle(&mut self, next: usize) {
        let a = std::mem::replace(&mut self.popped, usize::MAX);
        if a != usize::MAX && a != next {
            self.replay(a);
        }
    }

    /// Schedule `e` at `time` ps, replacing what its agent had pending.
    #[inline]
    pub fn push(&mut self, time: u64, e: Event) {
        let a = e.agent() & (MAX_AGENTS - 1);
        self.settle(a);
        self.tree[MAX_AGENTS + a] = (u128::from(time) << 64) | u128::from(self.seq) << AGENT_BITS | a as u128;
        self.events[a] = e;
        self.seq += 1;
        self.replay(a);
    }

    /// The earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.settle(usize::MAX);
        let key = self.tree[1];
        if key == NONE {
            return None;
        }
        let a = (key as usize) & (MAX_AGENTS - 1);
        self.tree[MAX_AGENTS + a] = NONE;
        self.popped = a;
        self.processed += 1;
        Some(((key >> 64) as u64, self.events[a]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_schedule_order() {
        let mut q = Queue::new(8);
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

    #[test]
    fn scheduling_an_agent_again_replaces_its_event() {
        let mut q = Queue::new(2);
        q.push(9, Event::Core(1));
        q.push(4, Event::Core(0));
        q.push(3, Event::Core(1));
        q.push(7, Event::CoreTx(0));
        assert_eq!(q.pop(), Some((3, Event::Core(1))));
        assert_eq!(q.pop(), Some((7, Event::CoreTx(0))));
        assert_eq!(q.pop(), None);
    }
}
