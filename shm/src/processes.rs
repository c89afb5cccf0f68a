//! The process registry: one record per attached process, each guarded by a
//! POSIX write lock on its own byte past the end of the file.
//!
//! The lock is the liveness signal: the kernel holds it for the process's
//! life and drops it when the process dies, however it dies. It names no
//! pid, so it survives pid reuse and works across pid namespaces (containers
//! sharing the file). The record's pid is for people reading the file.
//!
//! Each process slot also has a ledger row counting the permits its holder
//! holds (`core_table::Memory::row`). A row is given back (reclaimed) by
//! whoever holds the slot's lock and finds the slot still "in use" with no
//! live holder: the process that takes the slot next, or one that scans the
//! slots for dead holders ([`reclaim_dead`]); then the slot is marked free,
//! so the row is reclaimed exactly once. A clean detach gives back its own.
//!
//! An owner id names a slot AND the generation that took it: `1 + slot +
//! 256 × (generation mod GENERATIONS)`. Words in the table may still hold a
//! dead process's id after a new process took its slot; with the slot alone
//! in the id, a waiter would see the new holder's lock and wait on the dead
//! one's word forever. An id is alive only while its slot's generation is
//! still the id's and the slot's lock is held.

use std::fs::File;
use std::io;
use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};

use sds_core::{Held, Liveness};

use crate::core_table::Memory;
use crate::layout::{MAX_PROCESSES, PROCESS_LOCK_BASE, PROCESS_RECORD_SIZE};
use crate::mapping::Shared;
use crate::sys;

const FREE: u64 = 0;
const IN_USE: u64 = 1;

/// One process slot in the file.
#[repr(C)]
pub struct ProcessRecord {
    /// `IN_USE` while a process holds the slot; `FREE` after a clean detach.
    state: AtomicU64,
    /// Bumped by each process that takes the slot.
    generation: AtomicU64,
    /// The holder's pid, in its own pid namespace (information only).
    pid: AtomicU64,
    reserved: AtomicU64,
}

const _: () = assert!(size_of::<ProcessRecord>() == PROCESS_RECORD_SIZE);

// SAFETY: four AtomicU64: any bits are a value, changed only atomically.
unsafe impl Shared for ProcessRecord {}

/// Generations an owner id tells apart (2^24 - 1): the largest id,
/// `256 × (2^24 - 1)`, stays below `u32::MAX` (a name slot's "ready"), and
/// the smallest is 1 (0 is "free"). A slot would have to be taken 16.7
/// million times while a dead holder's word waits for a taker to confuse
/// two of them.
pub const GENERATIONS: u64 = (1 << 24) - 1;

/// A process's place in the registry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The owner id, stored in the words of the transitions this process
    /// holds: its slot and generation (never 0 nor `u32::MAX`).
    pub owner: u32,
    /// The process slot, 0 to `MAX_PROCESSES - 1`.
    pub slot: usize,
    /// The slot's generation, counting every process that took it.
    pub generation: u64,
    /// Whether the previous holder died without detaching (its permits
    /// were given back before this process took the slot).
    pub previous_owner_died: bool,
}

/// The owner id of `slot` taken at `generation`.
pub fn owner_id(slot: usize, generation: u64) -> u32 {
    let id = 1 + slot as u64 + MAX_PROCESSES as u64 * (generation % GENERATIONS);
    // At most 256 + 256 × (2^24 - 2) < u32::MAX.
    id as u32
}

/// The slot and generation (mod [`GENERATIONS`]) of an owner id; `None`
/// for 0 and for ids no registration makes.
pub fn slot_of(owner: u32) -> Option<(usize, u64)> {
    let n = u64::from(owner).checked_sub(1)?;
    let (slot, generation) = (n % MAX_PROCESSES as u64, n / MAX_PROCESSES as u64);
    (generation < GENERATIONS).then_some((slot as usize, generation))
}

/// Takes the first slot whose lock no live process holds, giving back the
/// permits of a holder that died in it.
pub fn claim(
    file: &File,
    records: &[ProcessRecord],
    memory: &Memory<'_>,
) -> io::Result<Option<Registration>> {
    for (index, record) in records.iter().enumerate().take(MAX_PROCESSES) {
        if !sys::try_lock(file, PROCESS_LOCK_BASE + index as u64)? {
            continue;
        }
        let previous_owner_died = record.state.load(Ordering::Acquire) != FREE;
        let generation = record
            .generation
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        record
            .pid
            .store(u64::from(std::process::id()), Ordering::Relaxed);
        record.state.store(IN_USE, Ordering::Release);
        let owner = owner_id(index, generation);
        if previous_owner_died {
            // The row is this process's now, unused until `claim` returns:
            // emptied and its points recounted as the new owner.
            let live = every_row(records, memory);
            memory.reclaim(index, owner, Others::new(file, records, owner), &live);
        }
        return Ok(Some(Registration {
            owner,
            slot: index,
            generation,
            previous_owner_died,
        }));
    }
    Ok(None)
}

/// The ledger rows of every process slot, what a recount sums. A free
/// slot's row counts nothing, so the sum is that of the slots in use; but
/// which slots are in use is not read here: a process that takes a slot
/// after such a reading and a permit before the recount starts would be
/// left out of the sum, and the point's count would fall below what the
/// live processes hold (seen once in CI: 4 for 6). The recount reads each
/// row while the point takes and returns no permit.
pub fn every_row<'a>(records: &[ProcessRecord], memory: &Memory<'a>) -> Vec<&'a [Held]> {
    (0..records.len().min(MAX_PROCESSES))
        .map(|index| memory.row(index))
        .collect()
}

/// The liveness a recount asks while it waits for the table's recount word:
/// `own` (this process) lives, another id as [`held_by_other`] says.
pub struct Others<'a> {
    file: &'a File,
    records: &'a [ProcessRecord],
    own: u32,
}

impl<'a> Others<'a> {
    pub fn new(file: &'a File, records: &'a [ProcessRecord], own: u32) -> Others<'a> {
        Others { file, records, own }
    }
}

impl Liveness for Others<'_> {
    fn is_alive(&self, owner: u32) -> bool {
        owner == self.own || held_by_other(self.file, self.records, owner)
    }

    #[cfg(feature = "test-hooks")]
    fn checkpoint(&self, at: sds_core::Checkpoint) {
        crate::hooks::checkpoint(at);
    }
}

/// Gives back the permits of every process slot whose holder died without
/// detaching, but `ours` (this process's own slot, whose lock it holds:
/// locking it again would succeed, and unlocking would drop it). For each
/// slot marked "in use": take its lock without waiting (a live holder keeps
/// it, and so does a process that is taking the slot or reclaiming it now),
/// check it is still "in use", reclaim its row, mark it free, unlock. One
/// `fcntl` per slot in use, so for attach and the rare refused path only.
/// The caller keeps other threads of this process from claiming meanwhile
/// (its lock on a slot would look like ours to `try_lock`). Returns the
/// permits given back.
pub fn reclaim_dead(
    file: &File,
    records: &[ProcessRecord],
    ours: Option<usize>,
    owner: u32,
    memory: &Memory<'_>,
) -> io::Result<u64> {
    let mut returned = 0;
    let live = every_row(records, memory);
    let slots = &records[..records.len().min(MAX_PROCESSES)];
    free_dead_slots(file, slots, ours, |index| {
        // The slot's lock is ours, so no other process reclaims it at the
        // same time, and it is still "in use", so none did before. The
        // flags a dead process held need nothing here: waiters take them
        // over (its id reads dead).
        returned += memory.reclaim(index, owner, Others::new(file, records, owner), &live);
    })?;
    Ok(returned)
}

/// Gives back the permits this process still holds in `slot` (entries never
/// exited: a free slot's row must count nothing for its next holder), marks
/// the slot free and drops its lock (a clean detach).
pub fn release(
    file: &File,
    records: &[ProcessRecord],
    registration: &Registration,
    memory: &Memory<'_>,
) {
    let (slot, owner) = (registration.slot, registration.owner);
    if let Some(record) = records.get(slot) {
        let live = every_row(records, memory);
        memory.reclaim(slot, owner, Others::new(file, records, owner), &live);
        record.state.store(FREE, Ordering::Release);
    }
    // Closing the file drops the lock anyway if this fails.
    let _ = sys::unlock(file, PROCESS_LOCK_BASE + slot as u64);
}

/// Whether another process holds `owner`: its slot still at the id's
/// generation, and the slot's lock held. The generation is read first: a
/// process taking the slot locks it before it bumps the generation, so a
/// stale id reads alive for that short while at most. Errors answer
/// "alive": a live owner taken for dead would lose its state, a dead one
/// taken for alive only waits.
pub fn held_by_other(file: &File, records: &[ProcessRecord], owner: u32) -> bool {
    let Some((slot, generation)) = slot_of(owner) else {
        return false;
    };
    let Some(record) = records.get(slot) else {
        return false;
    };
    if record.generation.load(Ordering::Acquire) % GENERATIONS != generation {
        return false;
    }
    sys::locked_by_other(file, PROCESS_LOCK_BASE + slot as u64).unwrap_or(true)
}

/// Takes the first of `records`' slots whose lock no live process holds
/// (a key table's: it has no points' ledger), marked in use: the slot, and
/// whether its previous holder died without freeing it (the caller gives
/// back what that holder held before using the slot). The caller keeps
/// other threads of this process from taking slots meanwhile.
pub fn take_slot(file: &File, records: &[ProcessRecord]) -> io::Result<Option<(usize, bool)>> {
    for (index, record) in records.iter().enumerate() {
        if !sys::try_lock(file, PROCESS_LOCK_BASE + index as u64)? {
            continue;
        }
        let died = record.state.load(Ordering::Acquire) != FREE;
        record.generation.fetch_add(1, Ordering::AcqRel);
        record
            .pid
            .store(u64::from(std::process::id()), Ordering::Relaxed);
        record.state.store(IN_USE, Ordering::Release);
        return Ok(Some((index, died)));
    }
    Ok(None)
}

/// For each of `records`' slots in use whose holder died, but `ours` (a
/// lock this process holds would be taken again): `give_back(slot)` under
/// the slot's lock, then the slot is marked free. As [`reclaim_dead`], one
/// `fcntl` per slot in use; the caller keeps other threads of this process
/// from taking slots meanwhile. How many slots were freed.
pub fn free_dead_slots(
    file: &File,
    records: &[ProcessRecord],
    ours: Option<usize>,
    mut give_back: impl FnMut(usize),
) -> io::Result<usize> {
    let mut freed = 0;
    for (index, record) in records.iter().enumerate() {
        if Some(index) == ours || record.state.load(Ordering::Acquire) == FREE {
            continue;
        }
        let lock = PROCESS_LOCK_BASE + index as u64;
        if !sys::try_lock(file, lock)? {
            continue;
        }
        if record.state.load(Ordering::Acquire) != FREE {
            give_back(index);
            record.state.store(FREE, Ordering::Release);
            freed += 1;
        }
        let _ = sys::unlock(file, lock);
    }
    Ok(freed)
}

/// Marks this process's `slot` of `records` free and drops its lock (a
/// clean detach, after the caller gave back what the slot held).
pub fn free_slot(file: &File, records: &[ProcessRecord], slot: usize) {
    if let Some(record) = records.get(slot) {
        record.state.store(FREE, Ordering::Release);
    }
    let _ = sys::unlock(file, PROCESS_LOCK_BASE + slot as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_slot_and_generation_and_are_never_free_or_ready() {
        assert_eq!(owner_id(0, 1), 257);
        assert_eq!(slot_of(257), Some((0, 1)));
        assert_eq!(owner_id(255, 0), 256);
        assert_ne!(owner_id(3, 1), owner_id(3, 2));
        let largest = owner_id(MAX_PROCESSES - 1, GENERATIONS - 1);
        assert!(largest < u32::MAX);
        assert_eq!(owner_id(7, GENERATIONS), owner_id(7, 0));
        assert_eq!(owner_id(0, 0), 1);
        for (slot, generation) in [(0, 0), (5, 9), (255, GENERATIONS - 1)] {
            assert_eq!(
                slot_of(owner_id(slot, generation)),
                Some((slot, generation))
            );
        }
        assert_eq!(slot_of(0), None);
        assert_eq!(slot_of(u32::MAX), None);
    }
}
