//! The base sequence of McCalpin's slice hash for Xeon Scalable processors (Skylake-SP, Cascade Lake)
//! with 20 LLC slices (\[McC21\] in [`super`]): the slice of each of the 256 lines from physical address 0,
//! transcribed from `Results/BaseSequence_SKX_20-slice.tbl` of github.com/jdmccalpin/Intel_Address_Hash
//! (commit 88912eaffa83), in rows of 32 lines.

/// Entry `i`: the slice of the line at physical address `64 * i`.
#[rustfmt::skip]
pub(super) const BASE: [u8; 256] = [
    0, 11, 2, 9, 7, 12, 5, 14, 1, 10, 3, 8, 6, 13, 4, 15, 1, 10, 3, 8, 6, 13, 4, 15, 0, 11, 18, 17, 7, 12, 17, 18,
    8, 3, 10, 1, 15, 4, 13, 6, 9, 2, 19, 16, 14, 5, 16, 19, 9, 2, 11, 0, 14, 5, 12, 7, 8, 3, 18, 17, 15, 4, 17, 18,
    10, 1, 8, 3, 13, 6, 15, 4, 11, 0, 9, 2, 12, 7, 14, 5, 11, 0, 9, 2, 12, 7, 14, 5, 18, 17, 8, 3, 17, 18, 15, 4,
    2, 9, 0, 11, 5, 14, 7, 12, 19, 16, 1, 10, 16, 19, 6, 13, 3, 8, 1, 10, 4, 15, 6, 13, 18, 17, 0, 11, 17, 18, 7, 12,
    4, 15, 6, 13, 3, 8, 1, 10, 5, 14, 7, 12, 2, 9, 0, 11, 5, 14, 7, 12, 2, 9, 0, 11, 16, 19, 6, 13, 19, 16, 1, 10,
    12, 7, 14, 5, 11, 0, 9, 2, 17, 18, 15, 4, 18, 17, 8, 3, 13, 6, 15, 4, 10, 1, 8, 3, 16, 19, 14, 5, 19, 16, 9, 2,
    14, 5, 12, 7, 9, 2, 11, 0, 15, 4, 13, 6, 8, 3, 10, 1, 15, 4, 13, 6, 8, 3, 10, 1, 14, 5, 16, 19, 9, 2, 19, 16,
    6, 13, 4, 15, 1, 10, 3, 8, 7, 12, 17, 18, 0, 11, 18, 17, 7, 12, 5, 14, 0, 11, 2, 9, 6, 13, 16, 19, 1, 10, 19, 16,
];
