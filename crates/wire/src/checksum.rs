//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624), for rewriting headers in place.
//!
//! A header field change from `m` to `m'` updates a checksum `HC` to `HC' = ~(~HC + ~m + m')`
//! (RFC 1624, eqn. 3), which, unlike eqn. 2 of RFC 1141, never yields the 0xFFFF/0x0000 ambiguity.

/// One's-complement sum of `data` as big-endian 16-bit words (an odd last byte is padded with zero),
/// added to `initial`, not yet folded.
pub fn sum(data: &[u8], initial: u32) -> u32 {
    let mut acc = u64::from(initial);
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    fold64(acc)
}

fn fold64(mut acc: u64) -> u32 {
    while acc > 0xFFFF_FFFF {
        acc = (acc & 0xFFFF_FFFF) + (acc >> 32);
    }
    acc as u32
}

/// Fold a 32-bit one's-complement accumulator to 16 bits.
pub fn fold(mut acc: u32) -> u16 {
    while acc > 0xFFFF {
        acc = (acc & 0xFFFF) + (acc >> 16);
    }
    acc as u16
}

/// The Internet checksum of `data` (RFC 1071): the complement of its folded one's-complement sum.
pub fn checksum(data: &[u8]) -> u16 {
    !fold(sum(data, 0))
}

/// Update checksum `csum` for a 16-bit field changing from `old` to `new` (RFC 1624, eqn. 3).
#[inline]
pub fn update16(csum: u16, old: u16, new: u16) -> u16 {
    !fold(u32::from(!csum) + u32::from(!old) + u32::from(new))
}

/// Update checksum `csum` for a 32-bit field (two adjacent 16-bit words) changing from `old` to `new`.
#[inline]
pub fn update32(csum: u16, old: u32, new: u32) -> u16 {
    update16(update16(csum, (old >> 16) as u16, (new >> 16) as u16), old as u16, new as u16)
}

/// Sum of the IPv4 pseudo-header (RFC 768, RFC 9293 §3.1) for an L4 segment of `l4_len` bytes.
pub fn ipv4_pseudo_sum(src: [u8; 4], dst: [u8; 4], proto: u8, l4_len: u16) -> u32 {
    let s = sum(&src, 0);
    let s = sum(&dst, s);
    s + u32::from(proto) + u32::from(l4_len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum(&data, 0)), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    proptest! {
        #[test]
        fn incremental_equals_recompute(mut data in proptest::collection::vec(any::<u8>(), 2..64),
                                        at in any::<usize>(), new in any::<u16>()) {
            let i = (at % (data.len() / 2)) * 2;
            let before = checksum(&data);
            let old = u16::from_be_bytes([data[i], data[i + 1]]);
            data[i..i + 2].copy_from_slice(&new.to_be_bytes());
            let after = checksum(&data);
            // Both are the same one's-complement value; 0x0000 and 0xFFFF are the two zeros.
            let inc = update16(before, old, new);
            prop_assert!(inc == after || (inc ^ after) == 0xFFFF && (inc == 0 || after == 0), "{inc:#x} {after:#x}");
        }
    }
}
