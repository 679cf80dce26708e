//! Where the parts of a packet buffer sit: the object layout of DPDK's packet mempool, which
//! the papers' DPDK and FastClick applications receive into, or rxlab's earlier packed 2 KiB buffers.
//!
//! A DPDK packet buffer is one object of an `rte_mempool` made by `rte_pktmbuf_pool_create`
//! (lib/mempool/rte_mempool.c, `rte_mempool_calc_obj_size`; lib/mbuf/rte_mbuf.c): a mempool object
//! header rounded up to a cache line, the 128-byte `struct rte_mbuf` (its first line is what drivers
//! write per packet, the metadata line of [`crate::Arena::meta_addr`]), the application's private area
//! (`priv_size`, 8-byte aligned), then the buffer: 128 B of headroom (`RTE_PKTMBUF_HEADROOM`) and the
//! 2048 B data room (`RTE_MBUF_DEFAULT_DATAROOM`). The object is padded to whole cache lines, and then,
//! unless the pool is made with `RTE_MEMPOOL_F_NO_SPREAD`, to a number of lines coprime with the memory
//! channels times ranks (`arch_mem_object_align`: "objects addresses are spread between channels and
//! ranks"), with EAL's defaults of 4 channels and 1 rank when `-n`/`-r` are not given, as in the papers'
//! command lines (nicmem artifact, fig8/test.sh). So consecutive buffers are 37 lines apart, not 32, and
//! their lines spread over every cache set instead of one in 32.

/// Bytes of a cache line.
const LINE: usize = 64;
/// `struct rte_mbuf`: two cache lines.
const MBUF: usize = 128;
/// `RTE_PKTMBUF_HEADROOM`.
const HEADROOM: usize = 128;
/// `RTE_MBUF_DEFAULT_DATAROOM`.
const DATA_ROOM: usize = 2048;
/// EAL's memory channels and ranks when the command line does not give them
/// (`rte_memory_get_nchannel`/`nrank` return 0; `arch_mem_object_align` then assumes 4 and 1).
const CHANNELS_X_RANKS: usize = 4;

/// How an arena's buffers are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufKind {
    /// Objects of DPDK's packet mempool (see the module documentation).
    Mempool,
    /// Buffers exactly `stride` bytes apart: a metadata line, the private area, then the data. rxlab's
    /// packed 2 KiB layout (all buffers' lines in one set in 32), and the layout of NIC memory,
    /// where no mbuf header lives.
    Packed {
        /// Distance between buffer starts, a multiple of 64.
        stride: usize,
    },
}

/// The layout of an arena's buffers: their kind and the private area the app's runtime asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufLayout {
    /// Where the parts sit.
    pub kind: BufKind,
    /// Bytes of the mbuf private area (`priv_size` of `rte_pktmbuf_pool_create`), where an app runtime
    /// keeps per-packet state (FastClick: its annotations).
    pub priv_len: usize,
}

impl Default for BufLayout {
    /// DPDK's packet mempool objects with no private area, as DPDK's sample applications make them.
    fn default() -> Self {
        BufLayout { kind: BufKind::Mempool, priv_len: 0 }
    }
}

impl BufLayout {
    /// Packed 2 KiB buffers (`--buffers 2k`), for comparison with DPDK's layout.
    pub const PACKED_2K: BufLayout = BufLayout { kind: BufKind::Packed { stride: 2048 }, priv_len: 0 };

    /// Names accepted by [`BufLayout::parse`].
    pub const NAMES: &'static [&'static str] = &["mempool", "2k"];

    /// The layout called `name` (`mempool` or `2k`), with no private area.
    pub fn parse(name: &str) -> Result<BufLayout, String> {
        match name {
            "mempool" => Ok(BufLayout::default()),
            "2k" => Ok(BufLayout::PACKED_2K),
            other => Err(format!("unknown buffer layout '{other}' (known: {})", BufLayout::NAMES.join(", "))),
        }
    }

    /// The private area rounded as `rte_pktmbuf_pool_create` requires (`RTE_MBUF_PRIV_ALIGN`, 8 B).
    fn priv_size(&self) -> usize {
        self.priv_len.next_multiple_of(8)
    }

    /// Distance between buffer starts in bytes.
    pub fn stride(&self) -> usize {
        match self.kind {
            BufKind::Packed { stride } => stride,
            BufKind::Mempool => {
                let object = LINE + MBUF + self.priv_size() + HEADROOM + DATA_ROOM;
                let mut lines = object.div_ceil(LINE);
                while gcd(lines, CHANNELS_X_RANKS) != 1 {
                    lines += 1;
                }
                lines * LINE
            }
        }
    }

    /// Offset of the metadata line (the mbuf header's first line) from the buffer's start.
    pub fn meta_offset(&self) -> usize {
        match self.kind {
            BufKind::Packed { .. } => 0,
            BufKind::Mempool => LINE,
        }
    }

    /// Offset of the mbuf field a free reads outside the metadata line, if the layout has one: `next`,
    /// the first field of `struct rte_mbuf`'s second cache line ("fields only used in slow path or on
    /// TX"; DPDK lib/mbuf/rte_mbuf_core.h, 20.11 on; before 20.11 `pool` sat there too), which
    /// `rte_pktmbuf_prefree_seg` reads for every buffer a PMD's transmit completion frees (ice's and
    /// i40e's vector `tx_free_bufs`, mlx5's `mlx5_tx_free_mbuf`, DPDK 20.11; in 21.11 i40e and mlx5 skip
    /// it when the application enables `MBUF_FAST_FREE`, ice does not: [`crate::IfaceConfig::tx_fast_free`]).
    /// Packed buffers and NIC memory have no mbuf header.
    pub fn free_read_offset(&self) -> Option<usize> {
        match self.kind {
            BufKind::Packed { .. } => None,
            BufKind::Mempool => Some(self.meta_offset() + LINE),
        }
    }

    /// Offset of the private area.
    pub fn priv_offset(&self) -> usize {
        match self.kind {
            BufKind::Packed { .. } => LINE,
            BufKind::Mempool => LINE + MBUF,
        }
    }

    /// Offset of the first data byte (what a receive descriptor points to).
    pub fn data_offset(&self) -> usize {
        match self.kind {
            BufKind::Packed { .. } => LINE + self.priv_size(),
            BufKind::Mempool => LINE + MBUF + self.priv_size() + HEADROOM,
        }
    }

    /// Packet bytes a buffer can hold.
    pub fn data_room(&self) -> usize {
        match self.kind {
            BufKind::Packed { stride } => stride.saturating_sub(self.data_offset()),
            BufKind::Mempool => DATA_ROOM,
        }
    }

    /// Check that the layout leaves data room in whole-line buffers; the error says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if let BufKind::Packed { stride } = self.kind
            && (!stride.is_multiple_of(LINE) || self.data_room() == 0)
        {
            return Err(format!(
                "packed buffers of {stride} B must be a multiple of {LINE} B with room for data after {} B of \
                 metadata and private area",
                self.data_offset()
            ));
        }
        Ok(())
    }
}

/// Greatest common divisor.
fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mempool_objects_are_dpdks() {
        // rte_pktmbuf_pool_create(.., priv_size 0, RTE_MBUF_DEFAULT_BUF_SIZE): 64 + 128 + 2176 = 2368 B,
        // 37 lines, coprime with 4: no padding.
        let plain = BufLayout::default();
        assert_eq!((plain.stride(), plain.data_offset(), plain.data_room()), (2368, 320, 2048));
        // FastClick's 96 B of annotations: 2464 B is 38.5 lines, 39 whole lines, coprime with 4.
        let click = BufLayout { priv_len: 96, ..plain };
        assert_eq!((click.stride(), click.priv_offset(), click.data_offset()), (2496, 192, 416));
        // A private area of 128 B: 2496 B is 39 lines as well.
        assert_eq!(BufLayout { priv_len: 128, ..plain }.stride(), 2496);
        // 2528 B would be 40 lines, which share a factor with the 4 channels: padded to 41.
        assert_eq!(BufLayout { priv_len: 160, ..plain }.stride(), 41 * 64);
    }

    #[test]
    fn consecutive_mempool_buffers_cover_every_set_phase() {
        let stride_lines = BufLayout::default().stride() / LINE;
        let phases: std::collections::BTreeSet<usize> = (0..32).map(|i| i * stride_lines % 32).collect();
        assert_eq!(phases.len(), 32, "37 is odd: buffers start in every line position of a 2 KiB period");
        let packed = BufLayout::PACKED_2K.stride() / LINE;
        assert_eq!((0..32).map(|i| i * packed % 32).collect::<std::collections::BTreeSet<_>>().len(), 1);
    }

    #[test]
    fn names_and_bad_layouts() {
        assert_eq!(BufLayout::parse("2k").unwrap(), BufLayout::PACKED_2K);
        assert_eq!(BufLayout::parse("mempool").unwrap(), BufLayout::default());
        assert!(BufLayout::parse("huge").unwrap_err().contains("mempool, 2k"));
        let bad = |stride, priv_len| BufLayout { kind: BufKind::Packed { stride }, priv_len }.check().is_err();
        assert!(bad(100, 0) && bad(2048, 1984) && !bad(2048, 96));
        assert_eq!(BufLayout::PACKED_2K.data_room(), 1984);
    }
}
