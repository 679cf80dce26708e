//! Fast non-cryptographic hashing of words and byte strings, shared by the traffic generators and the apps
//! (a key-value client must partition keys exactly as the server does).

/// Mix two words into a 64-bit hash (the folded 128-bit multiply of wyhash's `wymix`).
#[inline]
pub fn mix(a: u64, b: u64) -> u64 {
    let m = u128::from(a ^ 0xa076_1d64_78bd_642f) * u128::from(b ^ 0xe703_7ed1_a0b4_28db);
    let h = (m as u64) ^ ((m >> 64) as u64);
    // A second round so that every input bit reaches the high bits used as tags.
    let m = u128::from(h ^ 0x8ebc_6af0_9c88_c6e3) * u128::from(0x5899_65cc_7537_4cc3u64);
    (m as u64) ^ ((m >> 64) as u64)
}

/// Hash any byte string (keys of the key-value store, names of Maglev backends).
pub fn hash_bytes(data: &[u8], seed: u64) -> u64 {
    let mut h = mix(seed, data.len() as u64);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        h = mix(h, u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    mix(h, u64::from_le_bytes(tail))
}
