//! Write-combining stores to device memory. nicmem is mapped write-combining (nicmem §6.5: it "permits
//! the caching of writes, but prevents the caching of reads"): a core's stores to it gather in the L1D
//! fill buffers, which serve as its write-combining buffers (Intel 64 and IA-32 Architectures
//! Optimization Reference Manual, "Write Combining"), and each full 64 B line leaves as one posted PCIe
//! write. The lines leave one after another at the rate one PCIe link carries 64 B posted writes (the
//! device memory is one NIC's, behind one link); a core runs ahead of its drained lines by at most its
//! buffers, then waits for one to drain.
//!
//! The nicmem artifact's `fig14` measures it: a copy from host memory into nicmem levels off at 5.29
//! bytes a cycle (11.1 GB/s at 2.1 GHz) from a 128 KiB source on, what a Gen3 x16 link carries in 64 B
//! writes of 24 B TLP overhead each (`pcie.rs`, 11.5 GB/s). The link is not shared with the NIC's DMA
//! here, as for doorbells ([`crate::pcie::Pcie::mmio_write`]): a core's step may run ahead of the NIC's
//! clock.

/// One core's write-combining buffers: when its last line written will have left.
#[derive(Debug, Clone, Copy, Default)]
pub struct WcBuffers {
    drained_at: u64,
}

impl WcBuffers {
    /// `lines` full lines written at `now`, each `line_ps` on the link, with `buffers` buffers: when the
    /// core has handed the last one to a buffer and may go on.
    pub fn write(&mut self, now: u64, lines: u64, line_ps: u64, buffers: u64) -> u64 {
        self.drained_at = self.drained_at.max(now) + lines * line_ps;
        now.max(self.drained_at.saturating_sub(buffers * line_ps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst within the buffers costs the core nothing; a long one runs at the link's rate, the
    /// buffers ahead; an idle gap lets them drain.
    #[test]
    fn the_buffers_absorb_a_burst_and_then_the_link_sets_the_pace() {
        let mut wc = WcBuffers::default();
        assert_eq!(wc.write(1000, 10, 5, 10), 1000, "ten lines fill the ten buffers");
        assert_eq!(wc.write(1000, 6, 5, 10), 1030, "six more wait for six to leave");
        assert_eq!(wc.write(1030, 100, 5, 10), 1530, "then one line per link time");
        assert_eq!(wc.write(10_000, 4, 5, 10), 10_000, "drained after a gap");
    }
}
