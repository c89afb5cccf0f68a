//! A bucket's tags: 16 bits of each slot's hash, four to a word, the whole
//! bucket in one 64-byte line. A probe compares four tags per load, with
//! word arithmetic (SWAR) instead of a loop over slots, and reads a slot's
//! own lines only when its tag matches or is still 0 (the slot is empty or
//! being claimed). A tag is never 0, so 0 means "no name published here".

use crate::sync::{const_fn, zeroed, AtomicU64, Ordering};

/// Tags per word.
const LANES: usize = 4;
/// Words per bucket: one cache line.
const WORDS: usize = 8;
/// Slots per bucket.
pub(crate) const BUCKET: usize = LANES * WORDS;

const LOW_BITS: u64 = 0x7fff_7fff_7fff_7fff;
const HIGH_BIT: u64 = 0x8000_8000_8000_8000;
const ONES: u64 = 0x0001_0001_0001_0001;

/// The tags of one bucket of slots.
#[repr(align(64))]
pub(crate) struct Tags([AtomicU64; WORDS]);

impl Tags {
    const_fn! {
        /// No tag published.
        pub(crate) fn new() -> Tags {
            Tags(zeroed())
        }
    }

    /// The tag of a name's hash: bits that neither pick its home bucket nor
    /// its stride, never 0.
    pub(crate) fn of(hash: u64) -> u16 {
        (hash >> 32) as u16 | 1
    }

    /// Publishes `tag` for the bucket's slot `at`, whose tag is still 0.
    pub(crate) fn publish(&self, at: usize, tag: u16) {
        self.0[at / LANES].fetch_or((tag as u64) << (16 * (at % LANES)), Ordering::Release);
    }

    /// The slots of the bucket (0..BUCKET, in order) whose tag is `tag` or
    /// still 0: the only ones that may hold the name or be empty.
    #[inline]
    pub(crate) fn candidates(&self, tag: u16) -> Lanes<'_, true> {
        self.lanes(tag)
    }

    /// The slots of the bucket (in order) whose tag is `tag`, up to the
    /// first slot with no tag: where a published name usually is (one may
    /// lie past a slot whose claimer has not published its tag yet).
    #[inline]
    pub(crate) fn matches(&self, tag: u16) -> Lanes<'_, false> {
        self.lanes(tag)
    }

    #[inline]
    fn lanes<const CANDIDATES: bool>(&self, tag: u16) -> Lanes<'_, CANDIDATES> {
        Lanes {
            words: &self.0,
            wanted: tag as u64 * ONES,
            next_word: 0,
            lanes: 0,
            first: 0,
        }
    }
}

/// See [`Tags::candidates`] (`CANDIDATES`) and [`Tags::matches`]: one
/// word's lanes at a time, lowest first.
pub(crate) struct Lanes<'a, const CANDIDATES: bool> {
    words: &'a [AtomicU64; WORDS],
    wanted: u64,
    /// The next word to read; `WORDS` once `matches` met an untagged lane.
    next_word: usize,
    /// The lanes of the word last read not yet returned.
    lanes: u64,
    /// The slot of that word's first lane.
    first: usize,
}

impl<const CANDIDATES: bool> Iterator for Lanes<'_, CANDIDATES> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.lanes == 0 {
            let word = self.words.get(self.next_word)?;
            let bits = word.load(Ordering::Acquire);
            let untagged = zero_lanes(bits);
            let matching = zero_lanes(bits ^ self.wanted);
            self.first = self.next_word * LANES;
            if CANDIDATES {
                self.lanes = matching | untagged;
                self.next_word += 1;
            } else {
                // The lanes below the first untagged one (all when none is).
                let before = (untagged & untagged.wrapping_neg()).wrapping_sub(1);
                self.lanes = matching & before;
                self.next_word = if untagged == 0 {
                    self.next_word + 1
                } else {
                    WORDS
                };
            }
        }
        let lane = self.lanes.trailing_zeros() as usize / 16;
        self.lanes &= self.lanes - 1;
        Some(self.first + lane)
    }
}

/// The top bit of each 16-bit lane of `v` that is 0, exactly: adding 0x7fff
/// to a lane's low 15 bits sets its top bit unless they are all 0, and no
/// carry crosses into the next lane.
fn zero_lanes(v: u64) -> u64 {
    !(((v & LOW_BITS) + LOW_BITS) | v) & HIGH_BIT
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn zero_lanes_are_exact_whatever_their_neighbours_hold() {
        for (v, zero) in [
            (0u64, HIGH_BIT),
            (u64::MAX, 0),
            (0x0001_0000_8000_0000, 0x0000_8000_0000_8000),
            (0xffff_0000_0001_0000, 0x0000_8000_0000_8000),
            (0x0000_ffff_0000_7fff, 0x8000_0000_8000_0000),
        ] {
            assert_eq!(zero_lanes(v), zero, "{v:#x}");
        }
    }

    #[test]
    fn candidates_are_the_matching_and_the_unpublished_slots_in_order() {
        let tags = Tags::new();
        let all: Vec<usize> = tags.candidates(7).collect();
        assert_eq!(all, (0..BUCKET).collect::<Vec<_>>());
        for at in 0..BUCKET {
            tags.publish(at, if at % 5 == 0 { 7 } else { 9 });
        }
        let sevens: Vec<usize> = tags.candidates(7).collect();
        assert_eq!(sevens, [0, 5, 10, 15, 20, 25, 30]);
        assert_eq!(tags.candidates(3).count(), 0);
    }

    #[test]
    fn matches_stop_at_the_first_untagged_slot() {
        let tags = Tags::new();
        assert_eq!(tags.matches(7).count(), 0);
        for at in [0, 2, 3, 6, 9] {
            tags.publish(at, 7);
        }
        tags.publish(1, 9);
        tags.publish(5, 9);
        tags.publish(4, 9);
        // Slot 7 has no tag yet: slot 9 is not read.
        assert_eq!(tags.matches(7).collect::<Vec<_>>(), [0, 2, 3, 6]);
        for at in (7..BUCKET).filter(|&at| at != 9) {
            tags.publish(at, if at == 31 { 7 } else { 9 });
        }
        assert_eq!(tags.matches(7).collect::<Vec<_>>(), [0, 2, 3, 6, 9, 31]);
        assert_eq!(tags.matches(9).count(), BUCKET - 6);
    }
}
