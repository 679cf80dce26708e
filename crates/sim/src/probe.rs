//! `SimProbe`: the simulator's implementation of the probe (DESIGN.md, "The probe"). It turns what
//! interface and app code report into time on the reporting agent's virtual clock.
//!
//! - Core touches go through the cache hierarchy. A load that finds its lines in the L1 costs a cycle
//!   per line: an out-of-order core hides an L1 hit's latency behind independent work (interval
//!   analysis, Eyerman et al., "A mechanistic performance model for superscalar out-of-order
//!   processors", ACM TOCS 27(2), 2009: only misses interrupt the core's steady issue), as this model
//!   already charges stores and prefetches that hit the L1. A load that misses fetches its lines (one
//!   object) in parallel, so it costs its slowest line plus a cycle per further line, and such loads
//!   serialize. A store retires into the store buffer and its fill overlaps what follows: per line, a
//!   cycle if it hit the L1, else the fill latency divided by the core's fill buffers (the rate at
//!   which overlapping fills complete, as for a prefetch). Atomics drain the store buffer: they cost
//!   the full latency plus the locked-instruction cost; a line another core holds modified adds the
//!   transfer.
//! - `lock` makes the core wait until the previous holder's `unlock` in virtual time.
//! - NIC touches are DMA: writes go through DDIO and are serialized on PCIe (the NIC's clock moves to
//!   the end of the write); reads look up the LLC (DRAM on a miss, adding the DRAM latency beyond an
//!   LLC hit, and the profile's extra latency of the host's I/O path to memory), and complete a PCIe
//!   round trip later without stalling the NIC; packet-data reads first wait for one of the NIC's read
//!   slots, which moves the NIC's clock. The links serve transfers by ready time ([`crate::link`]), so a
//!   step whose clock ran ahead does not hold back other agents' earlier traffic.
//! - `depend` (after a descriptor fetch the NIC's prefetcher did not issue ahead of need, which the
//!   design's prefetch cache decides) makes the NIC wait for the fetch's data.
//! - A core's software prefetch fills its lines at once and costs, per line that missed the L1, the fill
//!   latency divided by the core's fill buffers: the rate at which overlapping fills complete (Little's
//!   law). A line already in the L1 costs a cycle. NIC memory is uncached and is not prefetched.
//! - A read reported with `read_on_use` (the header an iterator reads as the app's loop reaches each
//!   message, Ensō §5.1) waits, in report order, until the core first touches (or prefetches) one of
//!   its lines, and is charged then, to the phase that reported it, with every earlier one the loop has
//!   passed; what the step never touches is charged when it ends. So a batch handed over and then
//!   walked is walked once.
//! - MMIO writes (doorbells) cross PCIe towards the device; the core does not wait for them. A device's
//!   answer to one (an Ensō notification) is in host memory a posted-write latency each way later. Where
//!   the design's software maps the registers uncached ([`ifaces::Design::UNCACHED_REGISTERS`]), the
//!   writes leave one at a time through the core's store buffer ([`crate::storebuf`]), holding the
//!   stores behind them: a write, and the answer to it, waits for the ones before it to leave, and the
//!   core waits when its store buffer is full.
//! - NIC memory (nicmem §4.1, [`Machine::nicmem`]): the NIC reads and writes it without crossing PCIe
//!   or touching host caches (no cost beyond its pipeline time); a core's reads of it are uncached, one
//!   PCIe round trip per 64-byte line, serialized as uncached loads are; its writes are write-combined,
//!   posted towards the device a line at a time, a cycle per line for the core while its write-combining
//!   buffers have room, else it waits for one to drain onto the link ([`crate::wc`]; nicmem §2, §6.5).
//!
//! Cycles are charged to the current [`Phase`]. Work reported by the NIC side is not charged (the NIC's
//! pipeline time is a per-packet cost of the NIC model).

use crate::machine::Machine;
use crate::memory::Op;
use crate::prefetcher::LoadSite;
use crate::upi::Way;
use ifaces::{Access, Phase, Probe};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::panic::Location;

/// Who is reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// The NIC (DMA over PCIe).
    Nic,
    /// Worker core `0..`.
    Core(u16),
}

/// The probe handed to one agent for one step (a NIC operation or a core's poll).
#[derive(Debug)]
pub struct SimProbe<'m> {
    m: &'m mut Machine,
    agent: Agent,
    now: u64,
    phase: Phase,
    phase_ps: [u64; Phase::ALL.len()],
    last_read: &'m Cell<u64>,
    /// Completion time of the NIC's latest read in this step.
    last_dma_read: Option<u64>,
    doorbell_at: Option<u64>,
    /// When the step's latest MMIO write left the core, ps: later than it was issued behind uncached
    /// stores still leaving ([`crate::storebuf`]).
    mmio_left: u64,
    dma_wait: u64,
    /// Time spent in `depend`, ps.
    stall: u64,
    /// Reads reported with `read_on_use` and not charged yet, oldest first; the first has number
    /// `pending_first`.
    pending: VecDeque<(usize, usize, Phase, &'static Location<'static>)>,
    pending_first: u64,
    /// The number of the latest pending read of each line.
    pending_lines: HashMap<u64, u64>,
}

/// What a step cost, once the probe is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The agent's clock at the end of the step, ps.
    pub end: u64,
    /// Time charged per phase, ps, indexed like [`Phase::ALL`].
    pub phase_ps: [u64; Phase::ALL.len()],
    /// When the last doorbell written in the step reaches the device, if one was written.
    pub doorbell_at: Option<u64>,
    /// Time the NIC waited for descriptor fetches in the step (`depend`), ps.
    pub stall: u64,
}

impl<'m> SimProbe<'m> {
    /// A probe for `agent` starting at `now`. `last_read` receives the completion time of each DMA
    /// read (the NIC's transmit path reads it when a packet goes to the wire).
    pub fn new(m: &'m mut Machine, agent: Agent, now: u64, last_read: &'m Cell<u64>) -> SimProbe<'m> {
        SimProbe {
            m,
            agent,
            now,
            phase: Phase::Rx,
            phase_ps: [0; Phase::ALL.len()],
            last_read,
            last_dma_read: None,
            doorbell_at: None,
            mmio_left: 0,
            dma_wait: 0,
            stall: 0,
            pending: VecDeque::new(),
            pending_first: 0,
            pending_lines: HashMap::new(),
        }
    }

    /// The NIC's DMA writes wait `ps` for the link (PCIe back pressure, [`crate::nic::Landed::dma_wait`]).
    pub fn with_dma_wait(mut self, ps: u64) -> SimProbe<'m> {
        self.dma_wait = ps;
        self
    }

    /// The agent's current time, ps.
    pub fn now_ps(&self) -> u64 {
        self.now
    }

    /// End the step (charging the `read_on_use` reads nothing touched).
    pub fn finish(mut self) -> Step {
        self.charge_pending(u64::MAX);
        Step { end: self.now, phase_ps: self.phase_ps, doorbell_at: self.doorbell_at, stall: self.stall }
    }

    #[inline(always)]
    fn charge(&mut self, ps: u64) {
        self.now += ps;
        self.phase_ps[self.phase as usize] += ps;
    }

    /// A core's access to NIC memory (see the module documentation).
    #[cold]
    fn core_nicmem(&mut self, core: usize, len: usize, access: Access) {
        let lines = len.max(1).div_ceil(64) as u64;
        if access == Access::Read {
            let mut now = self.now;
            for i in 0..lines {
                now = self.m.pcie.mmio_read(now, 64.min(len as u64 - i * 64));
            }
            self.charge(now - self.now);
        } else {
            // Write-combined ([`crate::wc`]): a cycle a line, and a wait when the buffers are full.
            let issued = self.now + lines * self.m.cycle_ps;
            let resume = self.m.wc_write(core, self.now, len as u64);
            self.charge(issued.max(resume) - self.now);
        }
    }

    /// Charge the pending `read_on_use` reads up to number `last`, in order, each to its own phase.
    fn charge_pending(&mut self, last: u64) {
        let Agent::Core(core) = self.agent else { return };
        while self.pending_first <= last {
            let Some((addr, len, phase, site)) = self.pending.pop_front() else { break };
            let n = self.pending_first;
            self.pending_first += 1;
            self.m.addr.runs(addr, len, |first, lines| {
                for line in first..first + lines {
                    if self.pending_lines.get(&line) == Some(&n) {
                        self.pending_lines.remove(&line);
                    }
                }
            });
            let was = std::mem::replace(&mut self.phase, phase);
            self.core_access(usize::from(core), addr, len, Access::Read, site);
            self.phase = was;
        }
    }

    /// The core's loop reaches these bytes: charge the pending `read_on_use` reads up to the latest one
    /// of their lines.
    #[inline]
    fn reach(&mut self, addr: usize, len: usize) {
        if self.pending.is_empty() {
            return;
        }
        let mut last = None;
        let lines = &self.pending_lines;
        self.m.addr.runs(addr, len, |first, n| {
            for line in first..first + n {
                last = last.max(lines.get(&line).copied());
            }
        });
        if let Some(last) = last {
            self.charge_pending(last);
        }
    }

    /// A core's touch, once its loop has reached the bytes.
    #[inline]
    fn core_touch(&mut self, core: usize, addr: usize, len: usize, access: Access, site: &'static Location) {
        self.reach(addr, len);
        self.core_access(core, addr, len, access, site)
    }

    #[inline]
    fn core_access(&mut self, core: usize, addr: usize, len: usize, access: Access, site: &'static Location) {
        if self.m.nicmem.contains(&addr) {
            return self.core_nicmem(core, len, access);
        }
        if self.m.uc_registers {
            self.behind_uncached(core, len, access);
        }
        if access == Access::Write {
            // A store retires into the store buffer; its fill overlaps what follows.
            let cost = self.overlapped(core, addr, len, Op::Write);
            return self.charge(cost);
        }
        // A load, or an atomic (which writes its line).
        let op = if access == Access::Read { Op::Read } else { Op::Write };
        let (mem, now, cycle) = (&mut self.m.mem, self.now, self.m.cycle_ps);
        let (mut worst, mut start) = (0, None);
        let n = self.m.addr.runs(addr, len, |first, n| {
            start = start.or(Some(first));
            for line in first..first + n {
                worst = worst.max(mem.cpu_access(core, line, op, now));
            }
        });
        if let (Access::Read, Some(line)) = (access, start) {
            mem.ip_load(core, LoadSite::of(site), line, now);
        }
        // An L1 hit's latency is hidden (module documentation); an atomic's never is.
        let mut cost =
            if access == Access::Read && worst <= mem.l1_latency_ps() { n * cycle } else { worst + (n - 1) * cycle };
        if access == Access::Atomic {
            cost += self.m.atomic_ps;
        }
        self.charge(cost);
    }

    /// Where uncached stores may be in the core's store buffer ([`crate::storebuf`]): a store takes an
    /// entry a line, waiting for one if the buffer is full; an atomic waits until the buffer drains.
    #[cold]
    fn behind_uncached(&mut self, core: usize, len: usize, access: Access) {
        let sb = &mut self.m.stores[core];
        let go_on = match access {
            Access::Read => return,
            Access::Write => sb.cached(self.now, len.max(1).div_ceil(64) as u64, self.m.store_buffer),
            Access::Atomic => sb.drained(self.now),
        };
        self.charge(go_on - self.now);
    }

    /// What an access the core does not wait for (a store, a prefetch) costs: a cycle a line that hits
    /// the L1, and a line's latency shared among the fill buffers for one that misses.
    #[inline]
    fn overlapped(&mut self, core: usize, addr: usize, len: usize, op: Op) -> u64 {
        let (mem, now, cycle, fb) = (&mut self.m.mem, self.now, self.m.cycle_ps, self.m.fill_buffers);
        let l1 = mem.l1_latency_ps();
        let mut cost = 0;
        self.m.addr.runs(addr, len, |first, n| {
            for line in first..first + n {
                let lat = mem.cpu_access(core, line, op, now);
                cost += if lat <= l1 { cycle } else { lat / fb };
            }
        });
        cost
    }

    #[inline]
    fn dma(&mut self, addr: usize, len: usize, access: Access) {
        let now = self.now;
        if self.m.nicmem.contains(&addr) {
            // On the NIC: nothing crosses PCIe; a read's data is at hand now.
            if access == Access::Read {
                self.last_dma_read = Some(now);
            }
            return;
        }
        let mem = &mut self.m.mem;
        if access == Access::Read {
            let mut misses = 0;
            self.m.addr.runs(addr, len, |first, n| misses += mem.nic_read(first, n, now));
            let mut extra = if misses > 0 {
                self.m.mem.dram.latency_ps().saturating_sub(self.m.mem.llc_latency_ps()) + self.m.read_miss_ps
            } else {
                0
            };
            if let Some(upi) = &mut self.m.nic_upi {
                extra += upi.queue(Way::Out, now, len as u64);
            }
            let data = self.m.is_data(addr);
            let (issue, done) = self.m.pcie.dma_read(now, len as u64, extra, data);
            if data {
                self.m.pcie.count_data(false, len as u64);
            }
            self.now = self.now.max(issue);
            self.last_read.set(self.last_read.get().max(done));
            self.last_dma_read = Some(done);
        } else {
            self.m.addr.runs(addr, len, |first, n| {
                mem.nic_write(first, n, now);
            });
            let queued = self.m.nic_upi.as_mut().map_or(0, |upi| upi.queue(Way::In, now, len as u64));
            let end = self.m.pcie.dma_write(now, len as u64) + queued;
            if self.m.is_data(addr) {
                self.m.pcie.count_data(true, len as u64);
            }
            self.now = self.now.max(end);
        }
    }
}

impl Probe for SimProbe<'_> {
    #[inline]
    fn touch(&mut self, addr: usize, len: usize, access: Access) {
        match self.agent {
            Agent::Core(c) => self.core_touch(usize::from(c), addr, len, access, Location::caller()),
            Agent::Nic => self.dma(addr, len, access),
        }
    }

    fn read_on_use(&mut self, addr: usize, len: usize) {
        if self.agent == Agent::Nic || self.m.nicmem.contains(&addr) {
            return self.touch(addr, len, Access::Read);
        }
        let n = self.pending_first + self.pending.len() as u64;
        let lines = &mut self.pending_lines;
        self.m.addr.runs(addr, len, |first, k| {
            for line in first..first + k {
                lines.insert(line, n);
            }
        });
        self.pending.push_back((addr, len, self.phase, Location::caller()));
    }

    #[inline]
    fn work(&mut self, cycles: u32) {
        if let Agent::Core(_) = self.agent {
            self.charge((f64::from(cycles) * self.m.cycle_ps_f).round() as u64);
        }
    }

    #[inline]
    fn pmd_packet(&mut self) {
        if let Agent::Core(_) = self.agent {
            self.charge(self.m.pmd_ps);
        }
    }

    #[inline]
    fn prefetch(&mut self, addr: usize, len: usize) {
        let Agent::Core(c) = self.agent else { return };
        if self.m.nicmem.contains(&addr) {
            return;
        }
        self.reach(addr, len);
        let cost = self.overlapped(usize::from(c), addr, len, Op::Read);
        self.charge(cost);
    }

    #[inline]
    fn load_overlapped(&mut self, addr: usize, len: usize) {
        self.prefetch(addr, len);
    }

    #[inline]
    fn mmio_write(&mut self, _addr: usize, len: usize) {
        let mut leaves = self.now;
        if let (true, Agent::Core(c)) = (self.m.uc_registers, self.agent) {
            let (gap, entries) = (self.m.uc_write_ps, self.m.store_buffer);
            let (go_on, left) = self.m.stores[usize::from(c)].uncached(self.now, gap, entries);
            self.charge(go_on - self.now);
            leaves = left;
        }
        self.mmio_left = leaves;
        let at = self.m.pcie.mmio_write(leaves, len as u64);
        self.doorbell_at = Some(self.doorbell_at.map_or(at, |d| d.max(at)));
    }

    fn lock(&mut self, addr: usize) {
        let released = self.m.locks.get(&addr).copied().unwrap_or(0);
        if released > self.now {
            let wait = released - self.now;
            self.m.lock_wait_ps += wait;
            self.charge(wait);
        }
    }

    fn unlock(&mut self, addr: usize) {
        self.m.locks.insert(addr, self.now);
    }

    fn lock_free(&mut self, addr: usize) -> bool {
        self.m.locks.get(&addr).is_none_or(|&released| released <= self.now)
    }

    fn cas_fresh(&mut self, addr: usize, loaded_ns: u64) -> bool {
        let now = self.now_ns();
        let won = self.m.cas_wins.entry(addr).or_default();
        if *won > loaded_ns {
            return false;
        }
        *won = now;
        true
    }

    #[inline]
    fn phase(&mut self, phase: Phase) -> Phase {
        std::mem::replace(&mut self.phase, phase)
    }

    fn now_ns(&self) -> u64 {
        self.now / 1000
    }

    fn dma_wait_ns(&self) -> u64 {
        self.dma_wait / 1000
    }

    fn answer_ns(&self) -> u64 {
        (self.now.max(self.mmio_left) + 2 * self.m.pcie.write_latency_ps()) / 1000
    }

    fn read_done_ns(&self) -> u64 {
        self.last_dma_read.unwrap_or(self.now) / 1000
    }

    fn write_lands_ns(&self) -> u64 {
        (self.last_dma_read.unwrap_or(self.now).max(self.now) + self.m.pcie.write_latency_ps()) / 1000
    }

    fn wait_until_ns(&mut self, ns: u64) {
        let t = ns * 1000;
        self.stall += t.saturating_sub(self.now);
        self.now = self.now.max(t);
    }

    #[inline]
    fn depend(&mut self) {
        if let Some(done) = self.last_dma_read.take() {
            self.stall += done.saturating_sub(self.now);
            self.now = self.now.max(done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    #[test]
    fn locks_wait_for_the_previous_release_and_phases_are_charged() {
        let p = Profile::r640_silver4216();
        let mut m = Machine::new(&p, 2, (0, 0));
        let cell = Cell::new(0);
        let mut a = SimProbe::new(&mut m, Agent::Core(0), 1_000, &cell);
        a.lock(0x40);
        a.work(2100);
        a.unlock(0x40);
        let sa = a.finish();
        assert_eq!(sa.end, 1_000 + 1_000_000);
        let mut b = SimProbe::new(&mut m, Agent::Core(1), 500, &cell);
        b.phase(Phase::Sync);
        b.lock(0x40);
        let sb = b.finish();
        assert_eq!(sb.end, sa.end);
        assert_eq!(sb.phase_ps[Phase::Sync as usize], sa.end - 500);
        assert_eq!(m.lock_wait_ps, sa.end - 500);
    }

    /// Registers mapped uncached (Ensō's): a core's doorbells leave `cpu.uc_write_ns` apart and the
    /// answer to the last waits for it; the core itself goes on until its store buffer is full. Mapped
    /// as DPDK's are, the same writes all leave at once.
    #[test]
    fn uncached_doorbells_leave_one_at_a_time_and_their_answers_wait() {
        let p = Profile::i9_9960x_enso();
        let gap = (p.cpu.uc_write_ns * 1000.0) as u64;
        let cell = Cell::new(0);
        for uc in [false, true] {
            let mut m = Machine::new(&p, 1, (0, 0));
            m.uc_registers = uc;
            let mut a = SimProbe::new(&mut m, Agent::Core(0), 1_000_000, &cell);
            let first = a.answer_ns();
            for _ in 0..4 {
                a.mmio_write(0x40, 4);
            }
            assert_eq!(a.now_ps(), 1_000_000, "four writes fit the store buffer");
            let late = if uc { 3 * gap / 1000 } else { 0 };
            assert_eq!(a.answer_ns(), first + late, "the fourth leaves three gaps after the first");
        }
    }

    /// COREC's tail try-lock (003 §3.4.1): an agent whose time falls inside a section the sim has
    /// already run gives up at once, paying only its atomic; after the release it takes the lock.
    #[test]
    fn try_locks_fail_without_waiting_while_a_section_lasts() {
        let p = Profile::r640_silver4216();
        let mut m = Machine::new(&p, 2, (0, 0));
        let cell = Cell::new(0);
        let lock = ifaces::spinlock::SpinLock::new();
        let mut a = SimProbe::new(&mut m, Agent::Core(0), 1_000, &cell);
        assert_eq!(lock.try_with(&mut a, |a| a.work(2100)), Some(()));
        let sa = a.finish();
        let mut b = SimProbe::new(&mut m, Agent::Core(1), 500, &cell);
        assert_eq!(lock.try_with(&mut b, |_| ()), None);
        let sb = b.finish();
        assert!(sb.end < sa.end, "the failed try-lock waited: {} >= {}", sb.end, sa.end);
        assert_eq!((lock.contended(), m.lock_wait_ps), (1, 0));
        let mut c = SimProbe::new(&mut m, Agent::Core(1), sa.end, &cell);
        assert_eq!(lock.try_with(&mut c, |_| ()), Some(()));
        assert_eq!(lock.contended(), 1);
    }

    /// COREC's claim (003 Listing 2 line 21): a worker that loaded the counter before another's
    /// winning swap, in virtual time, loses its own; one that loaded it after wins.
    #[test]
    fn a_swap_against_a_value_loaded_before_another_agents_win_loses() {
        let p = Profile::r640_silver4216();
        let mut m = Machine::new(&p, 2, (0, 0));
        let cell = Cell::new(0);
        let word = 0x2000;
        let mut a = SimProbe::new(&mut m, Agent::Core(0), 1_000_000, &cell);
        assert!(a.cas_fresh(word, 900));
        a.finish();
        let mut b = SimProbe::new(&mut m, Agent::Core(1), 990_000, &cell);
        assert!(!b.cas_fresh(word, 990), "loaded at 990 ns, before the win at 1000 ns");
        b.work(2100);
        let loaded = b.now_ns();
        assert!(b.cas_fresh(word, loaded));
        b.finish();
        assert_eq!(m.cas_wins[&word], loaded);
    }

    #[test]
    fn atomics_on_a_line_another_core_wrote_pay_the_transfer() {
        let p = Profile::r640_silver4216();
        let mut m = Machine::new(&p, 2, (0, 0));
        let cell = Cell::new(0);
        let word = 0x1000usize;
        let mut a = SimProbe::new(&mut m, Agent::Core(0), 0, &cell);
        a.touch(word, 8, Access::Atomic);
        let t = a.finish().end;
        let mut a = SimProbe::new(&mut m, Agent::Core(0), t, &cell);
        a.touch(word, 8, Access::Atomic);
        let own = a.finish().end - t;
        let mut b = SimProbe::new(&mut m, Agent::Core(1), 0, &cell);
        b.touch(word, 8, Access::Atomic);
        let other = b.finish().end;
        let cyc = |ps: u64| (ps as f64 / m.cycle_ps_f).round() as u64;
        assert_eq!(cyc(own), 4 + 18);
        assert_eq!(cyc(other), 105 + 18);
    }

    /// The papers' R640 with one core and its hardware prefetchers off, so that each touch is the only
    /// fill of its lines.
    fn one_core_without_prefetchers() -> (Profile, Machine) {
        let mut p = Profile::r640_silver4216();
        p.cpu.hw_prefetch = false;
        let m = Machine::new(&p, 1, (0, 0));
        (p, m)
    }

    #[test]
    fn loads_that_hit_the_l1_cost_a_cycle_a_line_and_misses_their_latency() {
        let (p, mut m) = one_core_without_prefetchers();
        let cell = Cell::new(0);
        // Two lines read as one object: first from DRAM, then from the L1.
        let obj = 0x20_0000usize;
        let mut s = SimProbe::new(&mut m, Agent::Core(0), 0, &cell);
        s.touch(obj, 128, Access::Read);
        let cold = s.now_ps();
        s.touch(obj, 128, Access::Read);
        let warm = s.now_ps() - cold;
        // An atomic on a line in the L1 still waits for its latency.
        s.touch(obj, 8, Access::Atomic);
        let atomic = s.finish().end - cold - warm;
        let cyc = |ps: u64| (ps as f64 / m.cycle_ps_f).round() as u64;
        assert_eq!(m.mem.stats.l1, (3, 2));
        assert!(cyc(cold) > 100, "the first read waits for DRAM: {} cycles", cyc(cold));
        assert_eq!(cyc(warm), 2, "two L1 hits, a cycle each");
        assert_eq!(cyc(atomic), u64::from(p.cpu.l1d.latency_cycles) + 18);
    }

    #[test]
    fn reads_on_use_are_charged_in_order_when_the_loop_reaches_them() {
        let (_, mut m) = one_core_without_prefetchers();
        let cell = Cell::new(0);
        // Three 64-byte messages, each a line of its own.
        let (a, b, c) = (0x10_0000usize, 0x10_0040, 0x10_0080);
        let mut s = SimProbe::new(&mut m, Agent::Core(0), 0, &cell);
        for h in [a, b, c] {
            s.read_on_use(h, 64);
        }
        assert_eq!(s.now_ps(), 0, "handing the batch over costs nothing yet");
        s.phase(Phase::App);
        // The app's loop reaches b: a's and b's headers are read first, then b's byte 63 is written.
        s.touch(b + 63, 1, Access::Write);
        let at_b = s.now_ps();
        assert!(at_b > 0);
        // c is never touched: its header read is charged when the step ends.
        let step = s.finish();
        assert!(step.end > at_b);
        // Each header missed the L1 once; the write found b's line there.
        assert_eq!(m.mem.stats.l1, (1, 3));
        // The header reads are the receive path's, the write the app's (an L1 hit, a cycle).
        assert_eq!(step.phase_ps[Phase::App as usize], m.cycle_ps);
        assert_eq!(step.phase_ps[Phase::Rx as usize], step.end - m.cycle_ps);
    }
}
