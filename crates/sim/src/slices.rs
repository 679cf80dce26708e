//! LLC slices: Intel's undocumented "complex addressing", which spreads physical lines over the slices of
//! the last-level cache (one slice per core or per CHA), as published reverse engineering found it.
//!
//! Every function used here has the form McCalpin reports for all Xeon Scalable processors he measured
//! (\[McC21\]): a short *base sequence* of slice numbers for the lines of an aligned block, repeated with a
//! binary *permutation* of it for each block, the permutation being selected by XOR reductions (parities)
//! of higher physical-address bits under a set of *permutation select masks*. For a power-of-two number
//! of slices the base sequence is the identity over the low address bits, so that
//! `slice = (PA bits 6.. of the line) XOR perm(PA)`, and each permutation bit is one of the XOR functions
//! that Maurice et al. found for 2^n-core Intel CPUs (\[MAU15\]) without that low bit.
//!
//! Within its slice, a line's set is indexed by the line address bits above the offset, as in a cache
//! without slices (PA bits 6..16 for the 2048 sets of a Skylake-SP slice: \[LIU15\], \[YAN19\]).
//!
//! Sources:
//! - \[McC21\] J. D. McCalpin, "Mapping Addresses to L3/CHA Slices in Intel Processors", TACC ACELab
//!   TR-2021-03 (2021), doi:10.26153/tsw/14539; data in github.com/jdmccalpin/Intel_Address_Hash,
//!   `Results/BaseSequence_SKX_16-slice.tbl` and `Results/PermSelectMasks_SKX_16-slice.tbl` (Xeon
//!   Scalable 1st and 2nd generation, i.e. Skylake-SP and Cascade Lake, with 16 slices).
//! - \[MAU15\] C. Maurice, N. Le Scouarnec, C. Neumann, O. Heen, A. Francillon, "Reverse Engineering
//!   Intel Last-Level Cache Complex Addressing Using Performance Counters", RAID 2015: the functions
//!   o0, o1, o2 of 2-, 4- and 8-core Xeon and Core processors (as PA masks 0x1B5F575440, 0x2EB5FAA880,
//!   0x3CCCC93100 also in Farshin et al.'s slice-aware code, EuroSys 2019, for a Xeon E5-2667 v3).
//! - \[LIU15\] F. Liu, Y. Yarom, Q. Ge, G. Heiser, R. B. Lee, "Last-Level Cache Side-Channel Attacks
//!   are Practical", IEEE S&P 2015: 2048 sets per slice, indexed by PA bits 6..16.
//! - \[YAN19\] M. Yan, R. Sprabery, B. Gopireddy, C. Fletcher, R. Campbell, J. Torrellas, "Attack
//!   Directories, Not Caches: Side Channel Attacks in a Non-Inclusive World", IEEE S&P 2019: Skylake-X
//!   LLC slices of 2048 sets and 11 ways.
//!
//! What the simulator's addresses mean for the hash: they are simulated physical addresses
//! ([`crate::addr`]). The packet arena keeps its layout from a 1 GiB-aligned base, as a buffer pool in a
//! 1 GiB hugepage does (the papers' setup), so its lines hash as that pool would at the bottom of a
//! physical 1 GiB page; other data regions keep their layout from 4 KiB-aligned bases; everything else
//! (rings, pools, app state) is numbered in first-touch order, a physically plausible layout but not the
//! one a real run would get. The published masks cover PA bits up to 37; the bits above, which only tell
//! the simulator's regions apart, do not enter the hash.

use serde::Serialize;

/// Most slices a cache may have.
pub const MAX_SLICES: usize = 64;

/// A published slice-selection function for `2^k` slices: the permutation select masks of its `k`
/// slice bits over an identity base sequence (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SliceHash {
    /// Which function, for reports: `skx-16` is McCalpin's, `xor-8` Maurice et al.'s.
    pub name: &'static str,
    /// Permutation select mask of each slice bit, over physical-address bits `6 + k` and up.
    pub masks: &'static [u64],
}

/// Xeon Scalable (Skylake-SP, Cascade Lake) with 16 LLC slices: \[McC21\]. Base sequence `0..15` over PA
/// bits 6..9; permutation select masks, valid for PA bits 10..37: 0x1b5f575400, 0x2eb5faa800,
/// 0x3cccc93000, 0x31aeeb1000 (`PermSelectMasks_SKX_16-slice.tbl`). The first three are \[MAU15\]'s o0, o1,
/// o2 without PA bits 6, 7, 8.
pub const SKX_16: SliceHash =
    SliceHash { name: "skx-16", masks: &[0x1b5f575400, 0x2eb5faa800, 0x3cccc93000, 0x31aeeb1000] };

/// Eight slices: \[MAU15\]'s 8-core functions o0, o1, o2 (PA masks 0x1B5F575440, 0x2EB5FAA880,
/// 0x3CCCC93100), written as permutation select masks over PA bits 9 and up by removing PA bits 6, 7, 8
/// (the identity base sequence). No function has been published for a Skylake-SP with 8 slices; this is
/// the closest: the 8-core function of the Xeons before it, which is also the first three bits of the
/// Skylake-SP 16-slice function ([`SKX_16`]).
pub const XOR_8: SliceHash = SliceHash { name: "xor-8", masks: &[0x1b5f575400, 0x2eb5faa800, 0x3cccc93000] };

/// Every published hash the model knows, which profile files name.
pub const HASHES: &[SliceHash] = &[SKX_16, XOR_8];

/// A profile's optional slice hash in files: its name, or `"none"` for one slice indexed by the low line
/// bits (`#[serde(with = "crate::slices::by_name")]`).
pub mod by_name {
    use super::{HASHES, SliceHash};
    use serde::{Deserialize, Deserializer, Serializer};

    /// The name written for no slice hash.
    pub const NONE: &str = "none";

    /// Write the hash's name, or [`NONE`].
    pub fn serialize<S: Serializer>(h: &Option<SliceHash>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(h.map_or(NONE, |h| h.name))
    }

    /// Read a name of [`HASHES`], or [`NONE`].
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SliceHash>, D::Error> {
        let name = String::deserialize(d)?;
        if name == NONE {
            return Ok(None);
        }
        HASHES.iter().find(|h| h.name == name).map(|h| Some(*h)).ok_or_else(|| {
            let known: Vec<&str> = HASHES.iter().map(|h| h.name).chain([NONE]).collect();
            serde::de::Error::custom(format!("unknown slice hash '{name}' (known: {})", known.join(", ")))
        })
    }
}

impl SliceHash {
    /// Slice bits `k`: there are `2^k` slices.
    pub fn bits(&self) -> u32 {
        self.masks.len() as u32
    }

    /// Number of slices.
    pub fn slices(&self) -> usize {
        1 << self.bits()
    }

    /// The permutation of the base sequence that physical address `pa` selects: bit `j` is the parity of
    /// `pa & masks[j]`.
    pub fn permutation(&self, pa: u64) -> usize {
        self.masks.iter().enumerate().map(|(j, &m)| ((pa & m).count_ones() as usize & 1) << j).sum()
    }

    /// The slice of physical address `pa`: its line's position in the base sequence (the identity),
    /// permuted.
    pub fn slice(&self, pa: u64) -> usize {
        ((pa >> 6) as usize & (self.slices() - 1)) ^ self.permutation(pa)
    }
}

/// The part of a [`SliceHash`]'s permutation that the line address bits from `first` up select, by
/// table: those bits a byte at a time, each byte's contribution looked up (the permutation is linear over
/// GF(2)), so that a lookup costs four loads instead of a parity per slice bit.
#[derive(Debug, Clone)]
pub struct LinePermutation {
    /// The lowest line bit the table covers.
    first: u32,
    /// Per byte of line bits `first..first + 32`, the permutation each of its values contributes.
    bytes: [[u8; 256]; 4],
}

impl LinePermutation {
    /// The table of `hash` over line bits `first..first + 32`, which must hold the masks' highest bits.
    pub fn new(hash: &SliceHash, first: u32) -> LinePermutation {
        assert!(hash.slices() <= MAX_SLICES, "at most {MAX_SLICES} slices");
        assert!(hash.masks.iter().all(|&m| m >> (38 + first) == 0), "slice masks below PA bit 38 + first");
        let mut bytes = [[0u8; 256]; 4];
        for (b, table) in bytes.iter_mut().enumerate() {
            for (v, p) in table.iter_mut().enumerate() {
                let pa = (v as u64) << (6 + first + 8 * b as u32);
                *p = hash.permutation(pa) as u8;
            }
        }
        LinePermutation { first, bytes }
    }

    /// The permutation that the bits of line address `line` from `first` up select.
    #[inline(always)]
    pub fn of(&self, line: u64) -> usize {
        let x = (line >> self.first) as u32;
        let [b0, b1, b2, b3] = x.to_le_bytes();
        usize::from(
            self.bytes[0][b0 as usize]
                ^ self.bytes[1][b1 as usize]
                ^ self.bytes[2][b2 as usize]
                ^ self.bytes[3][b3 as usize],
        )
    }
}

/// How a cache maps line addresses to the records of its sets ([`crate::cache::SetAssoc`]): a line's
/// set within its slice is its low [`set_bits`](Placement::set_bits) bits, its tag the bits above.
pub trait Placement: Clone + std::fmt::Debug {
    /// Number of set records.
    fn sets(&self) -> usize;
    /// Line bits that index a set within a slice.
    fn set_bits(&self) -> u32;
    /// The record of `line`'s set.
    fn record(&self, line: u64) -> usize;
    /// The set within its slice of record `record`.
    fn in_slice(&self, record: usize) -> usize;
    /// The slice of record `record`.
    fn slice(&self, record: usize) -> usize;
    /// Aligned blocks of `2^run_bits` lines have consecutive records and one tag.
    fn run_bits(&self) -> u32;
}

/// One slice, sets indexed by the low line bits: the private caches.
#[derive(Debug, Clone)]
pub struct Modulo {
    set_bits: u32,
    mask: usize,
}

impl Modulo {
    /// `sets` sets (a power of two).
    pub fn new(sets: usize) -> Modulo {
        assert!(sets.is_power_of_two(), "cache geometry checked by the profile");
        Modulo { set_bits: sets.trailing_zeros(), mask: sets - 1 }
    }
}

impl Placement for Modulo {
    fn sets(&self) -> usize {
        1 << self.set_bits
    }
    #[inline(always)]
    fn set_bits(&self) -> u32 {
        self.set_bits
    }
    #[inline(always)]
    fn record(&self, line: u64) -> usize {
        line as usize & self.mask
    }
    #[inline(always)]
    fn in_slice(&self, record: usize) -> usize {
        record
    }
    #[inline(always)]
    fn slice(&self, _: usize) -> usize {
        0
    }
    #[inline(always)]
    fn run_bits(&self) -> u32 {
        self.set_bits
    }
}

/// The LLC's sets: spread over `2^k` slices by a [`SliceHash`] (or one slice without), indexed within
/// a slice by the low line bits. The permutation is linear, so a line's slice is its low `k` bits XOR
/// the permutation its set bits select XOR the permutation its tag bits select; the record of a line is
/// its set bits below the tag part of its permutation ([`LinePermutation`] from the tag bits up). Given
/// the set, that part determines the slice, so each (slice, set) pair has its own record; and lines that
/// share a tag (an aligned block of one way's size) have consecutive records, in set order, as in a
/// cache without slices (host layout only: a DMA run walks its records in order).
#[derive(Debug, Clone)]
pub struct Sliced {
    /// Line bits that index a set within a slice.
    set_bits: u32,
    /// Mask of those bits.
    set_mask: usize,
    /// The hash, and the part of its permutation the tag bits select, if there are slices.
    hash: Option<(SliceHash, Box<LinePermutation>)>,
}

impl Sliced {
    /// `sets` sets (a power of two) split evenly over the slices of `hash`, each slice having at least
    /// as many sets as there are slices.
    pub fn new(sets: usize, hash: Option<&SliceHash>) -> Sliced {
        let slices = hash.map_or(1, SliceHash::slices);
        let per_slice = sets / slices;
        assert!(sets.is_power_of_two() && per_slice >= slices, "cache geometry checked by the profile");
        let set_bits = per_slice.trailing_zeros();
        Sliced {
            set_bits,
            set_mask: per_slice - 1,
            hash: hash.map(|h| (*h, Box::new(LinePermutation::new(h, set_bits)))),
        }
    }
}

impl Placement for Sliced {
    fn sets(&self) -> usize {
        (self.set_mask + 1) * self.hash.as_ref().map_or(1, |(h, _)| h.slices())
    }
    #[inline(always)]
    fn set_bits(&self) -> u32 {
        self.set_bits
    }
    #[inline(always)]
    fn record(&self, line: u64) -> usize {
        let in_slice = line as usize & self.set_mask;
        let Some((_, tag_perm)) = &self.hash else { return in_slice };
        (tag_perm.of(line) << self.set_bits) | in_slice
    }
    #[inline(always)]
    fn in_slice(&self, record: usize) -> usize {
        record & self.set_mask
    }
    fn slice(&self, record: usize) -> usize {
        let Some((hash, _)) = &self.hash else { return 0 };
        hash.slice((self.in_slice(record) as u64) << 6) ^ (record >> self.set_bits)
    }
    #[inline(always)]
    fn run_bits(&self) -> u32 {
        self.set_bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// McCalpin's own formulation (\[McC21\], `Results/README.md`): the base sequence indexed by the
    /// line's position in its block XOR the permutation number, each permutation bit the parity of the
    /// address under its select mask (masks from `PermSelectMasks_SKX_16-slice.tbl`, base sequence from
    /// `BaseSequence_SKX_16-slice.tbl`).
    fn mccalpin_16(pa: u64) -> usize {
        const BASE: [usize; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        const MASKS: [u64; 4] = [0x1b5f575400, 0x2eb5faa800, 0x3cccc93000, 0x31aeeb1000];
        let p: usize = MASKS.iter().enumerate().map(|(j, &m)| ((pa & m).count_ones() as usize % 2) << j).sum();
        BASE[((pa >> 6) as usize & 15) ^ p]
    }

    /// \[MAU15\]'s 8-core o0, o1, o2 as lists of PA bits 6..37 (the bits of the masks Farshin et al. use),
    /// and the slice they give.
    fn maurice_8(pa: u64) -> usize {
        const O: [&[u32]; 3] = [
            &[6, 10, 12, 14, 16, 17, 18, 20, 22, 24, 25, 26, 27, 28, 30, 32, 33, 35, 36],
            &[7, 11, 13, 15, 17, 19, 20, 21, 22, 23, 24, 26, 28, 29, 31, 33, 34, 35, 37],
            &[8, 12, 13, 16, 19, 22, 23, 26, 27, 30, 31, 34, 35, 36, 37],
        ];
        O.iter()
            .enumerate()
            .map(|(j, bits)| (bits.iter().map(|&b| (pa >> b) as usize & 1).sum::<usize>() % 2) << j)
            .sum()
    }

    /// Addresses spread over the 256 GiB the masks cover (a fixed xorshift sequence).
    fn addresses() -> impl Iterator<Item = u64> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..20_000).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & ((1 << 38) - 1)
        })
    }

    #[test]
    fn sixteen_slices_follow_mccalpins_base_sequence_and_masks() {
        for pa in addresses() {
            assert_eq!(SKX_16.slice(pa), mccalpin_16(pa), "{pa:#x}");
        }
        // Known addresses: the first line of physical memory is in slice 0, the next fifteen walk the base
        // sequence; PA bit 10 alone flips permutation bit 0 (it is in mask 0 only).
        assert_eq!((0..16).map(|i| SKX_16.slice(i << 6)).collect::<Vec<_>>(), (0..16).collect::<Vec<_>>());
        assert_eq!(SKX_16.slice(1 << 10), 1);
        // PA bit 12 is in masks 0, 2 and 3; with the line's position 3 in its block on top.
        assert_eq!(SKX_16.slice(1 << 12), 0b1101);
        assert_eq!(SKX_16.slice((1 << 12) | (3 << 6)), 0b1110);
    }

    #[test]
    fn eight_slices_are_the_8_core_functions_and_the_first_bits_of_sixteen() {
        for pa in addresses() {
            assert_eq!(XOR_8.slice(pa), maurice_8(pa), "{pa:#x}");
            assert_eq!(XOR_8.slice(pa), SKX_16.slice(pa) & 7, "{pa:#x}");
        }
    }

    #[test]
    fn every_aligned_block_of_lines_covers_every_slice_once() {
        // The base sequence is a permutation and one permutation applies per block (McCalpin), so the 16
        // lines of each 1 KiB block land in 16 different slices.
        for pa in addresses() {
            let block = pa & !0x3ff;
            let mut seen = [false; 16];
            (0..16).for_each(|i| seen[SKX_16.slice(block + i * 64)] = true);
            assert!(seen.iter().all(|&s| s), "{block:#x}");
        }
    }

    #[test]
    fn the_table_gives_the_permutation_of_the_bits_it_covers() {
        for hash in [SKX_16, XOR_8] {
            for first in [0, 4, 11] {
                let t = LinePermutation::new(&hash, first);
                for pa in addresses() {
                    // Bits above the masks' range (the simulator's region bases) change nothing.
                    let covered = pa >> (6 + first) << (6 + first);
                    assert_eq!(t.of(pa >> 6), hash.permutation(covered));
                    assert_eq!(t.of((pa | 1 << 40) >> 6), hash.permutation(covered));
                }
            }
        }
    }

    #[test]
    fn sliced_records_are_one_per_slice_and_set() {
        // The Silver 4216's LLC: 16 slices of 2048 sets. A line's record gives back its set and its slice.
        let p = Sliced::new(16 * 2048, Some(&SKX_16));
        for pa in addresses() {
            let r = p.record(pa >> 6);
            assert!(r < p.sets());
            assert_eq!((p.in_slice(r), p.slice(r)), ((pa >> 6) as usize & 2047, SKX_16.slice(pa)), "{pa:#x}");
        }
        // Without a hash, the records are the low line bits.
        let one = Sliced::new(32768, None);
        assert_eq!((one.record(0x12_3456), one.slice(0x3456), one.sets()), (0x3456, 0, 32768));
    }
}
