//! `PointTable`: point names to points, in storage the caller provides.
//!
//! Open addressing over a fixed number of slots. A slot goes empty ->
//! claimed -> ready exactly once and is never freed or moved, so a point's
//! index is its id for the table's life, a lookup of a ready name is
//! wait-free, and a lookup that meets a slot being claimed waits for the
//! claimer's few stores (the name may be its own).
//!
//! Every lookup and insert is bounded, whatever the table holds. Slots are
//! grouped in buckets of 32 consecutive slots; the first slot of each
//! bucket also carries the bucket's tags (16 bits of each slot's hash, see
//! `tags.rs`) in one 64-byte line, so a probe reads one line per bucket and
//! a slot's own lines only when its tag matches or it is still empty. A name
//! may live in `PROBE_BUCKETS` (8) buckets: its home bucket, then a stride
//! taken from its hash (double hashing, so that names sharing a home bucket
//! part ways at once). An insert takes the first empty slot in that order;
//! when all 256 are taken it fails with [`Error::TableFull`], even if slots
//! elsewhere are free. Each insert raises the table's `longest_probe` to
//! the number of buckets it walked, and a lookup walks no further (nor past
//! an empty slot): a name that is absent costs at most 8 tag lines, even in
//! a full table of 2^20 slots. A table of at most 8 buckets (256 slots) is
//! walked whole, so it fills to exactly its capacity.
//!
//! How full a table gets with distinct random names (`tests/table_load.rs`):
//!
//! | capacity | first `TABLE_FULL` at | 1 name in 100 refused at | after 2 × capacity names |
//! | ---: | ---: | ---: | ---: |
//! | 1 024 | 90.7 % | 99.5 % | 100 % |
//! | 65 536 | 88.0 % | 94.5 % | 100 % |
//! | 1 048 576 | 89.2 % | 92.9 % | 100 % |
//!
//! So size a table about 15 % above the points it must hold. With 4 buckets
//! per name the first refusal at 2^20 comes at 77 %; 16 buckets of 8 slots
//! (16 lines per miss) reached 87 %.
//!
//! # Shared memory
//!
//! A table is its slots and a [`TableState`] (how many names, how deep any
//! insert went). Both are plain `repr(C)` data made only of integer atomics:
//! all zero is a fresh table, and any bit pattern is a valid one, so several
//! processes can map the same memory and each make a [`PointTable`] view over
//! it ([`PointTable::with_owner`] on [`Shared`] storage). The layout is
//! described by [`crate::LayoutDescriptor`].
//!
//! A name slot's state word is `EMPTY` (0), `READY` (`u32::MAX`), or the id
//! of the view claiming it. A reader compares names only in `READY` slots. A
//! waiter that meets a slot claimed for long asks the view's liveness, and
//! sets a dead claimer's slot back to empty (no one has passed it, see
//! `seek`); the next claimer writes the whole name again. The claim raises
//! `longest_probe` before the slot is ready, so a name is never deeper than
//! what a lookup walks; a claimer that dies after that costs longer misses
//! at most. The bucket's tag is published after the slot is ready, so a dead
//! claimer never leaves a tag behind; one that dies between the two leaves
//! its name untagged, which is found all the same (an untagged slot is read).
//! `len` is counted last: a claimer that dies after its name is ready leaves
//! it one short.
//!
//! A view of [`Shared`] storage with a ledger row counts the permits it holds
//! per point in that row, and [`PointTable::reclaim`] gives a dead process's
//! back (ledger.rs).

use crate::entry::{Entry, Flags, Outcome};
use crate::error::{ArgumentRule, Error};
use crate::ledger::Held;
use crate::owner::{AlwaysAlive, Holder, Liveness, Owner, Transition, FREE, NOBODY};
use crate::point::{Point, Stats};
use crate::strategy::Strategy;
use crate::sync::{const_fn, zeroed, AtomicU32, AtomicU64, Ordering};
use crate::tags::{Tags, BUCKET};

/// The longest point name, in bytes. Names are bytes: any byte, UTF-8 or
/// not, is allowed; SDS point names are short dotted identifiers.
pub const MAX_NAME_LEN: usize = 256;
/// The largest table capacity.
pub const MAX_CAPACITY: usize = 1 << 20;
/// The most buckets a name may occupy, so the most a lookup or insert reads.
const PROBE_BUCKETS: usize = 8;

pub(crate) const NAME_WORDS: usize = MAX_NAME_LEN / 8;
const EMPTY: u32 = FREE;
const READY: u32 = NOBODY;

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

/// A point's name copied out of its slot (no allocation): see
/// [`PointTable::points`].
#[derive(Clone)]
pub struct PointName {
    bytes: [u8; MAX_NAME_LEN],
    len: usize,
}

impl PointName {
    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl core::fmt::Debug for PointName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{:?}",
            core::str::from_utf8(self.as_bytes()).unwrap_or("<bytes>")
        )
    }
}

/// One slot of a table: a name and its point. The first slot of each bucket
/// also holds the bucket's tags; the other slots leave theirs unused.
///
/// Plain data, `repr(C)`, made only of integer atomics: all zero is
/// [`Slot::new`] and any bit pattern is a valid slot. 3 072 bytes, aligned
/// to 64 (the tags' cache line); `tests/layout.rs` pins both.
#[repr(C)]
pub struct Slot {
    tags: Tags,
    /// EMPTY, READY, or the id of the owner claiming the slot.
    state: AtomicU32,
    len: AtomicU32,
    hash: AtomicU64,
    name: [AtomicU64; NAME_WORDS],
    point: Point,
    /// Unused: the size is a whole number of lines with no hidden padding.
    reserved: [AtomicU64; 7],
}

impl Slot {
    const_fn! {
        /// An empty slot.
        pub fn new() -> Slot {
            Slot {
                tags: Tags::new(),
                state: AtomicU32::new(EMPTY),
                len: AtomicU32::new(0),
                hash: AtomicU64::new(0),
                name: zeroed(),
                point: Point::new(),
                reserved: zeroed(),
            }
        }
    }

    /// Whether the slot holds `name`, of this hash and last word
    /// ([`tail_of`]).
    #[inline]
    fn holds(&self, hash: u64, name: &[u8], tail: u64) -> bool {
        if self.hash.load(Ordering::Relaxed) != hash
            || self.len.load(Ordering::Relaxed) as usize != name.len()
        {
            return false;
        }
        let whole = name.chunks_exact(8);
        let partial = !whole.remainder().is_empty();
        let mut words = self.name.iter();
        whole
            .zip(&mut words)
            .all(|(chunk, word)| word.load(Ordering::Relaxed) == full_word(chunk))
            && (!partial
                || words
                    .next()
                    .is_some_and(|word| word.load(Ordering::Relaxed) == tail))
    }

    fn fill(&self, hash: u64, name: &[u8], holder: &Holder<'_>) {
        for (chunk, word) in name.chunks(8).zip(self.name.iter()) {
            word.store(pack_word(chunk), Ordering::Relaxed);
        }
        self.len.store(name.len() as u32, Ordering::Relaxed);
        self.hash.store(hash, Ordering::Relaxed);
        holder.reached(Transition::Claim, 2);
        self.state.store(READY, Ordering::Release);
    }

    /// The state once it is no longer being claimed: EMPTY or READY. A slot
    /// whose claimer died goes back to EMPTY.
    #[inline]
    fn settled_state(&self, holder: &Holder<'_>) -> u32 {
        holder.settled(&self.state)
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

/// A folded multiply over the name's words two at a time: the 128-bit
/// product of two 64-bit words with its halves XOR-ed spreads every input
/// bit over the whole result (the high half feeds the home bucket, the
/// low half the stride), and one multiply takes 16 bytes. The second
/// operand carries the first word turned by half as well, so a short name
/// (one word) is not just multiplied by a constant. The hash is on the
/// critical path of every lookup by name: a typical point name of 17 to 32
/// bytes is two multiplies in a row , no seed to carry.
#[cfg(test)]
fn hash(name: &[u8]) -> u64 {
    hash_with(name, tail_of(name))
}

/// The name's last, partial word (0 when its length is a multiple of 8):
/// worked out once for the hash and the comparisons.
#[inline]
fn tail_of(name: &[u8]) -> u64 {
    tail_word(name.chunks_exact(8).remainder())
}

/// [`hash`] given the name's [`tail_of`].
#[inline]
fn hash_with(name: &[u8], tail: u64) -> u64 {
    const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
    const ODD: u64 = 0xff51_afd7_ed55_8ccd;
    let fold = |x: u64, y: u64| {
        let product = x as u128 * y as u128;
        product as u64 ^ (product >> 64) as u64
    };
    // A part of the name shorter than a word is its tail (the name's
    // length, folded in first, tells a padding 0 from a 0 byte).
    let word = |part: &[u8]| match part.len() {
        8 => full_word(part),
        0 => 0,
        _ => tail,
    };
    name.chunks(16).fold(SEED ^ name.len() as u64, |h, chunk| {
        let (first, second) = chunk.split_at(chunk.len().min(8));
        let a = word(first);
        fold(a ^ h, word(second) ^ ODD ^ a.rotate_left(32))
    })
}

/// A ledger row holds one counter per slot.
fn check_row(row: Option<&[Held]>, capacity: usize) -> Result<(), Error> {
    match row {
        Some(row) if row.len() != capacity => {
            Err(Error::InvalidArgument(ArgumentRule::LedgerRowLength))
        }
        _ => Ok(()),
    }
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

/// A capacity as a binding receives it, a whole number of any sign (a Java
/// `int`, a Python `int`, a JavaScript number): a negative or huge one is as
/// invalid as 0, so every binding gives one verdict, `SDS_INVALID_CAPACITY`
/// with [`check_capacity`]'s message.
pub fn capacity_from_i128(n: i128) -> Result<usize, Error> {
    let capacity = usize::try_from(n).map_err(|_| Error::InvalidCapacity)?;
    check_capacity(capacity)?;
    Ok(capacity)
}

/// The buckets a name may occupy, in the order inserts try them (see the
/// module doc).
struct Buckets {
    next: usize,
    /// The stride, 0 until a second bucket is asked for: most names are
    /// found in their home bucket.
    step: usize,
    hash: u64,
    buckets: usize,
    left: usize,
}

impl Buckets {
    /// The first `limit` of the name's buckets in a table of `capacity`.
    #[inline]
    fn of(hash: u64, capacity: usize, limit: usize) -> Buckets {
        let buckets = capacity.div_ceil(BUCKET);
        // Multiply-shift maps the hash onto 0..n without a division.
        let home = ((hash as u128 * buckets as u128) >> 64) as usize;
        Buckets {
            next: home,
            step: 0,
            hash,
            buckets,
            left: buckets.min(PROBE_BUCKETS).min(limit),
        }
    }

    /// The stride from the home bucket's low half, 1 to buckets - 1; 1 in a
    /// table walked whole.
    fn step(&self) -> usize {
        if self.buckets <= PROBE_BUCKETS {
            1
        } else {
            let low = self.hash & 0xffff_ffff;
            1 + ((low * (self.buckets as u64 - 1)) >> 32) as usize
        }
    }
}

impl Iterator for Buckets {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let bucket = self.next;
        if self.left > 0 {
            if self.step == 0 {
                self.step = self.step();
            }
            self.next += self.step;
            if self.next >= self.buckets {
                self.next -= self.buckets;
            }
        }
        Some(bucket)
    }
}

/// What a bucket holds for a name.
enum Seen {
    /// The name, at this slot.
    Name(usize),
    /// The bucket's first empty slot, before any slot holding the name.
    Empty(usize),
    /// Neither: every slot holds another name.
    Full,
}

/// What a table needs besides its slots: plain data (`repr(C)`, integer
/// atomics only, 64 bytes aligned to 64 so it can sit on its own line before
/// the slots). All zero is a fresh table's state; any bit pattern is valid.
#[repr(C, align(64))]
pub struct TableState {
    /// How many names were inserted.
    len: AtomicU32,
    /// The most buckets any insert has walked: where a lookup may stop.
    longest_probe: AtomicU32,
    /// The owner of the recount in progress (in_flight.rs), or 0: one at a
    /// time per table.
    recounter: AtomicU32,
    /// Unused (zero): the rest of the line, with no hidden padding.
    reserved: [AtomicU32; 13],
}

#[cfg(not(loom))]
const fn zeroed_u32<const N: usize>() -> [AtomicU32; N] {
    [const { AtomicU32::new(0) }; N]
}

#[cfg(loom)]
fn zeroed_u32<const N: usize>() -> [AtomicU32; N] {
    core::array::from_fn(|_| AtomicU32::new(0))
}

impl TableState {
    const_fn! {
        /// A fresh table's state.
        pub fn new() -> TableState {
            TableState {
                len: AtomicU32::new(0),
                longest_probe: AtomicU32::new(0),
                recounter: AtomicU32::new(0),
                reserved: zeroed_u32(),
            }
        }
    }
}

impl Default for TableState {
    fn default() -> TableState {
        TableState::new()
    }
}

/// Memory a table lives in: its slots, and its [`TableState`] unless the
/// table keeps its own (`None`: every `AsRef<[Slot]>`, a private table).
pub trait TableStorage {
    /// The slots.
    fn slots(&self) -> &[Slot];
    /// The state kept next to the slots, if the storage has one.
    fn state(&self) -> Option<&TableState>;
    /// The view's ledger row (one [`Held`] per slot, ledger.rs), if its
    /// permits are accounted per process; `None` by default (a private
    /// table: no ledger, no cost).
    #[inline]
    fn ledger(&self) -> Option<&[Held]> {
        None
    }
}

impl<T: AsRef<[Slot]>> TableStorage for T {
    #[inline]
    fn slots(&self) -> &[Slot] {
        self.as_ref()
    }

    #[inline]
    fn state(&self) -> Option<&TableState> {
        None
    }
}

/// Storage shared with other views (other processes): a state and its slots
/// in memory the caller maps, and the ledger row of the view's process.
#[derive(Copy, Clone)]
pub struct Shared<'a> {
    /// The table's state.
    pub state: &'a TableState,
    /// The table's slots.
    pub slots: &'a [Slot],
    /// The row counting the permits this view's process holds, one counter
    /// per slot (ledger.rs); `None`: permits are not accounted per process,
    /// and a process that dies holding some leaves them counted.
    pub ledger: Option<&'a [Held]>,
}

impl<'a> Shared<'a> {
    /// A state and its slots, without a ledger.
    pub const fn new(state: &'a TableState, slots: &'a [Slot]) -> Shared<'a> {
        Shared {
            state,
            slots,
            ledger: None,
        }
    }

    /// A state, its slots and this process's ledger row (as long as `slots`).
    pub const fn with_ledger(
        state: &'a TableState,
        slots: &'a [Slot],
        row: &'a [Held],
    ) -> Shared<'a> {
        Shared {
            state,
            slots,
            ledger: Some(row),
        }
    }
}

impl TableStorage for Shared<'_> {
    #[inline]
    fn slots(&self) -> &[Slot] {
        self.slots
    }

    #[inline]
    fn state(&self) -> Option<&TableState> {
        Some(self.state)
    }

    #[inline]
    fn ledger(&self) -> Option<&[Held]> {
        self.ledger
    }
}

/// Names to points over caller storage (`Box<[Slot]>`, `Vec<Slot>`, an array,
/// a static, or [`Shared`] memory). Capacity is the number of slots, 1 to
/// [`MAX_CAPACITY`]. The view's owner and liveness (`L`) decide who holds the
/// transitions it starts and when a waiter may take one over (owner.rs).
pub struct PointTable<S, L = AlwaysAlive> {
    storage: S,
    /// The state of a table whose storage keeps none.
    own: TableState,
    owner: Owner,
    liveness: L,
    /// Buckets read, so tests can check the bound.
    #[cfg(test)]
    probes: AtomicU64,
    /// Slots read past their tags, so tests can check the tags filter.
    #[cfg(test)]
    slot_reads: AtomicU64,
}

impl<S: TableStorage> PointTable<S> {
    /// A private table over `storage`, whose slots (and state) should be
    /// fresh: owner [`Owner::PRIVATE`], always alive.
    pub fn new(storage: S) -> Result<PointTable<S>, Error> {
        PointTable::with_owner(storage, Owner::PRIVATE, AlwaysAlive)
    }
}

impl<'a> PointTable<Shared<'a>> {
    /// A view over a state and slots that other views may share, as
    /// [`Owner::PRIVATE`] (every view in one process).
    pub fn over(state: &'a TableState, slots: &'a [Slot]) -> Result<PointTable<Shared<'a>>, Error> {
        PointTable::new(Shared::new(state, slots))
    }
}

impl<S: TableStorage, L: Liveness> PointTable<S, L> {
    /// A view over `storage` whose transitions are held by `owner`; a waiter
    /// asks `liveness` about a holder it has waited on for long. A ledger
    /// row whose length is not the capacity is
    /// [`ArgumentRule::LedgerRowLength`].
    pub fn with_owner(storage: S, owner: Owner, liveness: L) -> Result<PointTable<S, L>, Error> {
        let capacity = storage.slots().len();
        check_capacity(capacity)?;
        check_row(storage.ledger(), capacity)?;
        Ok(PointTable {
            storage,
            own: TableState::new(),
            owner,
            liveness,
            #[cfg(test)]
            probes: AtomicU64::new(0),
            #[cfg(test)]
            slot_reads: AtomicU64::new(0),
        })
    }

    #[inline]
    fn slots(&self) -> &[Slot] {
        self.storage.slots()
    }

    #[inline]
    fn state(&self) -> &TableState {
        self.storage.state().unwrap_or(&self.own)
    }

    #[inline]
    fn holder(&self) -> Holder<'_> {
        Holder::new(self.owner, &self.liveness, &self.state().recounter)
    }

    /// This view's ledger counter of point `index`, if it has a ledger.
    #[inline]
    fn held(&self, index: u32) -> Option<&Held> {
        self.storage
            .ledger()
            .and_then(|row| row.get(index as usize))
    }

    /// Gives back the permits counted in `dead_row`, the ledger row of a
    /// process that died (ledger.rs): each counter is taken (the row is left
    /// counting 0), and each point it held permits on is recounted from
    /// `live_rows` ([`PointTable::recount`]), so that a permit the dead
    /// process was taking or returning at its death is neither lost nor
    /// counted twice. Returns how many permits the row held. Any process may
    /// call it, at once with others (each count is taken once) and while live
    /// views work; it reads every counter of the row (O(capacity)), so call
    /// it when a dead process is found, not per request. A row whose length
    /// is not the capacity is [`ArgumentRule::LedgerRowLength`].
    pub fn reclaim(&self, dead_row: &[Held], live_rows: &[&[Held]]) -> Result<u64, Error> {
        check_row(Some(dead_row), self.capacity())?;
        let mut returned = 0u64;
        for (index, held) in dead_row.iter().enumerate() {
            let n = held.take();
            if n > 0 {
                self.recount_index(index, live_rows);
                returned += n as u64;
            }
        }
        Ok(returned)
    }

    /// Makes point `id`'s count of permits in flight exact again: the sum of
    /// its counters in `live_rows`, the ledger rows of every process that
    /// may hold permits on the table (this one's included; an empty row
    /// costs one compare-and-swap, its counter tagged as every other). The
    /// point takes and returns no permit while the rows are read; one
    /// recount at a time per table (the table's recount word, taken over
    /// from a recounter that died).
    /// Returns the new count. A point not created is [`Error::InvalidEntry`].
    pub fn recount(&self, id: PointId, live_rows: &[&[Held]]) -> Result<u32, Error> {
        self.point(id)?;
        Ok(self.recount_index(id.index() as usize, live_rows))
    }

    fn recount_index(&self, index: usize, live_rows: &[&[Held]]) -> u32 {
        let holder = self.holder();
        let word = &self.state().recounter;
        holder.take(word);
        holder.reached(Transition::Recount, 0);
        let count = self.slots()[index].point.recount(index, live_rows, &holder);
        holder.give_back(word);
        count
    }

    /// The owner of this view.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// How many points fit.
    pub fn capacity(&self) -> usize {
        self.slots().len()
    }

    /// How many points exist.
    pub fn len(&self) -> usize {
        self.state().len.load(Ordering::Acquire) as usize
    }

    /// Whether no point exists yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The point named `name`, if it exists. Reads at most as many buckets as
    /// the longest insert walked, and stops at the first empty slot.
    pub fn lookup(&self, name: &[u8]) -> Result<Option<PointId>, Error> {
        check_name(name)?;
        let tail = tail_of(name);
        let h = hash_with(name, tail);
        if let Some(index) = self.find_at_home(h, name, tail) {
            return Ok(Some(PointId(index as u32)));
        }
        self.lookup_beyond(h, name)
    }

    /// [`PointTable::lookup`] of a name not found by `find_at_home`.
    #[inline(never)]
    fn lookup_beyond(&self, h: u64, name: &[u8]) -> Result<Option<PointId>, Error> {
        let walked = self.state().longest_probe.load(Ordering::Acquire) as usize;
        for bucket in Buckets::of(h, self.capacity(), walked) {
            match self.seek(bucket, h, name) {
                Seen::Name(index) => return Ok(Some(PointId(index as u32))),
                Seen::Empty(_) => return Ok(None),
                Seen::Full => {}
            }
        }
        Ok(None)
    }

    /// The point named `name`, created if needed; [`Error::TableFull`] when it
    /// does not exist and none of its buckets has a free slot. An existing
    /// name costs loads only: a slot is claimed by compare-and-swap only when
    /// it is seen empty.
    pub fn insert(&self, name: &[u8]) -> Result<PointId, Error> {
        check_name(name)?;
        let tail = tail_of(name);
        let h = hash_with(name, tail);
        match self.find_at_home(h, name, tail) {
            Some(index) => Ok(PointId(index as u32)),
            None => self.insert_beyond(h, name),
        }
    }

    /// The slot of a ready name in its home bucket, the usual place of an
    /// existing name: read without the walk's set-up (the lanes whose tag
    /// matches, then that slot's state and name). `None` tells nothing: the
    /// walk decides (the name may be further, being claimed, or absent).
    #[inline]
    fn find_at_home(&self, h: u64, name: &[u8], tail: u64) -> Option<usize> {
        let slots = self.slots();
        let first = Buckets::of(h, slots.len(), 1).next()? * BUCKET;
        for at in slots[first].tags.matches(Tags::of(h)) {
            let slot = slots.get(first + at)?;
            if slot.state.load(Ordering::Acquire) == READY && slot.holds(h, name, tail) {
                return Some(first + at);
            }
        }
        None
    }

    /// [`PointTable::insert`] of a name not found by `find_at_home`.
    #[inline(never)]
    fn insert_beyond(&self, h: u64, name: &[u8]) -> Result<PointId, Error> {
        for (walked, bucket) in Buckets::of(h, self.capacity(), PROBE_BUCKETS).enumerate() {
            // Each lost race fills a slot of the bucket, so this ends.
            loop {
                match self.seek(bucket, h, name) {
                    Seen::Name(index) => return Ok(PointId(index as u32)),
                    Seen::Full => break,
                    Seen::Empty(index) => {
                        if self.claim(index, h, name, walked as u32 + 1) {
                            self.state().len.fetch_add(1, Ordering::AcqRel);
                            return Ok(PointId(index as u32));
                        }
                    }
                }
            }
        }
        Err(Error::TableFull {
            capacity: self.capacity() as u32,
        })
    }

    /// Finds `name` or the first empty slot in `bucket`, reading its tags and
    /// only the slots whose tag matches or is still 0. It never passes a slot
    /// being claimed (it waits for it to settle), so no name lies beyond a
    /// slot a dead claimer held.
    fn seek(&self, bucket: usize, h: u64, name: &[u8]) -> Seen {
        #[cfg(test)]
        self.probes.fetch_add(1, Ordering::Relaxed);
        let slots = self.slots();
        let holder = self.holder();
        let first = bucket * BUCKET;
        for at in slots[first].tags.candidates(Tags::of(h)) {
            // A short last bucket: the lanes past the table are never tagged.
            let Some(slot) = slots.get(first + at) else {
                break;
            };
            #[cfg(test)]
            self.slot_reads.fetch_add(1, Ordering::Relaxed);
            match slot.settled_state(&holder) {
                EMPTY => return Seen::Empty(first + at),
                _ if slot.holds(h, name, tail_of(name)) => return Seen::Name(first + at),
                _ => {}
            }
        }
        Seen::Full
    }

    /// Claims the empty slot `index` for `name`, found `depth` buckets into
    /// its probe; false if another insert took it first.
    fn claim(&self, index: usize, h: u64, name: &[u8], depth: u32) -> bool {
        let slots = self.slots();
        let slot = &slots[index];
        let holder = self.holder();
        if !holder.try_take(&slot.state) {
            return false;
        }
        holder.reached(Transition::Claim, 0);
        // Before the name is ready: a lookup never stops short of it.
        self.state()
            .longest_probe
            .fetch_max(depth, Ordering::AcqRel);
        holder.reached(Transition::Claim, 1);
        slot.fill(h, name, &holder);
        // After the slot is ready: a reader that sees the tag sees the name.
        let first = index - index % BUCKET;
        slots[first].tags.publish(index - first, Tags::of(h));
        true
    }

    /// Every point that exists now, in slot order, with its id and a copy of
    /// its name. A point created during the walk may or may not be seen; no
    /// point is seen twice. For background work (reporting, syncing), not
    /// the hot path: it reads every slot's state.
    pub fn points(&self) -> impl Iterator<Item = (PointId, PointName, &Point)> + '_ {
        self.slots().iter().enumerate().filter_map(|(index, slot)| {
            // Acquire: the name words were written before the state.
            if slot.state.load(Ordering::Acquire) != READY {
                return None;
            }
            let len = (slot.len.load(Ordering::Relaxed) as usize).min(MAX_NAME_LEN);
            let mut name = PointName {
                bytes: [0; MAX_NAME_LEN],
                len,
            };
            for (chunk, word) in name.bytes[..len].chunks_mut(8).zip(slot.name.iter()) {
                let word = word.load(Ordering::Relaxed).to_le_bytes();
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
            Some((PointId(index as u32), name, &slot.point))
        })
    }

    /// The point with this id; [`Error::InvalidEntry`] if out of range or
    /// not created.
    pub fn point(&self, id: PointId) -> Result<&Point, Error> {
        match self.slots().get(id.0 as usize) {
            Some(slot) if slot.state.load(Ordering::Acquire) == READY => Ok(&slot.point),
            _ => Err(Error::InvalidEntry),
        }
    }

    /// Enters the point named `name` (created if needed).
    pub fn enter(&self, name: &[u8], now_ms: u64, flags: Flags) -> Result<Entry, Error> {
        let id = self.insert(name)?;
        // `insert` gives the id of a ready slot only, and a ready slot stays
        // ready: its state is not read again.
        match self.slots().get(id.0 as usize) {
            Some(slot) => Ok(self.enter_slot(slot, id, now_ms, flags)),
            None => Err(Error::InvalidEntry),
        }
    }

    /// Enters the point with this id.
    pub fn enter_point(&self, id: PointId, now_ms: u64, flags: Flags) -> Result<Entry, Error> {
        match self.slots().get(id.0 as usize) {
            Some(slot) if slot.state.load(Ordering::Acquire) == READY => {
                Ok(self.enter_slot(slot, id, now_ms, flags))
            }
            _ => Err(Error::InvalidEntry),
        }
    }

    #[inline]
    fn enter_slot(&self, slot: &Slot, id: PointId, now_ms: u64, flags: Flags) -> Entry {
        let mut entry = slot
            .point
            .enter_as(now_ms, flags, &self.holder(), self.held(id.0));
        entry.point = id.0;
        entry
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
        self.point(entry.point())?.exit_as(
            entry,
            outcome,
            clock,
            &self.holder(),
            self.held(entry.point().0),
        );
        Ok(())
    }

    /// Sets the strategy of `name` (created if needed). Nothing changes if the
    /// strategy is invalid or the table is full.
    pub fn set_strategy(&self, name: &[u8], strategy: &Strategy) -> Result<PointId, Error> {
        strategy.validate()?;
        let id = self.insert(name)?;
        self.point(id)?
            .set_strategy_as(Some(strategy), &self.holder())?;
        Ok(id)
    }

    /// Removes the strategy of `name`; its counters stay.
    pub fn remove_strategy(&self, name: &[u8]) -> Result<(), Error> {
        if let Some(id) = self.lookup(name)? {
            self.point(id)?.set_strategy_as(None, &self.holder())?;
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

/// What work beside the hot path (a console agent applying strategies and
/// reading statistics, a cluster syncer) does with a table of any storage
/// and liveness: object-safe, so that work is written once for every kind.
pub trait Points {
    /// [`PointTable::insert`].
    fn insert(&self, name: &[u8]) -> Result<PointId, Error>;
    /// [`PointTable::lookup`].
    fn lookup(&self, name: &[u8]) -> Result<Option<PointId>, Error>;
    /// [`PointTable::point`].
    fn point(&self, id: PointId) -> Result<&Point, Error>;
    /// [`PointTable::set_strategy`].
    fn set_strategy(&self, name: &[u8], strategy: &Strategy) -> Result<PointId, Error>;
    /// [`PointTable::remove_strategy`].
    fn remove_strategy(&self, name: &[u8]) -> Result<(), Error>;
    /// [`PointTable::points`], as a callback.
    fn for_each_point(&self, visit: &mut dyn FnMut(PointId, &[u8], &Point));
}

impl<S: TableStorage, L: Liveness> Points for PointTable<S, L> {
    fn insert(&self, name: &[u8]) -> Result<PointId, Error> {
        PointTable::insert(self, name)
    }

    fn lookup(&self, name: &[u8]) -> Result<Option<PointId>, Error> {
        PointTable::lookup(self, name)
    }

    fn point(&self, id: PointId) -> Result<&Point, Error> {
        PointTable::point(self, id)
    }

    fn set_strategy(&self, name: &[u8], strategy: &Strategy) -> Result<PointId, Error> {
        PointTable::set_strategy(self, name, strategy)
    }

    fn remove_strategy(&self, name: &[u8]) -> Result<(), Error> {
        PointTable::remove_strategy(self, name)
    }

    fn for_each_point(&self, visit: &mut dyn FnMut(PointId, &[u8], &Point)) {
        for (id, name, point) in self.points() {
            visit(id, name.as_bytes(), point);
        }
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;

#[cfg(all(test, not(loom)))]
#[path = "takeover_tests.rs"]
mod takeover_tests;
