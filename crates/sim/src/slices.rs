//! LLC slices: Intel's undocumented "complex addressing", which spreads physical lines over the slices of
//! the last-level cache (one slice per core or per CHA), as published reverse engineering found it.
//!
//! Every function used here has the form McCalpin reports for all Xeon Scalable processors he measured
//! (\[McC21\]): a *base sequence* of slice numbers for the `L` lines of an aligned block (`L` a power of
//! two), repeated for every block under a binary permutation of the line's position in it, the
//! permutation being selected by XOR reductions (parities) of higher physical-address bits under a set
//! of *permutation select masks*:
//!
//! `slice(PA) = base[(PA bits 6.. of the line mod L) XOR perm(PA)]`, bit `j` of `perm(PA)` being the
//! parity of `PA & mask[j]`.
//!
//! (McCalpin's "binary permutation `p`" of a sequence is the sequence indexed by position XOR `p`.) For a
//! power-of-two number of slices the base sequence is the identity (`L` = slices), so that the slice is
//! the line's low bits XOR `perm(PA)`, and each permutation bit is one of the XOR functions that Maurice
//! et al. found for 2^n-core Intel CPUs (\[MAU15\]) without that low bit. For other slice counts the base
//! sequence is longer than the slice count (256 to 16384 lines) and not every slice has the same share
//! of it: of the 4096 lines of the 18-slice sequence, slices 0-15 get 232 each and slices 16 and 17 get
//! 192. Since the masks only hold bits above the block, every aligned block of `L` lines gives each slice
//! exactly its share of the base sequence.
//!
//! Within its slice, a line's set is indexed by the line address bits above the offset, as in a cache
//! without slices (PA bits 6..16 for the 2048 sets of a Skylake-SP slice: \[LIU15\], \[YAN19\]).
//!
//! Sources:
//! - \[McC21\] J. D. McCalpin, "Mapping Addresses to L3/CHA Slices in Intel Processors", TACC ACELab
//!   TR-2021-03 (2021), doi:10.26153/tsw/14539; data in github.com/jdmccalpin/Intel_Address_Hash (commit
//!   88912eaffa83), `Results/`: for Xeon Scalable 1st and 2nd generation (Skylake-SP and Cascade Lake,
//!   "SKX") with `n` slices, `BaseSequence_SKX_<n>-slice.tbl` (one slice number a line, the slices of
//!   the lines from physical address 0) and `PermSelectMasks_SKX_<n>-slice.tbl` (the lowest and highest
//!   PA bit the masks cover, then the masks of permutation bits 0 to 13), with the format described in
//!   `Results/README.md`. Transcribed here: 16, 18, 20, 22, 24, 26 and 28 slices; the long base
//!   sequences are in the submodules `skx18` to `skx28`.
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
//! How the tables were checked (tests below): each hash has the slice count and base sequence length its
//! file names say, and its masks lie within the PA bits its mask file gives (from 6 + log2 of the length
//! up to 37, so that the permutation never touches the position within a block), one per permutation
//! bit; the first 32 and last 16 lines of the 18-, 20- and 28-slice base sequences, typed from the
//! `.tbl` files apart from the transcription, are the slices of the lines from physical address 0, the
//! first block McCalpin measured, and the whole first block of every hash is its base sequence; blocks
//! elsewhere are the base sequence under the permutation the masks select; each slice gets exactly the
//! share of lines counted in the published base sequence, over 64 blocks spread over the masks' 256 GiB
//! and over the 64 MiB from a 1 GiB boundary; the placement the cache uses gives the slice of
//! McCalpin's formula written out directly; the 16-slice hash agrees with \[MAU15\]'s 8-core functions.
//! McCalpin publishes no mapping beyond the first block of each hash, so the permutation above it rests
//! on his stated form (`Results/README.md`) and, for 16 slices, its agreement with \[MAU15\].

//! What the simulator's addresses mean for the hash: they are simulated physical addresses
//! ([`crate::addr`]). The packet arena keeps its layout from a 1 GiB-aligned base, as a buffer pool in a
//! 1 GiB hugepage does (the papers' setup), so its lines hash as that pool would at the bottom of a
//! physical 1 GiB page; other data regions keep their layout from 4 KiB-aligned bases; everything else
//! (rings, pools, app state) is numbered in first-touch order, a physically plausible layout but not the
//! one a real run would get. The published masks cover PA bits up to 37; the bits above, which only tell
//! the simulator's regions apart, do not enter the hash.

mod skx18;
mod skx20;
mod skx22;
mod skx24;
mod skx26;
mod skx28;

/// Most slices a cache may have.
pub const MAX_SLICES: usize = 64;

/// Sets in one LLC slice of a Xeon Scalable (Skylake-SP, Cascade Lake) processor, indexed by PA bits
/// 6..16 (\[LIU15\], \[YAN19\]): 1.375 MiB in 11 ways.
pub const SLICE_SETS: usize = 2048;

/// A published slice-selection function: a base sequence and permutation select masks (module doc).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SliceHash {
    /// Which function, for profiles and reports: `skx-<n>` is McCalpin's for `n` slices, `xor-8` Maurice
    /// et al.'s.
    pub name: &'static str,
    /// Number of slices.
    pub slices: usize,
    /// The base sequence: the slice of each line of an aligned block (a power-of-two number of lines).
    pub base: &'static [u8],
    /// Permutation select mask of each permutation bit, over physical-address bits above the block.
    pub masks: &'static [u64],
}

impl std::fmt::Debug for SliceHash {
    /// The name only: the base sequences run to 16384 entries.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SliceHash({})", self.name)
    }
}

/// The identity base sequence of a power-of-two number of slices (up to 16).
const IDENTITY: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// Xeon Scalable (Skylake-SP, Cascade Lake) with 16 LLC slices: \[McC21\]. Base sequence `0..15` over PA
/// bits 6..9 (`BaseSequence_SKX_16-slice.tbl`); permutation select masks, valid for PA bits 10..37:
/// 0x1b5f575400, 0x2eb5faa800, 0x3cccc93000, 0x31aeeb1000 (`PermSelectMasks_SKX_16-slice.tbl`). The
/// first three are \[MAU15\]'s o0, o1, o2 without PA bits 6, 7, 8.
pub const SKX_16: SliceHash = SliceHash {
    name: "skx-16",
    slices: 16,
    base: &IDENTITY,
    masks: &[0x1b5f575400, 0x2eb5faa800, 0x3cccc93000, 0x31aeeb1000],
};

/// Eight slices: \[MAU15\]'s 8-core functions o0, o1, o2 (PA masks 0x1B5F575440, 0x2EB5FAA880,
/// 0x3CCCC93100), written as permutation select masks over PA bits 9 and up by removing PA bits 6, 7, 8
/// (the identity base sequence). No function has been published for a Skylake-SP with 8 slices; this is
/// the closest: the 8-core function of the Xeons before it, which is also the first three bits of the
/// Skylake-SP 16-slice function ([`SKX_16`]).
pub const XOR_8: SliceHash = SliceHash {
    name: "xor-8",
    slices: 8,
    base: &[0, 1, 2, 3, 4, 5, 6, 7],
    masks: &[0x1b5f575400, 0x2eb5faa800, 0x3cccc93000],
};

/// Xeon Scalable with 18 LLC slices (e.g. Xeon Gold 6140, 6154: 24.75 MB): \[McC21\]. Base sequence of
/// 4096 lines (`slices/skx18.rs`); masks over PA bits 18..37 (`PermSelectMasks_SKX_18-slice.tbl`; permutation
/// bit 10's mask is 0).
pub const SKX_18: SliceHash = SliceHash {
    name: "skx-18",
    slices: 18,
    base: &skx18::BASE,
    masks: &[
        0x4c8fc0000,
        0x1d05380000,
        0x262b8c0000,
        0x41f500000,
        0x2c6d780000,
        0x2cd5140000,
        0x21d80c0000,
        0x3b3f480000,
        0x3a03500000,
        0x3033280000,
        0x0,
        0x1469b40000,
    ],
};

/// Xeon Scalable with 20 LLC slices (e.g. Xeon Gold 6148: 27.5 MB): \[McC21\]. Base sequence of 256 lines
/// (`slices/skx20.rs`); masks over PA bits 14..37 (`PermSelectMasks_SKX_20-slice.tbl`).
pub const SKX_20: SliceHash = SliceHash {
    name: "skx-20",
    slices: 20,
    base: &skx20::BASE,
    masks: &[
        0x3ecbad4000,
        0x35cf7c000,
        0x387242c000,
        0xe2f28c000,
        0x1c5e518000,
        0x38bca30000,
        0xfb2eb4000,
        0x1f65d68000,
    ],
};

/// Xeon Scalable with 22 LLC slices (e.g. Xeon Gold 6152: 30.25 MB): \[McC21\]. Base sequence of 16384
/// lines (`slices/skx22.rs`); masks over PA bits 20..37 (`PermSelectMasks_SKX_22-slice.tbl`; the masks of
/// permutation bits 10 and 12 are 0).
pub const SKX_22: SliceHash = SliceHash {
    name: "skx-22",
    slices: 22,
    base: &skx22::BASE,
    masks: &[
        0x3880c00000,
        0x3433d00000,
        0xf1d600000,
        0x41f500000,
        0x1025400000,
        0x2cd5100000,
        0x1d90300000,
        0x1209a00000,
        0x3a03500000,
        0xc7b100000,
        0x0,
        0x1469b00000,
        0x0,
        0x3c48300000,
    ],
};

/// Xeon Scalable with 24 LLC slices (e.g. Xeon Platinum 8160: 33 MB): \[McC21\]. Base sequence of 512
/// lines (`slices/skx24.rs`); masks over PA bits 15..37 (`PermSelectMasks_SKX_24-slice.tbl`).
pub const SKX_24: SliceHash = SliceHash {
    name: "skx-24",
    slices: 24,
    base: &skx24::BASE,
    masks: &[
        0x2b72c98000,
        0x16e5930000,
        0x2dcb260000,
        0x1b964c0000,
        0x1c5e518000,
        0x38bca30000,
        0x1a0b8f8000,
        0x1f65d68000,
        0x15b9648000,
    ],
};

/// Xeon Scalable with 26 LLC slices (e.g. Xeon Platinum 8170: 35.75 MB): \[McC21\]. Base sequence of
/// 16384 lines (`slices/skx26.rs`); masks over PA bits 20..37 (`PermSelectMasks_SKX_26-slice.tbl`; permutation
/// bit 12's mask is 0).
pub const SKX_26: SliceHash = SliceHash {
    name: "skx-26",
    slices: 26,
    base: &skx26::BASE,
    masks: &[
        0xe3f300000,
        0x3433d00000,
        0x39a2900000,
        0x41f500000,
        0x269ab00000,
        0x1a6ae00000,
        0x2b2fc00000,
        0x24b6500000,
        0x3a03500000,
        0xc7b100000,
        0x36bff00000,
        0x1469b00000,
        0x0,
        0x3c48300000,
    ],
};

/// Xeon Scalable with 28 LLC slices (e.g. Xeon Platinum 8180, 8280: 38.5 MB): \[McC21\]. Base sequence of
/// 4096 lines (`slices/skx28.rs`); masks over PA bits 18..37 (`PermSelectMasks_SKX_28-slice.tbl`).
pub const SKX_28: SliceHash = SliceHash {
    name: "skx-28",
    slices: 28,
    base: &skx28::BASE,
    masks: &[
        0x32770c0000,
        0x3433d40000,
        0x39a2900000,
        0x3857680000,
        0x1ad2880000,
        0x1a6ae40000,
        0x2b2fc40000,
        0x24b6540000,
        0x3a03500000,
        0xc7b100000,
        0xaf7c80000,
        0x28218c0000,
    ],
};

/// Every published hash the model knows, which profile files name.
pub const HASHES: &[SliceHash] = &[SKX_16, XOR_8, SKX_18, SKX_20, SKX_22, SKX_24, SKX_26, SKX_28];

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
    /// The permutation of the base sequence that physical address `pa` selects: bit `j` is the parity of
    /// `pa & masks[j]`.
    pub fn permutation(&self, pa: u64) -> usize {
        self.masks.iter().enumerate().map(|(j, &m)| ((pa & m).count_ones() as usize & 1) << j).sum()
    }

    /// The position in the base sequence whose slice physical address `pa` has: its line's position in
    /// its block XOR the permutation. Linear over GF(2) in `pa`.
    pub fn position(&self, pa: u64) -> usize {
        ((pa >> 6) as usize & (self.base.len() - 1)) ^ self.permutation(pa)
    }

    /// The slice of physical address `pa`.
    pub fn slice(&self, pa: u64) -> usize {
        usize::from(self.base[self.position(pa)])
    }

    /// Whether the base sequence is the identity, so that the slice is the position itself (a
    /// power-of-two number of slices).
    pub fn identity(&self) -> bool {
        self.base.iter().enumerate().all(|(i, &s)| usize::from(s) == i)
    }
}

/// The part of a [`SliceHash`]'s position ([`SliceHash::position`]) that the line address bits from
/// `first` up select, by table: those bits a byte at a time, each byte's contribution looked up (the
/// position is linear over GF(2)), so that a lookup costs four loads instead of a parity per
/// permutation bit.
#[derive(Debug, Clone)]
pub struct LinePosition {
    /// The lowest line bit the table covers.
    first: u32,
    /// Per byte of line bits `first..first + 32`, the position each of its values contributes.
    bytes: [[u16; 256]; 4],
}

impl LinePosition {
    /// The table of `hash` over line bits `first..first + 32`, which must hold the masks' highest bits.
    pub fn new(hash: &SliceHash, first: u32) -> LinePosition {
        assert!(hash.base.len() <= 1 << 16, "base sequences of at most 2^16 lines");
        assert!(hash.masks.iter().all(|&m| m >> (38 + first) == 0), "slice masks below PA bit 38 + first");
        let mut bytes = [[0u16; 256]; 4];
        for (b, table) in bytes.iter_mut().enumerate() {
            for (v, p) in table.iter_mut().enumerate() {
                let pa = (v as u64) << (6 + first + 8 * b as u32);
                *p = hash.position(pa) as u16;
            }
        }
        LinePosition { first, bytes }
    }

    /// The position that the bits of line address `line` from `first` up select.
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

/// The LLC's sets: spread over the slices of a [`SliceHash`] (or one slice without), indexed within a
/// slice by the low line bits. A line's position in the base sequence is linear in its address: the part
/// its set bits select XOR the part its tag bits select ([`LinePosition`] from the tag bits up). A line's
/// record is its set bits below a number that, given the set, names the slice. Where the base sequence
/// is the identity and no longer than a slice's sets (the power-of-two hashes), that number is the tag
/// part of the position itself: lines that share a tag (an aligned block of one way's size) then have
/// consecutive records, in set order, as in a cache without slices (host layout only: a DMA run walks
/// its records in order). Otherwise it is the slice, the base sequence's entry at the set part XOR the
/// tag part, and every line is a run of its own.
#[derive(Debug, Clone)]
pub struct Sliced {
    /// Line bits that index a set within a slice.
    set_bits: u32,
    /// Mask of those bits.
    set_mask: usize,
    /// Whether a record's number above the set bits is the tag part of the position (else the slice).
    by_tag: bool,
    /// The hash and its tables, if there are slices.
    hash: Option<Box<SliceTables>>,
}

/// What [`Sliced`] precomputes of its hash.
#[derive(Debug, Clone)]
struct SliceTables {
    hash: SliceHash,
    /// The part of a line's position that its tag bits select.
    tag: LinePosition,
    /// The part that the set bits of each set within a slice select (empty where records go by tag).
    set: Box<[u16]>,
}

impl Sliced {
    /// `sets` sets split evenly over the slices of `hash`, a power of two of them in each slice.
    pub fn new(sets: usize, hash: Option<&SliceHash>) -> Sliced {
        let slices = hash.map_or(1, |h| h.slices);
        let per_slice = sets / slices;
        assert!(
            slices <= MAX_SLICES && per_slice * slices == sets && per_slice.is_power_of_two(),
            "cache geometry checked by the profile"
        );
        let set_bits = per_slice.trailing_zeros();
        let by_tag = hash.is_none_or(|h| h.identity() && h.base.len() <= per_slice);
        let hash = hash.map(|h| {
            assert!(h.masks.len() <= h.base.len().trailing_zeros() as usize, "a permutation within the block");
            let set = if by_tag {
                Box::default()
            } else {
                (0..per_slice).map(|s| h.position((s as u64) << 6) as u16).collect()
            };
            Box::new(SliceTables { hash: *h, tag: LinePosition::new(h, set_bits), set })
        });
        Sliced { set_bits, set_mask: per_slice - 1, by_tag, hash }
    }
}

impl Placement for Sliced {
    fn sets(&self) -> usize {
        (self.set_mask + 1) * self.hash.as_ref().map_or(1, |t| t.hash.slices)
    }
    #[inline(always)]
    fn set_bits(&self) -> u32 {
        self.set_bits
    }
    #[inline(always)]
    fn record(&self, line: u64) -> usize {
        let in_slice = line as usize & self.set_mask;
        let Some(t) = &self.hash else { return in_slice };
        let tag = t.tag.of(line);
        let high = if self.by_tag { tag } else { usize::from(t.hash.base[usize::from(t.set[in_slice]) ^ tag]) };
        (high << self.set_bits) | in_slice
    }
    #[inline(always)]
    fn in_slice(&self, record: usize) -> usize {
        record & self.set_mask
    }
    fn slice(&self, record: usize) -> usize {
        let Some(t) = &self.hash else { return 0 };
        let high = record >> self.set_bits;
        // By tag, the base sequence is the identity: the slice is the set part XOR the tag part.
        if self.by_tag { t.hash.position((self.in_slice(record) as u64) << 6) ^ high } else { high }
    }
    #[inline(always)]
    fn run_bits(&self) -> u32 {
        if self.by_tag { self.set_bits } else { 0 }
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

    /// Each of McCalpin's SKX hashes with what its files say of it: slices, base sequence length, and the
    /// lowest PA bit of the masks (first line of `PermSelectMasks_SKX_<n>-slice.tbl`).
    const SKX: [(SliceHash, usize, usize, u32); 7] = [
        (SKX_16, 16, 16, 10),
        (SKX_18, 18, 4096, 18),
        (SKX_20, 20, 256, 14),
        (SKX_22, 22, 16384, 20),
        (SKX_24, 24, 512, 15),
        (SKX_26, 26, 16384, 20),
        (SKX_28, 28, 4096, 18),
    ];

    #[test]
    fn the_transcribed_tables_have_the_published_form() {
        for (h, slices, lines, lowest) in SKX {
            assert_eq!((h.slices, h.base.len(), h.name), (slices, lines, format!("skx-{slices}").as_str()));
            // Results/README.md: the lowest mask bit "should be 6+log2(BaseSequenceLength)"; the masks
            // are valid up to PA bit 37; there is one mask per permutation bit, which permutes positions
            // within the block.
            assert_eq!(6 + lines.trailing_zeros(), lowest, "{}", h.name);
            assert!(h.masks.iter().all(|&m| m & ((1 << lowest) - 1) == 0 && m >> 38 == 0), "{}", h.name);
            assert!(h.masks.len() <= lines.trailing_zeros() as usize, "{}", h.name);
            assert!(
                (0..slices).all(|s| h.base.contains(&(s as u8))) && h.base.iter().all(|&s| usize::from(s) < slices)
            );
            assert_eq!(h.identity(), slices.is_power_of_two(), "{}", h.name);
        }
    }

    #[test]
    fn the_first_block_of_memory_is_mccalpins_measured_base_sequence() {
        // Rows of the published files, typed from them: the first 32 and the last 16 lines of the block
        // from PA 0 (BaseSequence_SKX_<n>-slice.tbl, lines 1-32 and the last 16).
        let rows: [(SliceHash, [usize; 32], [usize; 16]); 3] = [
            (
                SKX_18,
                [
                    0, 11, 2, 9, 7, 12, 5, 14, 1, 10, 3, 8, 6, 13, 4, 15, 1, 10, 3, 8, 6, 13, 4, 15, 0, 11, 10, 17, 7,
                    12, 17, 14,
                ],
                [10, 1, 8, 3, 13, 6, 15, 4, 5, 16, 9, 2, 16, 1, 14, 5],
            ),
            (
                SKX_20,
                [
                    0, 11, 2, 9, 7, 12, 5, 14, 1, 10, 3, 8, 6, 13, 4, 15, 1, 10, 3, 8, 6, 13, 4, 15, 0, 11, 18, 17, 7,
                    12, 17, 18,
                ],
                [7, 12, 5, 14, 0, 11, 2, 9, 6, 13, 16, 19, 1, 10, 19, 16],
            ),
            (
                SKX_28,
                [
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 16, 19, 18, 21, 20, 23, 22, 25, 24, 27,
                    26, 1, 16, 11, 18,
                ],
                [13, 12, 7, 6, 25, 24, 27, 26, 21, 20, 23, 22, 17, 16, 19, 18],
            ),
        ];
        for (h, first, last) in rows {
            let lines = h.base.len() as u64;
            assert_eq!((0..32).map(|i| h.slice(i * 64)).collect::<Vec<_>>(), first, "{}", h.name);
            assert_eq!((lines - 16..lines).map(|i| h.slice(i * 64)).collect::<Vec<_>>(), last, "{}", h.name);
        }
        // The whole first block of every hash is its base sequence: the masks select nothing below it.
        for (h, ..) in SKX {
            assert!((0..h.base.len()).all(|i| h.slice(i as u64 * 64) == usize::from(h.base[i])), "{}", h.name);
        }
    }

    #[test]
    fn every_block_is_a_binary_permutation_of_the_base_sequence() {
        // McCalpin's form written out: block b's lines are base[i XOR p], p the parities of b's address
        // under the masks.
        for (h, _, lines, _) in SKX {
            for pa in addresses().take(200) {
                let block = pa & !(lines as u64 * 64 - 1);
                let p = (h.masks.iter().enumerate())
                    .map(|(j, &m)| ((block & m).count_ones() as usize % 2) << j)
                    .sum::<usize>();
                for i in (0..lines).step_by(lines / 64 + 1) {
                    assert_eq!(h.slice(block + i as u64 * 64), usize::from(h.base[i ^ p]), "{} {block:#x}", h.name);
                }
            }
        }
    }

    #[test]
    fn each_slice_gets_its_published_share_of_the_lines() {
        // Shares counted in the published base sequences (lines of the block per slice): 18 slices, 232
        // for slices 0-15 and 192 for 16 and 17 of 4096; 20: 13 and 12 of 256; 22: 772, 752 (16-19), 512
        // (20, 21) of 16384; 24: 21 and 22 (16-23) of 512; 26: 638, 644 (16-23), 512 (24, 25) of 16384;
        // 28: 149, 150 (16-23), 128 (24-27) of 4096.
        let shares: [(SliceHash, &[(usize, usize)]); 6] = [
            (SKX_18, &[(16, 232), (2, 192)]),
            (SKX_20, &[(16, 13), (4, 12)]),
            (SKX_22, &[(16, 772), (4, 752), (2, 512)]),
            (SKX_24, &[(16, 21), (8, 22)]),
            (SKX_26, &[(16, 638), (8, 644), (2, 512)]),
            (SKX_28, &[(16, 149), (8, 150), (4, 128)]),
        ];
        for (h, share) in shares {
            let expected: Vec<usize> = share.iter().flat_map(|&(n, lines)| std::iter::repeat_n(lines, n)).collect();
            assert_eq!(expected.len(), h.slices);
            // 64 blocks at addresses spread over the masks' 256 GiB, and the 64 MiB from a 1 GiB boundary
            // (the packet arena's hugepage): every aligned block gives each slice exactly its share.
            let lines = h.base.len() as u64;
            let spread = addresses().take(64).map(|pa| pa & !(lines * 64 - 1));
            let from_1g = (0..(1 << 20) / lines).map(|b| (5 << 30) + b * lines * 64);
            for (blocks, starts) in
                [(64, spread.collect::<Vec<_>>()), (((1 << 20) / lines) as usize, from_1g.collect())]
            {
                let mut count = vec![0; h.slices];
                for start in starts {
                    (0..lines).for_each(|i| count[h.slice(start + i * 64)] += 1);
                }
                assert_eq!(count, expected.iter().map(|&e| e * blocks).collect::<Vec<_>>(), "{}", h.name);
            }
        }
    }

    #[test]
    fn the_table_gives_the_position_the_bits_it_covers_select() {
        for hash in [SKX_16, XOR_8, SKX_18, SKX_22] {
            for first in [0, 4, 11] {
                let t = LinePosition::new(&hash, first);
                for pa in addresses() {
                    // Bits above the masks' range (the simulator's region bases) change nothing.
                    let covered = pa >> (6 + first) << (6 + first);
                    assert_eq!(t.of(pa >> 6), hash.position(covered));
                    assert_eq!(t.of((pa | 1 << 40) >> 6), hash.position(covered));
                }
            }
        }
    }

    #[test]
    fn sliced_records_are_one_per_slice_and_set() {
        // The Silver 4216's LLC (16 slices of 2048 sets, records by tag) and a Gold 6140's (18, by slice).
        // A line's record gives back its set and its slice, which is McCalpin's formula written out.
        let mccalpin = |h: &SliceHash, pa: u64| {
            let p: usize = h.masks.iter().enumerate().map(|(j, &m)| ((pa & m).count_ones() as usize % 2) << j).sum();
            usize::from(h.base[((pa >> 6) as usize % h.base.len()) ^ p])
        };
        for h in [SKX_16, SKX_18, SKX_22] {
            let p = Sliced::new(h.slices * 2048, Some(&h));
            assert_eq!((p.sets(), p.run_bits()), (h.slices * 2048, if h.identity() { 11 } else { 0 }));
            let mut seen = vec![false; p.sets()];
            for pa in addresses() {
                let r = p.record(pa >> 6);
                seen[r] = true;
                assert_eq!((p.in_slice(r), p.slice(r)), ((pa >> 6) as usize & 2047, mccalpin(&h, pa)), "{pa:#x}");
            }
            // Every record names its own (slice, set) pair.
            let pairs: std::collections::HashSet<_> = (0..p.sets()).map(|r| (p.slice(r), p.in_slice(r))).collect();
            assert_eq!(pairs.len(), p.sets());
            assert!(seen.iter().filter(|&&s| s).count() > 10_000);
        }
        // Without a hash, the records are the low line bits.
        let one = Sliced::new(32768, None);
        assert_eq!((one.record(0x12_3456), one.slice(0x3456), one.sets()), (0x3456, 0, 32768));
    }
}
