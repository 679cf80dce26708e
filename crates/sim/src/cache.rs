//! A set-associative cache array over real line addresses: the simulator's hot path.
//!
//! Layout: per set, one 128-byte record. Its first 64-byte host line holds everything a lookup that
//! misses reads and all the metadata: an 8-bit fingerprint of each way's tag (0 for an invalid way),
//! one-byte replacement ages, and bit masks for valid, dirty and two flags the owner of the array may
//! use. The adjacent line holds the 16 compact `u32` tags. A lookup compares the 16 fingerprints at once
//! (one vector compare) and reads the full tag only of a way whose fingerprint matches, so a miss usually
//! reads one host line. A DMA sweep over consecutive lines walks the array in consecutive records.
//!
//! Placement ([`Placement`]): a cache either indexes its sets by the low bits of the line address, or, as
//! Intel's LLCs do, first spreads lines over slices with a published slice hash ([`crate::slices`]) and
//! then indexes the set within the slice by the low bits. Under a power-of-two hash the records of a
//! sliced cache are ordered so that lines sharing a tag, which the hash spreads over the slices, still
//! have consecutive records; under the others they go by slice. This is host layout only.
//!
//! Replacement ([`Policy`]): true LRU, or the QLRU policies that Abel and Reineke measured in the L3 of
//! Skylake-family CPUs (\[AR20\] below), with or without their set dueling.
//!
//! - \[AR20\] A. Abel, J. Reineke, "nanoBench: A Low-Overhead Tool for Running Microbenchmarks on x86
//!   Systems", ISPASS 2020 (arXiv:1911.03282), §VI, and their results at uops.info/cache.html. The
//!   policies are defined by nanoBench's simulator, `tools/CacheAnalyzer/cacheSim.py` (`QLRUSim` with
//!   `QLRUHitFuncs`, `QLRUMissFuncs`, `QLRUReplIdxFuncs`, `QLRUUpdFuncs`), which the tests here replay.
//! - \[DIP\] M. K. Qureshi, A. Jaleel, Y. N. Patt, S. C. Steely Jr., J. Emer, "Adaptive Insertion
//!   Policies for High Performance Caching", ISCA 2007: set dueling, leader sets of each policy and a
//!   10-bit saturating selector (PSEL) that their misses move; follower sets use the policy whose
//!   leaders miss less.
//! - \[RRIP\] A. Jaleel, K. B. Theobald, S. C. Steely Jr., J. Emer, "High Performance Cache Replacement
//!   Using Re-Reference Interval Prediction (RRIP)", ISCA 2010: the victim search of 2-bit age policies
//!   (find the first line of the oldest age, else age every line and search again).

use crate::slices::{MAX_SLICES, Placement};

/// Most ways a cache may have.
pub const MAX_WAYS: usize = 16;
/// The tag of an invalid way (no line address maps to it: simulated addresses stay below 2^42 bytes).
const INVALID: u32 = u32::MAX;

/// One set: fingerprints and metadata in one host cache line, tags in the next.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Set {
    /// Fingerprint of each way's tag ([`Key`], never 0), or 0 for an invalid way.
    fp: [u8; MAX_WAYS],
    /// Replacement age of each way ([`Policy`]); the bytes of unused ways are never read.
    age: [u8; MAX_WAYS],
    valid: u16,
    dirty: u16,
    /// Owner-defined flag A (the LLC: some core holds the line in its private caches).
    flag_a: u16,
    /// Owner-defined flag B (the LLC: a core holds the line modified).
    flag_b: u16,
    tags: [u32; MAX_WAYS],
    /// The set's slice (read by fills only: after the tags, so that six tags share the first line).
    slice: u8,
    /// Its part in set dueling.
    role: Role,
}

// A set record is two host cache lines; the lookup reads the first.
const _: () = assert!(std::mem::size_of::<Set>() == 128 && std::mem::offset_of!(Set, tags) == 40);

/// Of 16 bytes, the ones equal to `b`, as a bit mask (bit i for byte i): one byte-compare and one mask
/// extraction.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn bytes_equal(bytes: [u8; MAX_WAYS], b: u8) -> u16 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86-64 baseline, and the load reads the 16 bytes of `bytes`.
    #[allow(unsafe_code)]
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))) as u16
    }
}

/// [`bytes_equal`] elsewhere.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn bytes_equal(bytes: [u8; MAX_WAYS], b: u8) -> u16 {
    bytes.iter().enumerate().fold(0, |m, (i, &x)| m | u16::from(x == b) << i)
}

/// A tag with its 8-bit fingerprint, never 0 (the mark of an invalid way). Consecutive lines share
/// their tag until the set index wraps, so a run of lines computes it once per wrap.
#[derive(Debug, Clone, Copy)]
struct Key {
    tag: u32,
    fp: u8,
}

impl Key {
    #[inline(always)]
    fn new(tag: u32) -> Key {
        Key { tag, fp: ((tag.wrapping_mul(0x9E37_79B1) >> 24) as u8).max(1) }
    }
}

/// How a cache chooses the line to replace and ages the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// True LRU: ages are the ways' recency ranks (0 the most recent), a permutation of `0..ways`.
    Lru,
    /// QLRU_H11_M1_R0_U0 (\[AR20\]; nanoBench's simulator labels it the Coffee Lake L3 policy, which
    /// Abel and Reineke found in the fixed-policy sets of the Skylake-family L3s they measured). Each way
    /// has a 2-bit age, 3 the oldest; an empty set's ways are all 3. A hit sets age 3 or 2 to 1 and 1 to 0
    /// (H11); a miss fills the first invalid way, else the first way of age 3 (R0), with age 1 (M1);
    /// after every access, if no way has age 3, every age grows by the same amount until one has (U0).
    /// Fills restricted to some ways (DDIO) search those ways for age 3 and, finding none, age the whole
    /// set until one of them has it, as RRIP's victim search does (\[RRIP\]): an assumption, since no
    /// measurement of way-restricted fills has been published.
    Qlru,
    /// The adaptive L3 policy of \[AR20\]: fixed-policy leader sets run [`Policy::Qlru`] or a variant of
    /// it that fills at age 3 except one time in sixteen at age 1 (QLRU_H11_MR161_R0_U0 here; the
    /// `MR31` insertion of nanoBench's simulator), and the other sets follow the leaders that miss less
    /// (set dueling, \[DIP\]). uops.info's own wording for Ice Lake, "a variant of this policy that
    /// occasionally inserts new blocks with age 3 instead of age 1", can be read the other way round;
    /// the variants in nanoBench's simulator, against which the hardware was matched, all insert at the
    /// older age most of the time, as a thrash-resistant policy must. The QLRU_H11_M1_R0_U0 leaders are
    /// the sets uops.info lists for Ice Lake's L3: in every 1024 sets of each slice, those whose index
    /// bits 9..5 equal bits 4..0 with bit 1 clear (sets 0, 33, 132, 165, ...). Assumptions where
    /// nothing is published for these CPUs: the variant's leaders are the rest of that diagonal (bit 1
    /// set); each slice has its own 10-bit selector, as in \[DIP\], starting where the profile says
    /// ([`DuelStart`]; its midpoint unless told), moved by
    /// every fill (miss) of a leader set; followers fill as the variant while it is above the midpoint;
    /// the draws come from a fixed pseudo-random stream, so runs stay deterministic.
    QlruAdaptive,
}

/// The names [`Policy::from_str`](std::str::FromStr) accepts, in [`Policy`] order.
pub const POLICY_NAMES: &[&str] = &["lru", "qlru", "qlru-adaptive"];

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Policy, String> {
        by_name(s, POLICY_NAMES, &[Policy::Lru, Policy::Qlru, Policy::QlruAdaptive], "LLC policy")
    }
}

/// The value in `values` whose name in `names` (same order) is `s`, or an error listing the names.
fn by_name<T: Copy>(s: &str, names: &[&str], values: &[T], what: &str) -> Result<T, String> {
    let known = || format!("unknown {what} '{s}' (known: {})", names.join(", "));
    names.iter().position(|&n| n == s).map(|i| values[i]).ok_or_else(known)
}

/// Where [`Policy::QlruAdaptive`]'s selectors start: which policy its follower sets use before the
/// leaders' misses have moved them. Which runs tip depends on it (docs/model.md, "The LLC"), and no
/// measurement of a Skylake-SP L3 gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DuelStart {
    /// At the M1 end: followers fill as QLRU_H11_M1_R0_U0.
    M1,
    /// At the midpoint, set dueling's neutral start (\[DIP\]): followers fill as QLRU_H11_M1_R0_U0 until
    /// the first M1 leader miss tips their slice's selector over.
    #[default]
    Neutral,
    /// At the MR161 end: followers fill as the thrash-resistant QLRU_H11_MR161_R0_U0.
    Mr161,
}

/// The names [`DuelStart::from_str`](std::str::FromStr) accepts, in [`DuelStart`] order.
pub const DUEL_START_NAMES: &[&str] = &["m1", "neutral", "mr161"];

impl DuelStart {
    /// The selector value it stands for.
    fn selector(self) -> u16 {
        match self {
            DuelStart::M1 => 0,
            DuelStart::Neutral => PSEL_MAX / 2,
            DuelStart::Mr161 => PSEL_MAX,
        }
    }
}

impl std::str::FromStr for DuelStart {
    type Err = String;
    fn from_str(s: &str) -> Result<DuelStart, String> {
        by_name(s, DUEL_START_NAMES, &[DuelStart::M1, DuelStart::Neutral, DuelStart::Mr161], "selector start")
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Policy::Lru => "LRU",
            Policy::Qlru => "QLRU_H11_M1_R0_U0",
            Policy::QlruAdaptive => "adaptive QLRU_H11_M1_R0_U0 / QLRU_H11_MR161_R0_U0",
        })
    }
}

/// The oldest QLRU age: lines of this age are replaced first.
const QLRU_OLD: u8 = 3;
/// The age of a line QLRU fills (M1).
const QLRU_FILL: u8 = 1;
/// The largest value of a set-dueling selector (10 bits, \[DIP\]).
const PSEL_MAX: u16 = 1023;

/// Whether a slice's followers fill as QLRU_H11_MR161_R0_U0 at selector value `psel`: above the midpoint.
#[inline(always)]
fn follows_mr161(psel: u16) -> bool {
    psel > PSEL_MAX / 2
}

/// A set's part in set dueling ([`Policy::QlruAdaptive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Role {
    /// Always fills as QLRU_H11_M1_R0_U0; its misses count for the other policy.
    LeadsM1,
    /// Always fills as QLRU_H11_MR161_R0_U0; its misses count for the first.
    LeadsMr161,
    /// Fills as its slice's selector says.
    Follows,
}

impl Role {
    /// The role of the set indexed `in_slice` within its slice.
    #[inline(always)]
    fn of(in_slice: usize) -> Role {
        let (high, low) = (in_slice >> 5 & 31, in_slice & 31);
        match (high == low, low & 2 == 0) {
            (false, _) => Role::Follows,
            (true, true) => Role::LeadsM1,
            (true, false) => Role::LeadsMr161,
        }
    }
}

/// Set-dueling state of a [`Policy::QlruAdaptive`] cache.
#[derive(Debug, Clone)]
struct Duel {
    /// Per slice, the selector: a fill of a QLRU_H11_M1_R0_U0 leader counts up, one of an MR161 leader
    /// down; followers fill as MR161 while it is above the midpoint.
    psel: [u16; MAX_SLICES],
    /// State of the generator of MR161's one-in-sixteen draws: a 32-bit linear congruential generator
    /// (Numerical Recipes' constants), whose top four bits are the draw.
    rng: u32,
}

impl Duel {
    /// Selectors at `start`.
    fn new(start: DuelStart) -> Duel {
        Duel { psel: [start.selector(); MAX_SLICES], rng: 0x9E37_79B9 }
    }

    /// The age QLRU_H11_MR161_R0_U0 fills at: 1 one time in sixteen, else 3.
    #[inline(always)]
    fn mr161(&mut self) -> u8 {
        self.rng = self.rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        if self.rng >> 28 == 0 { QLRU_FILL } else { QLRU_OLD }
    }

    /// The age a fill of set `s` inserts at under `policy`, counting the fill if `s` leads.
    #[inline(always)]
    fn fill_age(&mut self, policy: Policy, s: &Set) -> u8 {
        if policy != Policy::QlruAdaptive {
            return QLRU_FILL;
        }
        let psel = &mut self.psel[usize::from(s.slice) & (MAX_SLICES - 1)];
        match s.role {
            Role::LeadsM1 => {
                *psel = (*psel + 1).min(PSEL_MAX);
                QLRU_FILL
            }
            Role::LeadsMr161 => {
                *psel = psel.saturating_sub(1);
                self.mr161()
            }
            Role::Follows if follows_mr161(*psel) => self.mr161(),
            Role::Follows => QLRU_FILL,
        }
    }
}

/// A replacement policy chosen when a cache is built ([`Policy`], the LLC's) or at compile time
/// ([`Lru`], the private caches'), so that the private caches' lookups compile to LRU alone.
pub trait Replacement: Copy + std::fmt::Debug {
    /// The policy.
    fn policy(self) -> Policy;
}

impl Replacement for Policy {
    #[inline(always)]
    fn policy(self) -> Policy {
        self
    }
}

/// [`Policy::Lru`], fixed at compile time.
#[derive(Debug, Clone, Copy)]
pub struct Lru;

impl Replacement for Lru {
    #[inline(always)]
    fn policy(self) -> Policy {
        Policy::Lru
    }
}

/// What a set's replacement needs from its cache, computed once.
#[derive(Debug, Clone, Copy)]
struct Repl<R> {
    policy: R,
    /// Mask of every way.
    all: u16,
    /// LRU: the rank of the least recently used way, `ways - 1`.
    oldest: u8,
}

/// Where a line sits: its set and way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Set index.
    pub set: u32,
    /// Way within the set.
    pub way: u32,
}

impl Slot {
    /// A dense index over all slots, for per-line side tables.
    #[inline]
    pub fn index(self) -> usize {
        self.set as usize * MAX_WAYS + self.way as usize
    }
}

/// A line pushed out of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Its line address (byte address / 64).
    pub line: u64,
    /// Whether it was dirty.
    pub dirty: bool,
    /// Flag A as it was.
    pub flag_a: bool,
}

/// A line found by [`SetAssoc::access`]: where it is and its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Its slot.
    pub slot: Slot,
    /// Whether it is dirty.
    pub dirty: bool,
    /// Flag A.
    pub flag_a: bool,
    /// Flag B.
    pub flag_b: bool,
}

/// Where a line that [`SetAssoc::access`] did not find goes: its set and key.
#[derive(Debug, Clone, Copy)]
pub struct Miss {
    set: usize,
    key: Key,
}

/// A line whose flag A was set when a [`SetAssoc::write_run`] updated or replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shootdown {
    /// Its line address.
    pub line: u64,
    /// The slot it was in.
    pub slot: Slot,
    /// If it was replaced, whether it was dirty; `None` if it was updated in place.
    pub replaced_dirty: Option<bool>,
}

/// The record and key of `line` under `p`.
#[inline(always)]
fn split<P: Placement>(p: &P, line: u64) -> (usize, Key) {
    let tag = line >> p.set_bits();
    debug_assert!(tag < u64::from(INVALID), "line {line:#x} does not fit a 32-bit tag");
    (p.record(line), Key::new(tag as u32))
}

/// The line address of the line tagged `tag` in record `record` under `p`.
#[inline(always)]
fn line_of<P: Placement>(p: &P, record: usize, tag: u32) -> u64 {
    (u64::from(tag) << p.set_bits()) | p.in_slice(record) as u64
}

/// The `n` lines from `first` as stretches of consecutive records that share a key under `p`, each
/// (first record, number of records, key).
#[inline(always)]
fn stretches<P: Placement>(p: &P, first: u64, n: u64) -> impl Iterator<Item = (usize, usize, Key)> + use<'_, P> {
    let block = 1u64 << p.run_bits();
    let (mut line, end) = (first, first + n);
    std::iter::from_fn(move || {
        (line < end).then(|| {
            let count = (end - line).min(block - (line & (block - 1)));
            let (record, key) = split(p, line);
            line += count;
            (record, count as usize, key)
        })
    })
}

/// A set-associative array of `sets` x `ways` lines, replacing by `R` and placing lines by `P`.
#[derive(Debug, Clone)]
pub struct SetAssoc<R: Replacement, P: Placement> {
    index: P,
    repl: Repl<R>,
    /// Boxed: the private caches never use it, and their metadata stays small.
    duel: Box<Duel>,
    sets: Vec<Set>,
}

impl Set {
    /// An empty set of `ways` ways under `policy`, with index `in_slice` in slice `slice`.
    fn empty(ways: usize, policy: Policy, slice: usize, in_slice: usize) -> Set {
        let age = std::array::from_fn(|w| match policy {
            Policy::Lru if w < ways => w as u8,
            Policy::Lru => u8::MAX,
            Policy::Qlru | Policy::QlruAdaptive => QLRU_OLD,
        });
        let (slice, role) = (slice as u8, Role::of(in_slice));
        Set { fp: [0; MAX_WAYS], age, valid: 0, dirty: 0, flag_a: 0, flag_b: 0, tags: [INVALID; MAX_WAYS], slice, role }
    }

    /// The way holding `k`, if any: the ways whose fingerprint matches, checked against the full tag.
    #[inline(always)]
    fn way_of(&self, k: Key) -> Option<u32> {
        let mut candidates = bytes_equal(self.fp, k.fp);
        while candidates != 0 {
            let w = candidates.trailing_zeros();
            if self.tags[w as usize & (MAX_WAYS - 1)] == k.tag {
                return Some(w);
            }
            candidates &= candidates - 1;
        }
        None
    }

    /// Drop the line in `way`; returns whether it was dirty. The way keeps its age (as a flush does in
    /// \[AR20\]'s simulator): an invalid way is filled first anyway.
    #[inline]
    fn drop_way(&mut self, way: u32) -> bool {
        let bit = 1u16 << way;
        let w = way as usize & (MAX_WAYS - 1);
        let dirty = self.dirty & bit != 0;
        // The fingerprint alone marks the way invalid (no key has fingerprint 0): its tag, in the
        // record's other host line, is left as it was.
        self.fp[w] = 0;
        self.valid &= !bit;
        self.dirty &= !bit;
        self.flag_a &= !bit;
        self.flag_b &= !bit;
        dirty
    }

    /// Age the set for a hit on `way`.
    #[inline(always)]
    fn hit<R: Replacement>(&mut self, way: u32, r: Repl<R>) {
        match r.policy.policy() {
            Policy::Lru => self.lru_touch(way),
            // H11: 3 and 2 become 1, 1 becomes 0.
            Policy::Qlru | Policy::QlruAdaptive => {
                self.qlru_age(way, self.age[way as usize & (MAX_WAYS - 1)] >> 1, r.all)
            }
        }
    }

    /// Make `way` the most recently used.
    #[inline(always)]
    fn lru_touch(&mut self, way: u32) {
        let age = &mut self.age;
        let a = age[way as usize & (MAX_WAYS - 1)];
        for x in age.iter_mut() {
            *x += u8::from(*x < a);
        }
        age[way as usize & (MAX_WAYS - 1)] = 0;
    }

    /// The highest QLRU age among the ways of `mask` (non-empty).
    #[inline(always)]
    fn qlru_max(&self, mask: u16) -> u8 {
        (1..=QLRU_OLD).rev().find(|&a| bytes_equal(self.age, a) & mask != 0).unwrap_or(0)
    }

    /// Give `way` age `age`, then apply U0: if no way of `all` has age 3, age every way by the same
    /// amount so that one has. Some way of a QLRU set always has age 3 (an empty set's are all 3, U0
    /// follows every access, and a victim search ages until one is), so only a way that was 3 can have
    /// taken the last 3 away.
    #[inline(always)]
    fn qlru_age(&mut self, way: u32, age: u8, all: u16) {
        let a = &mut self.age[way as usize & (MAX_WAYS - 1)];
        let was_old = *a == QLRU_OLD;
        *a = age;
        if was_old && age != QLRU_OLD && bytes_equal(self.age, QLRU_OLD) & all == 0 {
            let d = QLRU_OLD - self.qlru_max(all);
            self.age.iter_mut().for_each(|a| *a = a.wrapping_add(d));
        }
    }

    /// The way of `mask` (non-empty) to replace: an invalid one if there is one, else the policy's
    /// victim. QLRU may age the set to find it ([`Policy::Qlru`]).
    #[inline(always)]
    fn victim<R: Replacement>(&mut self, mask: u16, r: Repl<R>) -> u32 {
        let free = mask & !self.valid;
        if free != 0 {
            return free.trailing_zeros();
        }
        match r.policy.policy() {
            Policy::Lru => self.lru_victim(mask, r),
            Policy::Qlru | Policy::QlruAdaptive => self.qlru_victim(mask),
        }
    }

    /// The least recently used way of `mask`.
    ///
    /// The ages of a set's ways are always a permutation of `0..ways` (fills and touches keep it so), so
    /// the least recently used of all ways is the one aged `ways - 1`, the only byte of that value; a
    /// narrower mask (the DDIO ways) scans only its own ways.
    #[inline(always)]
    fn lru_victim<R: Replacement>(&self, mask: u16, r: Repl<R>) -> u32 {
        if mask == r.all {
            return bytes_equal(self.age, r.oldest).trailing_zeros();
        }
        let (mut rest, mut best) = (mask, (0u8, 0u32));
        while rest != 0 {
            let w = rest.trailing_zeros();
            rest &= rest - 1;
            let a = self.age[w as usize & (MAX_WAYS - 1)];
            if a >= best.0 {
                best = (a, w);
            }
        }
        best.1
    }

    /// R0 within `mask`: the first way of age 3, after ageing every way (saturating at 3) until one of
    /// `mask` has it.
    #[inline(always)]
    fn qlru_victim(&mut self, mask: u16) -> u32 {
        let old = bytes_equal(self.age, QLRU_OLD) & mask;
        if old != 0 {
            return old.trailing_zeros();
        }
        let d = QLRU_OLD - self.qlru_max(mask);
        self.age.iter_mut().for_each(|a| *a = a.saturating_add(d).min(QLRU_OLD));
        (bytes_equal(self.age, QLRU_OLD) & mask).trailing_zeros()
    }

    /// Fill `way` with `k` as the policy fills (QLRU: at age `age`), with both flags clear. Returns the
    /// tag it replaced with that line's dirty bit and flag A, if the way was valid.
    #[inline(always)]
    fn put<R: Replacement>(&mut self, way: u32, k: Key, dirty: bool, r: Repl<R>, age: u8) -> Option<(u32, bool, bool)> {
        let bit = 1u16 << way;
        let w = way as usize & (MAX_WAYS - 1);
        let old = (self.valid & bit != 0).then(|| (self.tags[w], self.dirty & bit != 0, self.flag_a & bit != 0));
        self.tags[w] = k.tag;
        self.fp[w] = k.fp;
        self.valid |= bit;
        self.dirty = (self.dirty & !bit) | if dirty { bit } else { 0 };
        self.flag_a &= !bit;
        self.flag_b &= !bit;
        match r.policy.policy() {
            Policy::Lru => self.lru_touch(way),
            Policy::Qlru | Policy::QlruAdaptive => self.qlru_age(way, age, r.all),
        }
        old
    }
}

impl<R: Replacement, P: Placement> SetAssoc<R, P> {
    /// An empty cache of `ways` ways (at most [`MAX_WAYS`]) replacing by `policy`, with the sets of
    /// `placement`.
    pub fn new(ways: usize, policy: R, placement: P) -> SetAssoc<R, P> {
        assert!((1..=MAX_WAYS).contains(&ways), "cache geometry checked by the profile");
        let p = policy.policy();
        let sets =
            (0..placement.sets()).map(|r| Set::empty(ways, p, placement.slice(r), placement.in_slice(r))).collect();
        let repl = Repl { policy, all: ((1u32 << ways) - 1) as u16, oldest: (ways - 1) as u8 };
        SetAssoc { index: placement, repl, duel: Box::new(Duel::new(DuelStart::default())), sets }
    }

    /// Start [`Policy::QlruAdaptive`]'s selectors at `start` (before the first access; other policies
    /// have none).
    pub fn start_duel(&mut self, start: DuelStart) {
        *self.duel = Duel::new(start);
    }

    /// The share of [`Policy::QlruAdaptive`]'s slices whose followers now fill as the thrash-resistant
    /// QLRU_H11_MR161_R0_U0, which makes a DMA-written line the first victim of its set (`None` under
    /// the other policies).
    pub fn followers_mr161(&self) -> Option<f64> {
        (self.repl.policy.policy() == Policy::QlruAdaptive).then(|| {
            let slices = (self.index.sets() >> self.index.set_bits()).clamp(1, MAX_SLICES);
            self.duel.psel[..slices].iter().filter(|&&p| follows_mr161(p)).count() as f64 / slices as f64
        })
    }

    /// Number of ways.
    pub fn ways(&self) -> usize {
        self.repl.all.count_ones() as usize
    }

    /// Lines the cache holds.
    pub fn lines(&self) -> u64 {
        (self.sets.len() * self.ways()) as u64
    }

    /// Mask of every way.
    pub fn all_ways(&self) -> u16 {
        self.repl.all
    }

    /// Start loading the record of `line`'s set into the host's caches, so that the lookups that follow
    /// find it there and several such loads overlap. (A plain load whose value goes to
    /// [`std::hint::black_box`]: a prefetch instruction would need `unsafe`.)
    #[inline(always)]
    pub fn preload(&self, line: u64) {
        std::hint::black_box(self.sets[self.index.record(line)].valid);
    }

    /// The slot holding `line`, if cached.
    #[inline(always)]
    pub fn find(&self, line: u64) -> Option<Slot> {
        let (set, tag) = split(&self.index, line);
        self.sets[set].way_of(tag).map(|way| Slot { set: set as u32, way })
    }

    /// Look `line` up and, if cached, age its set for the hit (LRU: make it the most recently used); if
    /// not, where to [`install`](Self::install) it.
    #[inline(always)]
    pub fn access(&mut self, line: u64) -> Result<Hit, Miss> {
        let (set, key) = split(&self.index, line);
        let s = &mut self.sets[set];
        let Some(way) = s.way_of(key) else { return Err(Miss { set, key }) };
        s.hit(way, self.repl);
        Ok(Hit {
            slot: Slot { set: set as u32, way },
            dirty: s.dirty >> way & 1 != 0,
            flag_a: s.flag_a >> way & 1 != 0,
            flag_b: s.flag_b >> way & 1 != 0,
        })
    }

    /// Put the line that `miss` missed in its set as the policy fills, with both flags clear, replacing
    /// a way of `mask` (non-empty): an invalid one if there is one, else the policy's victim. Returns its
    /// slot and the line it replaced.
    #[inline]
    pub fn install(&mut self, miss: Miss, mask: u16, dirty: bool) -> (Slot, Option<Evicted>) {
        let Miss { set, key } = miss;
        let s = &mut self.sets[set];
        let age = self.duel.fill_age(self.repl.policy.policy(), s);
        let way = s.victim(mask, self.repl);
        let old = s.put(way, key, dirty, self.repl, age).map(|(t, dirty, flag_a)| Evicted {
            line: line_of(&self.index, set, t),
            dirty,
            flag_a,
        });
        (Slot { set: set as u32, way }, old)
    }

    /// A DMA write of the `n` lines from `first`: each line cached is updated in place (made dirty and
    /// aged as a hit, both flags cleared); each other line is installed dirty among the ways of `mask`.
    /// With `mask` empty (DDIO off) no line is cached: the data goes to DRAM and a cached copy is
    /// dropped, as Intel's "classic" I/O mode writes incoming data to memory for the processor to read
    /// from there (intel.com, "Intel Data Direct I/O Technology").
    ///
    /// Lines whose flag A was set, updated, replaced or dropped, are pushed to `shootdowns` for the
    /// owner (whose private copies must go); their slots keep whatever the owner keeps per slot. Returns
    /// the number of hits, the lines found cached whether updated or (DDIO off) dropped, as the uncore
    /// counts a write's lookup (PCM's pcm-pcie "Hit" rows: the LLC's TOR inserts that hit), and the
    /// number of lines that go to DRAM: the uncached ones, and the dirty lines replaced other than
    /// those in `shootdowns`.
    #[inline]
    pub fn write_run(&mut self, first: u64, n: u64, mask: u16, shootdowns: &mut Vec<Shootdown>) -> (u64, u64) {
        let (index, repl, duel) = (&self.index, self.repl, &mut self.duel);
        let (mut hits, mut to_dram) = (0, 0);
        for (start, count, key) in stretches(index, first, n) {
            for (i, s) in self.sets[start..start + count].iter_mut().enumerate() {
                let set = start + i;
                if let Some(way) = s.way_of(key) {
                    let bit = 1u16 << way;
                    if s.flag_a & bit != 0 {
                        let line = line_of(index, set, key.tag);
                        shootdowns.push(Shootdown { line, slot: Slot { set: set as u32, way }, replaced_dirty: None });
                    }
                    hits += 1;
                    if mask == 0 {
                        // The whole line is written anew in DRAM: the cached copy, dirty or not, is dead.
                        s.drop_way(way);
                        to_dram += 1;
                        continue;
                    }
                    s.hit(way, repl);
                    s.dirty |= bit;
                    s.flag_a &= !bit;
                    s.flag_b &= !bit;
                } else if mask == 0 {
                    to_dram += 1;
                } else {
                    let age = duel.fill_age(repl.policy.policy(), s);
                    let way = s.victim(mask, repl);
                    match s.put(way, key, true, repl, age) {
                        Some((t, dirty, true)) => shootdowns.push(Shootdown {
                            line: line_of(index, set, t),
                            slot: Slot { set: set as u32, way },
                            replaced_dirty: Some(dirty),
                        }),
                        Some((_, dirty, false)) => to_dram += u64::from(dirty),
                        None => {}
                    }
                }
            }
        }
        (hits, to_dram)
    }

    /// How many of the `n` lines from `first` are not cached.
    #[inline]
    pub fn misses(&self, first: u64, n: u64) -> u64 {
        let sets = &self.sets;
        stretches(&self.index, first, n)
            .map(|(start, count, key)| sets[start..start + count].iter().filter(|s| s.way_of(key).is_none()).count())
            .sum::<usize>() as u64
    }

    /// Drop the line in `s`; returns whether it was dirty. Its way keeps its age, as a flush does in
    /// \[AR20\]'s simulator.
    #[inline]
    pub fn invalidate(&mut self, s: Slot) -> bool {
        self.sets[s.set as usize].drop_way(s.way)
    }

    /// Whether the line in `s` is dirty.
    #[inline(always)]
    pub fn dirty(&self, s: Slot) -> bool {
        self.sets[s.set as usize].dirty & (1 << s.way) != 0
    }

    /// Set or clear the dirty bit of `s`.
    #[inline(always)]
    pub fn set_dirty(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize];
        m.dirty = (m.dirty & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Flag A of `s`.
    #[inline(always)]
    pub fn flag_a(&self, s: Slot) -> bool {
        self.sets[s.set as usize].flag_a & (1 << s.way) != 0
    }

    /// Set or clear flag A of `s`.
    #[inline(always)]
    pub fn set_flag_a(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize];
        m.flag_a = (m.flag_a & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Flag B of `s`.
    #[inline(always)]
    pub fn flag_b(&self, s: Slot) -> bool {
        self.sets[s.set as usize].flag_b & (1 << s.way) != 0
    }

    /// Set or clear flag B of `s`.
    #[inline(always)]
    pub fn set_flag_b(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize];
        m.flag_b = (m.flag_b & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Set the dirty bit and both flags of `s` at once.
    #[inline(always)]
    pub fn set_state(&mut self, s: Slot, dirty: bool, flag_a: bool, flag_b: bool) {
        let m = &mut self.sets[s.set as usize];
        let bit = 1u16 << s.way;
        let put = |v: u16, on: bool| (v & !bit) | if on { bit } else { 0 };
        m.dirty = put(m.dirty, dirty);
        m.flag_a = put(m.flag_a, flag_a);
        m.flag_b = put(m.flag_b, flag_b);
    }

    /// Lines currently valid (for tests and reports).
    pub fn occupancy(&self) -> usize {
        self.sets.iter().map(|s| s.valid.count_ones() as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slices::{Modulo, Sliced};

    /// Install `line`, which is not cached.
    fn install<R: Replacement, P: Placement>(
        c: &mut SetAssoc<R, P>,
        line: u64,
        mask: u16,
        dirty: bool,
    ) -> (Slot, Option<Evicted>) {
        let miss = c.access(line).expect_err("not cached");
        c.install(miss, mask, dirty)
    }

    /// An LRU cache with sets indexed by the low line bits.
    fn lru(sets: usize, ways: usize) -> SetAssoc<Lru, Modulo> {
        SetAssoc::new(ways, Lru, Modulo::new(sets))
    }

    /// A cache of one slice with a policy chosen at run time.
    fn single(sets: usize, ways: usize, policy: Policy) -> SetAssoc<Policy, Modulo> {
        SetAssoc::new(ways, policy, Modulo::new(sets))
    }

    /// Lines that map to set 0 of a cache with `sets` sets.
    fn same_set(sets: u64, i: u64) -> u64 {
        i * sets
    }

    #[test]
    fn lru_replaces_the_least_recently_used_way() {
        let mut c = lru(4, 4);
        let all = c.all_ways();
        for i in 0..4 {
            let l = same_set(4, i);
            assert_eq!(install(&mut c, l, all, false).1, None);
        }
        // Touch line 0 again: line 1 is now the LRU.
        assert!(c.access(0).is_ok());
        let ev = install(&mut c, same_set(4, 9), all, false).1.unwrap();
        assert_eq!(ev.line, same_set(4, 1));
        assert!(c.find(same_set(4, 1)).is_none());
        assert!(c.find(0).is_some() && c.find(same_set(4, 9)).is_some());
        assert_eq!(c.occupancy(), 4);
    }

    #[test]
    fn masks_restrict_victims_and_dirty_lines_report_it() {
        let mut c = lru(2, 4);
        let high = 0b1100;
        for i in 0..3 {
            let (v, _) = install(&mut c, same_set(2, i), high, true);
            assert!(v.way >= 2);
        }
        // Three fills into two ways: the first line was evicted dirty.
        assert!(c.find(0).is_none());
        assert_eq!(c.occupancy(), 2);
        let s = c.find(same_set(2, 2)).unwrap();
        assert!(c.dirty(s));
        assert!(c.invalidate(s));
        assert!(c.find(same_set(2, 2)).is_none());
    }

    #[test]
    fn a_full_set_evicts_its_oldest_way_after_masked_fills_and_touches() {
        let mut c = lru(1, 4);
        let all = c.all_ways();
        for i in 0..4 {
            install(&mut c, i, all, false);
        }
        // Lines 4 and 5 replace the older of ways 2 and 3 each time; then line 1 is touched.
        install(&mut c, 4, 0b1100, true);
        install(&mut c, 5, 0b1100, false);
        let hit = c.access(1).unwrap();
        assert_eq!((hit.slot.way, hit.dirty, hit.flag_a, hit.flag_b), (1, false, false, false));
        // Recency is now 1, 5, 4, 0 (most recent first): the whole set's victim is line 0, then 4.
        assert_eq!(install(&mut c, 6, all, false).1.map(|e| e.line), Some(0));
        let ev = install(&mut c, 7, all, false).1.unwrap();
        assert_eq!((ev.line, ev.dirty), (4, true));
    }

    #[test]
    fn runs_wrap_around_the_set_index() {
        let mut c = lru(4, 2);
        let all = c.all_ways();
        let mut shootdowns = Vec::new();
        // Lines 2..6 fill sets 2, 3, 0, 1; a second write of 4..8 hits 4 and 5.
        assert_eq!(c.write_run(2, 4, all, &mut shootdowns), (0, 0));
        assert_eq!(c.write_run(4, 4, all, &mut shootdowns), (2, 0));
        assert!(shootdowns.is_empty());
        assert_eq!(c.misses(0, 8), 2);
        assert!(c.find(3).is_some_and(|s| s.set == 3 && c.dirty(s)));
        // Line 0 takes set 0's free way; line 8 then replaces line 4, the older, dirty: it goes to DRAM.
        assert_eq!(c.write_run(0, 1, all, &mut shootdowns), (0, 0));
        assert_eq!(c.write_run(8, 1, all, &mut shootdowns), (0, 1));
        assert!(c.find(4).is_none() && c.find(0).is_some());
    }

    #[test]
    fn line_addresses_round_trip_through_tags() {
        let mut c = lru(1024, 16);
        let all = c.all_ways();
        let line = 0x7f12_3456_789a_u64 >> 6;
        install(&mut c, line, all, false);
        for i in 1..16 {
            install(&mut c, line + i * 1024, all, false);
        }
        let ev = install(&mut c, line + 16 * 1024, all, false).1.unwrap();
        assert_eq!(ev.line, line);
    }

    /// Replay `seq` (one letter per line) on one 11-way QLRU set from empty, as \[AR20\]'s simulator does
    /// after a `wbinvd`; returns H for each hit and M for each miss.
    fn replay_qlru(seq: &str) -> (String, SetAssoc<Policy, Modulo>) {
        let mut c = single(1, 11, Policy::Qlru);
        let all = c.all_ways();
        let hits = seq
            .bytes()
            .map(|b| match c.access(u64::from(b)) {
                Ok(_) => 'H',
                Err(miss) => {
                    c.install(miss, all, false);
                    'M'
                }
            })
            .collect();
        (hits, c)
    }

    /// The ages of `c`'s first set, way by way, and the letter in each way.
    fn ages_and_lines(c: &SetAssoc<Policy, Modulo>) -> (Vec<u8>, String) {
        let s = &c.sets[0];
        let lines = (0..c.ways()).map(|w| char::from(s.tags[w] as u8)).collect();
        (s.age[..c.ways()].to_vec(), lines)
    }

    #[test]
    fn qlru_matches_nanobenchs_simulator_on_random_sequences() {
        // Expected hits and final state from nanoBench's cacheSim.py, QLRUSim with H11, M1, R0, U0 and
        // associativity 11 (the Skylake-SP L3's), for two random sequences over 16 and 13 lines.
        let cases = [
            (
                "BDGMLJEIDINKIDKJAGCGDOMCDNADNMOJFNHDGMGEEPDOAOPDPPLNFAHCAOMODIEPJOMJFOOJJBCGJNDO",
                "MMMMMMMMHHMMHHHHMHMHHMMHHHHHHHHHMHMHHHHMHMHHHHHHHHMHMHHMHHHHHMHHMHHHMHHHHMHMHMMH",
                [0, 1, 1, 0, 2, 2, 1, 2, 2, 1, 3],
                "JGCOMPNFBDA",
            ),
            (
                "BHIHKACGKEBBCCGEHBDJHKMBGKKCAGJKEKAJIJFEDEIFAAMEKDBDEIHMICFMIMEILLLEKLKIEKIJGHAD",
                "MMMHMMMMHMHHHHHHHHMMHHMHHHHHHHHHHHHHHHMHMHHHHHMHHHHHHHMHHMHHHHHHMHHHHHHHHHHMMHMH",
                [2, 2, 1, 1, 2, 2, 1, 1, 3, 1, 1],
                "JMIKGHAEFLD",
            ),
        ];
        for (seq, hits, ages, lines) in cases {
            let (got, c) = replay_qlru(seq);
            assert_eq!(got, hits, "{seq}");
            assert_eq!(ages_and_lines(&c), (ages.to_vec(), lines.to_string()), "{seq}");
        }
    }

    #[test]
    fn qlru_thrashes_on_a_cyclic_sweep_one_line_larger_than_the_set() {
        // Like LRU, the fixed policy misses on every access of a cyclic sweep of 12 lines through 11 ways
        // (the access pattern against which Intel's adaptive insertion guards); cacheSim.py agrees, ending
        // with ages [1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3] over lines 8..11, 1..7.
        let sweep: String = (0..4 * 12).map(|i| char::from(b'a' + i % 12)).collect();
        let (hits, c) = replay_qlru(&sweep);
        assert_eq!(hits, "M".repeat(48));
        assert_eq!(ages_and_lines(&c), (vec![1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3], "ijklbcdefgh".to_string()));
    }

    #[test]
    fn qlru_fills_restricted_to_some_ways_age_the_set_until_one_of_them_is_oldest() {
        let mut c = single(1, 4, Policy::Qlru);
        let (all, high) = (c.all_ways(), 0b1100);
        for l in 0..4 {
            install(&mut c, l, all, false);
        }
        // Four fills at age 1; after the fourth no way was 3, so all aged to 3.
        assert_eq!(c.sets[0].age[..4], [3, 3, 3, 3]);
        // Hits make lines 2 and 3 young (0) and line 0 middle-aged (1).
        for l in [2, 3, 2, 3, 0] {
            assert!(c.access(l).is_ok());
        }
        assert_eq!(c.sets[0].age[..4], [1, 3, 0, 0]);
        // A fill into ways 2 and 3 finds no age 3 there: the whole set ages by 3 (saturating), and way 2
        // is replaced, then filled at age 1, leaving line 0 at 3 as well.
        let (slot, ev) = install(&mut c, 4, high, true);
        assert_eq!((slot.way, ev.map(|e| e.line)), (2, Some(2)));
        assert_eq!(c.sets[0].age[..4], [3, 3, 1, 3]);
        // The next restricted fill takes way 3, the first of age 3 among the two.
        assert_eq!(install(&mut c, 5, high, true).0.way, 3);
    }

    #[test]
    fn sliced_sets_conflict_only_within_one_slice() {
        use crate::slices::{SKX_16, SKX_18};
        // The LLCs of the Xeon Silver 4216 and Gold 6140: 16 and 18 slices of 2048 sets, 11 ways.
        for hash in [SKX_16, SKX_18] {
            let mut c = SetAssoc::new(11, Lru, Sliced::new(hash.slices * 2048, Some(&hash)));
            let all = c.all_ways();
            let slice = |line: u64| hash.slice(line << 6);
            // Lines 2048 apart share their set within a slice; those in the same slice as line 7 conflict.
            let same: Vec<u64> = (0..).map(|i| 7 + i * 2048).filter(|&l| slice(l) == slice(7)).take(12).collect();
            for &l in &same[..11] {
                assert_eq!(install(&mut c, l, all, false).1, None);
            }
            assert_eq!(install(&mut c, same[11], all, false).1.map(|e| e.line), Some(same[0]));
            // Those in the other slices go elsewhere: 11 of each fill their slice's set, evicting none.
            for s in (0..hash.slices).filter(|&s| s != slice(7)) {
                for l in (0..).map(|i| 7 + i * 2048).filter(|&l| slice(l) == s).take(11) {
                    assert_eq!(install(&mut c, l, all, false).1, None, "{l:#x}");
                }
            }
            assert_eq!(c.occupancy(), hash.slices * 11);
        }
    }

    #[test]
    fn sliced_runs_find_every_line_and_line_addresses_round_trip() {
        use crate::slices::{SKX_16, SKX_18, SKX_28};
        for hash in [SKX_16, SKX_18, SKX_28] {
            let mut c = SetAssoc::new(11, Policy::Qlru, Sliced::new(hash.slices * 2048, Some(&hash)));
            let all = c.all_ways();
            // A run of 40 lines from the middle of a 1 KiB block (a packet's DMA write) in the arena's region
            // of simulated memory: every line is installed and found, in the record of its own slice and set.
            let first = (1u64 << 34) + 0x1234 * 16 + 5;
            assert_eq!(c.write_run(first, 40, all, &mut Vec::new()), (0, 0));
            assert_eq!(c.misses(first, 40), 0);
            assert_eq!(c.write_run(first, 40, all, &mut Vec::new()), (40, 0));
            for line in first..first + 40 {
                let s = c.find(line).expect("cached");
                assert_eq!(line_of(&c.index, s.set as usize, (line >> 11) as u32), line);
                assert_eq!(usize::from(c.sets[s.set as usize].slice), hash.slice(line << 6), "{line:#x}");
            }
            assert_eq!(c.occupancy(), 40);
        }
    }

    /// Sweep `lines` lines cyclically through every set of `c` (one slice), `rounds` times; returns the
    /// hits of the last round in the sets of each role.
    fn sweep_all_sets(c: &mut SetAssoc<Policy, Modulo>, sets: u64, lines: u64, rounds: u64) -> [(usize, usize); 3] {
        let all = c.all_ways();
        let mut last = [(0, 0); 3];
        for round in 0..rounds {
            for j in 0..lines {
                for set in 0..sets {
                    let hit = match c.access(set + j * sets) {
                        Ok(_) => true,
                        Err(miss) => {
                            c.install(miss, all, false);
                            false
                        }
                    };
                    if round == rounds - 1 {
                        let r = Role::of(set as usize) as usize;
                        last[r] = (last[r].0 + usize::from(hit), last[r].1 + 1);
                    }
                }
            }
        }
        last
    }

    #[test]
    fn adaptive_qlru_leads_with_the_sets_uops_info_lists() {
        let m1: Vec<usize> = (0..1024).filter(|&s| Role::of(s) == Role::LeadsM1).collect();
        assert_eq!(m1, [0, 33, 132, 165, 264, 297, 396, 429, 528, 561, 660, 693, 792, 825, 924, 957]);
        assert_eq!((0..2048).filter(|&s| Role::of(s) == Role::LeadsMr161).count(), 32);
    }

    #[test]
    fn adaptive_qlru_resists_a_sweep_slightly_larger_than_the_set() {
        // 12 lines per 11-way set, cyclically: the M1 leaders miss every access (as fixed QLRU and LRU do),
        // their misses push the selector to MR161's end, and the MR161 leaders and the followers keep most of
        // the sweep (about 10 of 12 lines in nanoBench's simulator of MR161 alone).
        let mut c = single(1024, 11, Policy::QlruAdaptive);
        let [m1, mr161, follow] = sweep_all_sets(&mut c, 1024, 12, 8);
        assert_eq!(m1.0, 0, "{m1:?}");
        assert!(mr161.0 * 10 > mr161.1 * 7, "{mr161:?}");
        assert!(follow.0 * 10 > follow.1 * 7, "{follow:?}");
        assert!(c.duel.psel[0] > PSEL_MAX - 16, "{}", c.duel.psel[0]);
    }

    #[test]
    fn adaptive_qlru_followers_start_where_the_selectors_start() {
        // Set 1 follows. Before any leader miss: M1's age from the M1 end and the midpoint (the selector
        // must pass it), mostly MR161's oldest age from the MR161 end.
        let old_fills = |start| {
            let mut c = single(1024, 11, Policy::QlruAdaptive);
            c.start_duel(start);
            assert_eq!(Role::of(1), Role::Follows);
            let (duel, sets) = (&mut c.duel, &c.sets);
            (0..64).filter(|_| duel.fill_age(Policy::QlruAdaptive, &sets[1]) == QLRU_OLD).count()
        };
        assert_eq!(old_fills(DuelStart::M1), 0);
        assert_eq!(old_fills(DuelStart::Neutral), 0);
        assert!((56..64).contains(&old_fills(DuelStart::Mr161)), "{}", old_fills(DuelStart::Mr161));
        assert_eq!("mr161".parse::<DuelStart>(), Ok(DuelStart::Mr161));
        assert!("mid".parse::<DuelStart>().is_err());
    }

    #[test]
    fn adaptive_qlru_keeps_m1_when_the_working_set_fits() {
        // 11 lines per 11-way set: after the first round every access hits; both kinds of leader filled
        // equally often, so the selector is back at its midpoint, where followers fill as M1.
        let mut c = single(1024, 11, Policy::QlruAdaptive);
        let hits = sweep_all_sets(&mut c, 1024, 11, 3);
        assert!(hits.iter().all(|&(h, n)| h == n), "{hits:?}");
        assert_eq!(c.duel.psel[0], PSEL_MAX / 2);
    }
}
