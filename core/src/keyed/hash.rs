//! A key's 64-bit hash, its two candidate buckets and its 48-bit
//! fingerprint (the only thing a cell keeps of the key).

/// Bits of a fingerprint.
pub(crate) const FINGERPRINT_BITS: u32 = 48;

/// A multiply-xorshift over the key's little-endian 8-byte words, seeded
/// with its length; the last, partial word is read byte by byte.
pub(crate) fn hash(key: &[u8]) -> u64 {
    const K: u64 = 0x9fb2_1c65_1e98_df25;
    let mut h = 0x6a09_e667_f3bc_c909 ^ (key.len() as u64).wrapping_mul(K);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]);
        h = (h ^ w).wrapping_mul(K).rotate_left(31);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let w = rest
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, &b)| w | (b as u64) << (8 * i));
        h = (h ^ w).wrapping_mul(K).rotate_left(31);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(K);
    h ^ (h >> 29)
}

/// The fingerprint of a hash: 48 bits remixed from all 64, never 0 (0 marks
/// an empty cell).
#[inline]
pub(crate) fn fingerprint(h: u64) -> u64 {
    let f = (h ^ (h >> 23)).wrapping_mul(0xd6e8_feb8_6659_fd93) >> (64 - FINGERPRINT_BITS);
    f.max(1)
}

/// The key's two candidate buckets among `buckets` (the same one when there
/// is only one): the first from the hash's high bits, the second a stride
/// away taken from its low bits.
#[inline]
pub(crate) fn buckets_of(h: u64, buckets: usize) -> (usize, usize) {
    let first = ((h as u128 * buckets as u128) >> 64) as usize;
    if buckets < 2 {
        return (first, first);
    }
    let stride = 1 + (((h & 0xffff_ffff) * (buckets as u64 - 1)) >> 32) as usize;
    let second = first + stride;
    (
        first,
        if second >= buckets {
            second - buckets
        } else {
            second
        },
    )
}
