//! `PointTable`: point names to points, in storage the caller provides.
//!
//! Open addressing with linear probing over a fixed number of slots. A slot
//! goes empty -> claimed -> ready exactly once and is never freed, so a
//! lookup of a ready name is wait-free; a lookup that meets a slot being
//! claimed waits for the claimer's few stores (the name may be its own).

use crate::entry::{Entry, Flags, Outcome};
use crate::error::Error;
use crate::point::{Point, Stats};
use crate::strategy::Strategy;
use crate::sync::{const_fn, spin, zeroed, AtomicU32, AtomicU64, Ordering};

/// The longest point name, in bytes. Names are bytes: any byte, UTF-8 or
/// not, is allowed; SDS point names are short dotted identifiers.
pub const MAX_NAME_LEN: usize = 256;
/// The largest table capacity.
pub const MAX_CAPACITY: usize = 1 << 20;

const NAME_WORDS: usize = MAX_NAME_LEN / 8;
const EMPTY: u32 = 0;
const CLAIMED: u32 = 1;
const READY: u32 = 2;

/// The index of a point in its table: a handle that skips the name lookup.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointId(pub(crate) u32);

impl PointId {
    /// The index.
    pub const fn index(self) -> u32 {
        self.0
    }

    /// The id with this index (checked against the table when used).
    pub const fn from_index(index: u32) -> PointId {
        PointId(index)
    }
}

/// One slot of a table: a name and its point.
pub struct Slot {
    state: AtomicU32,
    len: AtomicU32,
    hash: AtomicU64,
    name: [AtomicU64; NAME_WORDS],
    point: Point,
}

impl Slot {
    const_fn! {
        /// An empty slot.
        pub fn new() -> Slot {
            Slot {
                state: AtomicU32::new(EMPTY),
                len: AtomicU32::new(0),
                hash: AtomicU64::new(0),
                name: zeroed(),
                point: Point::new(),
            }
        }
    }

    fn holds(&self, hash: u64, name: &[u8]) -> bool {
        if self.hash.load(Ordering::Relaxed) != hash
            || self.len.load(Ordering::Relaxed) as usize != name.len()
        {
            return false;
        }
        let whole = name.chunks_exact(8);
        let tail = whole.remainder();
        let mut words = self.name.iter();
        whole
            .zip(&mut words)
            .all(|(chunk, word)| word.load(Ordering::Relaxed) == full_word(chunk))
            && (tail.is_empty()
                || words
                    .next()
                    .is_some_and(|word| word.load(Ordering::Relaxed) == tail_word(tail)))
    }

    fn fill(&self, hash: u64, name: &[u8]) {
        for (chunk, word) in name.chunks(8).zip(self.name.iter()) {
            word.store(pack_word(chunk), Ordering::Relaxed);
        }
        self.len.store(name.len() as u32, Ordering::Relaxed);
        self.hash.store(hash, Ordering::Relaxed);
        self.state.store(READY, Ordering::Release);
    }

    /// The state once it is no longer being claimed.
    fn settled_state(&self) -> u32 {
        loop {
            let state = self.state.load(Ordering::Acquire);
            if state != CLAIMED {
                return state;
            }
            spin();
        }
    }
}

impl Default for Slot {
    fn default() -> Slot {
        Slot::new()
    }
}

/// Up to 8 bytes as a little-endian word, zero-padded.
fn pack_word(chunk: &[u8]) -> u64 {
    if chunk.len() == 8 {
        full_word(chunk)
    } else {
        tail_word(chunk)
    }
}

/// Exactly 8 bytes as a little-endian word.
fn full_word(chunk: &[u8]) -> u64 {
    chunk.try_into().map_or(0, u64::from_le_bytes)
}

/// 0 to 7 bytes as a little-endian word, zero-padded: two overlapping loads
/// OR-ed together (the shared bytes are the same in both), not a loop.
fn tail_word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let at = |i: usize, width: usize| -> u64 {
        bytes[i..i + width]
            .iter()
            .rev()
            .fold(0, |w, &b| (w << 8) | b as u64)
    };
    match n {
        0 => 0,
        1 => bytes[0] as u64,
        2..=3 => at(0, 2) | at(n - 2, 2) << ((n - 2) * 8),
        _ => at(0, 4) | at(n - 4, 4) << ((n - 4) * 8),
    }
}

/// A multiply-xorshift over the name's 8-byte words: a few multiplies for a
/// typical point name instead of one per byte, no allocation, no seed to
/// carry. The final fold mixes the high bits into the low ones, which pick
/// the home slot.
fn hash(name: &[u8]) -> u64 {
    let mix = |h: u64, word: u64| {
        let h = (h ^ word).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 29)
    };
    let whole = name.chunks_exact(8);
    let tail = whole.remainder();
    let mut h = whole.fold(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64, |h, chunk| {
        mix(h, full_word(chunk))
    });
    if !tail.is_empty() {
        h = mix(h, tail_word(tail));
    }
    h ^ (h >> 32)
}

fn check_name(name: &[u8]) -> Result<(), Error> {
    match name.len() {
        0 => Err(Error::EmptyName),
        n if n > MAX_NAME_LEN => Err(Error::NameTooLong),
        _ => Ok(()),
    }
}

/// Checks a table capacity (1 to [`MAX_CAPACITY`]): lets a binding refuse it
/// before it allocates the slots.
pub const fn check_capacity(capacity: usize) -> Result<(), Error> {
    if capacity == 0 || capacity > MAX_CAPACITY {
        Err(Error::InvalidCapacity)
    } else {
        Ok(())
    }
}

/// Names to points over caller storage (`Box<[Slot]>`, `Vec<Slot>`, an array,
/// a static). Capacity is the storage's length, 1 to [`MAX_CAPACITY`].
pub struct PointTable<S> {
    slots: S,
    len: AtomicU32,
}

impl<S: AsRef<[Slot]>> PointTable<S> {
    /// A table over `storage`, whose slots should be fresh.
    pub fn new(storage: S) -> Result<PointTable<S>, Error> {
        check_capacity(storage.as_ref().len())?;
        Ok(PointTable {
            slots: storage,
            len: AtomicU32::new(0),
        })
    }

    /// How many points fit.
    pub fn capacity(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// How many points exist.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire) as usize
    }

    /// Whether no point exists yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The point named `name`, if it exists.
    pub fn lookup(&self, name: &[u8]) -> Result<Option<PointId>, Error> {
        check_name(name)?;
        let h = hash(name);
        for index in self.probe_order(h) {
            let slot = &self.slots.as_ref()[index];
            match slot.settled_state() {
                EMPTY => return Ok(None),
                _ if slot.holds(h, name) => return Ok(Some(PointId(index as u32))),
                _ => {}
            }
        }
        Ok(None)
    }

    /// The point named `name`, created if needed; [`Error::TableFull`] when it
    /// does not exist and no slot is free. An existing name costs loads only:
    /// a slot is claimed by compare-and-swap only when it is seen empty.
    pub fn insert(&self, name: &[u8]) -> Result<PointId, Error> {
        check_name(name)?;
        let h = hash(name);
        for index in self.probe_order(h) {
            let slot = &self.slots.as_ref()[index];
            let mut state = slot.settled_state();
            if state == EMPTY {
                match slot.state.compare_exchange(
                    EMPTY,
                    CLAIMED,
                    Ordering::Acquire,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {
                        slot.fill(h, name);
                        self.len.fetch_add(1, Ordering::AcqRel);
                        return Ok(PointId(index as u32));
                    }
                    Err(_) => state = slot.settled_state(),
                }
            }
            if state == READY && slot.holds(h, name) {
                return Ok(PointId(index as u32));
            }
        }
        Err(Error::TableFull)
    }

    /// Slots from the name's home slot on, wrapping once around the table.
    fn probe_order(&self, h: u64) -> impl Iterator<Item = usize> {
        let capacity = self.capacity();
        // Multiply-shift maps the hash onto 0..capacity without a division.
        let home = ((h as u128 * capacity as u128) >> 64) as usize;
        (home..capacity).chain(0..home)
    }

    /// The point with this id; [`Error::InvalidEntry`] if out of range or
    /// not created.
    pub fn point(&self, id: PointId) -> Result<&Point, Error> {
        match self.slots.as_ref().get(id.0 as usize) {
            Some(slot) if slot.state.load(Ordering::Acquire) == READY => Ok(&slot.point),
            _ => Err(Error::InvalidEntry),
        }
    }

    /// Enters the point named `name` (created if needed).
    pub fn enter(&self, name: &[u8], now_ms: u64, flags: Flags) -> Result<Entry, Error> {
        self.enter_point(self.insert(name)?, now_ms, flags)
    }

    /// Enters the point with this id.
    pub fn enter_point(&self, id: PointId, now_ms: u64, flags: Flags) -> Result<Entry, Error> {
        let mut entry = self.point(id)?.enter(now_ms, flags);
        entry.point = id.0;
        Ok(entry)
    }

    /// Exits an entry of this table.
    pub fn exit(&self, entry: &Entry, now_ms: u64, outcome: Outcome) -> Result<(), Error> {
        self.exit_with(entry, outcome, || now_ms)
    }

    /// Exits an entry, asking `clock` for the time only if the exit uses it
    /// (see [`Point::exit_with`]).
    pub fn exit_with(
        &self,
        entry: &Entry,
        outcome: Outcome,
        clock: impl FnOnce() -> u64,
    ) -> Result<(), Error> {
        self.point(entry.point())?.exit_with(entry, outcome, clock);
        Ok(())
    }

    /// Sets the strategy of `name` (created if needed). Nothing changes if the
    /// strategy is invalid or the table is full.
    pub fn set_strategy(&self, name: &[u8], strategy: &Strategy) -> Result<PointId, Error> {
        strategy.validate()?;
        let id = self.insert(name)?;
        self.point(id)?.set_strategy(Some(strategy))?;
        Ok(id)
    }

    /// Removes the strategy of `name`; its counters stay.
    pub fn remove_strategy(&self, name: &[u8]) -> Result<(), Error> {
        if let Some(id) = self.lookup(name)? {
            self.point(id)?.set_strategy(None)?;
        }
        Ok(())
    }

    /// The stats of `name` at `now_ms`; all zero for a point never entered.
    pub fn stats(&self, name: &[u8], now_ms: u64) -> Result<Stats, Error> {
        Ok(match self.lookup(name)? {
            Some(id) => self.point(id)?.stats(now_ms),
            None => Stats::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_packs_like_a_zero_padded_little_endian_word() {
        let bytes = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77];
        for n in 0..=7 {
            let mut padded = [0u8; 8];
            padded[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(
                tail_word(&bytes[..n]),
                u64::from_le_bytes(padded),
                "{n} bytes"
            );
        }
    }

    #[test]
    fn names_of_every_length_differing_in_any_byte_are_distinct() {
        let slots: [Slot; 32] = core::array::from_fn(|_| Slot::new());
        let table = PointTable::new(&slots[..]).unwrap();
        let base = [b'a'; 20];
        for len in 1..=20 {
            let id = table.insert(&base[..len]).unwrap();
            for at in 0..len {
                let mut other = base;
                other[at] = b'b';
                assert_eq!(
                    table.lookup(&other[..len]),
                    Ok(None),
                    "len {len}, byte {at}"
                );
            }
            assert_eq!(table.lookup(&base[..len]), Ok(Some(id)), "len {len}");
        }
    }
}
