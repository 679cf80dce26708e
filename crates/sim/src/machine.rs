//! The shared hardware state every agent's probe charges: caches and DRAM, PCIe, and lock release times.

use crate::addr::AddrMap;
use crate::memory::Memory;
use crate::pcie::Pcie;
use crate::profile::{Profile, RemoteSocket};
use crate::remote::OtherSocket;
use crate::storebuf::StoreBuffer;
use crate::upi::Upi;
use crate::wc::WcBuffers;
use rustc_hash::FxHashMap;
use std::ops::Range;

/// Hardware of one simulated server.
#[derive(Debug)]
pub struct Machine {
    /// Host addresses to simulated lines.
    pub addr: AddrMap,
    /// Caches and DRAM.
    pub mem: Memory,
    /// The NIC's PCIe links.
    pub pcie: Pcie,
    /// Release time of every lock seen, by address.
    pub locks: FxHashMap<usize, u64>,
    /// Time of the last winning compare-and-swap of every word seen ([`ifaces::Probe::cas_fresh`]), by
    /// address, ns.
    pub cas_wins: FxHashMap<usize, u64>,
    /// Time cores spent waiting for locks, ps.
    pub lock_wait_ps: u64,
    /// One core cycle in ps, rounded: the issue cost of each further line of a multi-line touch.
    pub cycle_ps: u64,
    /// One core cycle in ps.
    pub cycle_ps_f: f64,
    /// A locked read-modify-write's cost beyond its access, ps.
    pub atomic_ps: u64,
    /// L1D fill buffers per core (how many prefetch fills overlap).
    pub fill_buffers: u64,
    /// Each core's write-combining buffers towards device memory.
    pub wc: Vec<WcBuffers>,
    /// The design's software maps the device's registers uncached ([`ifaces::Design::UNCACHED_REGISTERS`]),
    /// so a core's MMIO writes leave one at a time through its store buffer.
    pub uc_registers: bool,
    /// Each core's store buffer ([`crate::storebuf`]).
    pub stores: Vec<StoreBuffer>,
    /// What one uncached store keeps the next waiting, ps (`cpu.uc_write_ns`).
    pub uc_write_ps: u64,
    /// Store buffer entries per core (`cpu.store_buffer`).
    pub store_buffer: usize,
    /// What a DMA read the LLC cannot serve adds beyond DRAM's latency, ps.
    pub read_miss_ps: u64,
    /// A DPDK driver's own instructions per received packet, ps (`nic.pmd_cycles`).
    pub pmd_ps: u64,
    /// Host addresses of the NIC's own memory (nicmem §4.1), empty if the design has none: NIC accesses
    /// to it stay on the NIC, core accesses cross PCIe uncached ([`crate::probe`]).
    pub nicmem: Range<usize>,
    /// The other socket, where co-located programs run there ([`crate::remote`]).
    pub other_socket: Option<OtherSocket>,
    /// The links between the sockets, where the NF is on the socket away from the NIC: its DMA crosses
    /// them ([`Machine::nic_across_sockets`]).
    pub nic_upi: Option<Upi>,
    /// Host memory holding packet data (the buffer arena, and [`ifaces::DeviceSide::data_regions`]),
    /// sorted: DMA there is goodput, other DMA metadata.
    data: Vec<Range<usize>>,
}

impl Machine {
    /// The machine of `p` running `cores` workers, with the packet arena at `(base, len)`.
    pub fn new(p: &Profile, cores: usize, arena: (usize, usize)) -> Machine {
        let cycle = p.ps_per_cycle();
        Machine {
            addr: AddrMap::new(arena.0, arena.1),
            mem: Memory::new(p, cores),
            pcie: Pcie::new(&p.pcie),
            locks: FxHashMap::default(),
            cas_wins: FxHashMap::default(),
            lock_wait_ps: 0,
            cycle_ps: cycle.round() as u64,
            cycle_ps_f: cycle,
            atomic_ps: (f64::from(p.cpu.atomic_cycles) * cycle) as u64,
            fill_buffers: u64::from(p.cpu.fill_buffers.max(1)),
            wc: vec![WcBuffers::default(); cores],
            uc_registers: false,
            stores: vec![StoreBuffer::default(); cores],
            uc_write_ps: (p.cpu.uc_write_ns * 1000.0).round() as u64,
            store_buffer: p.cpu.store_buffer.max(1) as usize,
            read_miss_ps: (p.pcie.read_miss_ns * 1000.0) as u64,
            pmd_ps: (f64::from(p.nic.pmd_cycles) * cycle).round() as u64,
            nicmem: 0..0,
            other_socket: None,
            nic_upi: None,
            data: std::iter::once(arena.0..arena.0 + arena.1).collect(),
        }
    }

    /// Put the NF's cores and memory on the socket away from the NIC (COREC §4.1, "different NUMA"):
    /// DDIO serves only the LLC of the NIC's own socket (Intel, VTune cookbook, "IO Issues: Remote Socket
    /// Accesses": DDIO "increases the performance only for the local socket configuration"), so the
    /// NIC's writes go to DRAM and drop the lines' cached copies, as with DDIO off; every DMA and MMIO
    /// access pays the crossing (`hop_ns`, pcie-bench's remote DMA read), and the DMA's bytes share the
    /// links' bandwidth.
    pub fn nic_across_sockets(&mut self, r: &RemoteSocket) {
        let upi = Upi::new(r);
        self.mem.ddio_off();
        self.pcie.cross_sockets(upi.hop_ps());
        self.nic_upi = Some(upi);
    }

    /// Core `core` writes `len` bytes of device memory at `now` through its write-combining buffers
    /// ([`crate::wc`]), counted on the link: when it may go on.
    pub fn wc_write(&mut self, core: usize, now: u64, len: u64) -> u64 {
        self.pcie.mmio_write(now, len);
        let line = self.pcie.posted_line_ps();
        self.wc[core].write(now, len.div_ceil(64).max(1), line, self.fill_buffers)
    }

    /// Add regions of host memory that hold packet data (their layout is kept in simulated memory).
    pub fn add_data_regions(&mut self, regions: impl IntoIterator<Item = Range<usize>>) {
        for r in regions {
            self.addr.add_region(r.start, r.len());
            self.data.push(r);
        }
        self.data.sort_by_key(|r| r.start);
    }

    /// Add an app's tables ([`apps::App::tables`]); the engine calls this for each core's app in the order
    /// the apps were built. Their layout is kept in simulated memory (a table several cores share is added
    /// once), and they start in the LLC as their initialisation left them: building a table writes every line
    /// of it, so of this call's tables the last LLC-full of lines is installed, in the order written, clean
    /// as lines of a read-mostly table are in a running system, and calls for later apps evict what earlier
    /// ones installed as writing those apps' tables would. A cold LLC instead would make a run's first
    /// milliseconds, all that a short simulation measures, pay misses for a table a real server has had warm
    /// for seconds.
    pub fn add_tables(&mut self, tables: impl IntoIterator<Item = Range<usize>>) {
        let added: Vec<Range<u64>> = tables
            .into_iter()
            .filter(|t| !t.is_empty())
            .filter_map(|t| self.addr.add_region(t.start, t.len()))
            .collect();
        // Only the last LLC-full survives the initialisation: install that much, in the order written.
        let mut room = self.mem.llc_lines();
        let mut warm = Vec::new();
        for lines in added.iter().rev() {
            let n = (lines.end - lines.start).min(room);
            warm.push(lines.end - n..lines.end);
            room -= n;
            if room == 0 {
                break;
            }
        }
        for lines in warm.into_iter().rev() {
            lines.for_each(|l| self.mem.warm_llc(l));
        }
    }

    /// Whether host address `addr` holds packet data.
    #[inline]
    pub fn is_data(&self, addr: usize) -> bool {
        let i = self.data.partition_point(|r| r.start <= addr);
        i > 0 && self.data[i - 1].contains(&addr)
    }

    /// Forget every counter at the start of a measurement window.
    pub fn reset_counters(&mut self) {
        self.mem.reset_counters();
        self.pcie.reset_counters();
        self.lock_wait_ps = 0;
    }
}
