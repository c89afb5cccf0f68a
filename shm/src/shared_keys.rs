//! [`SharedKeyTable`]: the core's key table in a file of its own, shared by
//! every process that opens it.

mod ledgered;

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sds_core::keyed::{
    KeyBucket, KeyDecision, KeyError, KeyLedger, KeyLedgerEntry, KeyRule, KeyTable, KeyTableState,
    SharedKeys, NEVER,
};

pub(crate) use ledgered::{processes as files, KeyFiles};
use ledgered::{KeyProcess, Ledgered};

use crate::error::{io_error, Error};
use crate::keyed_layout::{
    rule_in_header, Keys, BUCKETS_OFFSET, KEY_FIELDS, KEY_LAYOUT_VERSION, KEY_MAGIC, KEY_PROCESSES,
    KEY_STATE_OFFSET, LEDGER_ROW,
};
use crate::layout::{
    byte_order_mark, HEADER_BYTE_ORDER, HEADER_DESCRIPTOR, HEADER_MAGIC, HEADER_READY, HEADER_SIZE,
    HEADER_VERSION, READY,
};
use crate::mapping::{Mapping, Shared};
use crate::open::{self, Format};
use crate::processes::ProcessRecord;
use crate::registry::{self, Found, Registry};
use crate::sys;
use crate::Options;

// SAFETY: the core's `KeyTableState` is `repr(C)`, made only of integer
// atomics (any bit pattern is valid counters) and changed only through them.
unsafe impl Shared for KeyTableState {}

// SAFETY: the core's `KeyBucket` is `repr(C)`, four cells of two integer
// atomics each (any bit pattern is a valid cell: all zero is empty, a state
// of another generation reads as a fresh key's), changed only through them.
unsafe impl Shared for KeyBucket {}

// SAFETY: the core's `KeyLedgerEntry` is `repr(C)`, four integer atomics
// (any bit pattern is a valid entry: all zero is free), changed only
// through them.
unsafe impl Shared for KeyLedgerEntry {}

/// A key table in a shared file: every process that opens the file with
/// the same capacity and rule decides on the same keys, host-wide.
///
/// A rate's or a window's file holds no process slots: a process keeps no
/// descriptor open and no lock, so a fork child (a gunicorn or cluster
/// worker) uses its parent's `SharedKeyTable` as it is. An in-flight file
/// also keeps which process holds which units (a process slot and a ledger
/// row each, `ledgered.rs`), so that the units of a process that dies are
/// given back: a process keeps the file's descriptor open (one for all its
/// handles of the file) and the lock of its slot; a fork child takes a
/// slot of its own on its first call. Decide and release in-flight units
/// through [`SharedKeyTable::decide`] and [`SharedKeyTable::release`] (or
/// `AnyKeys`), which keep the ledger, not through [`SharedKeyTable::table`].
pub struct SharedKeyTable {
    // Declared before the mapping so they are dropped first: they borrow
    // the mapped memory.
    table: KeyTable<SharedKeys<'static>>,
    ledger: Option<Ledgered>,
    /// Kept for its drop, which unmaps.
    _mapping: Mapping,
    path: PathBuf,
    created: bool,
}

// A binding shares one handle between threads.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<SharedKeyTable>();
};

impl SharedKeyTable {
    /// Opens the key table file at `path`, creating it if needed for
    /// `capacity` keys (rounded up to buckets of 4) deciding by `rule`.
    /// A file made for another capacity or rule, or by a build whose cells
    /// differ, is refused ([`Error::KeyMismatch`], naming the field). An
    /// in-flight file takes this process a slot
    /// ([`Error::NoProcessSlot`] when every one is held by a live process),
    /// giving back the units of the processes that died holding one.
    pub fn open(
        path: impl AsRef<Path>,
        capacity: usize,
        rule: KeyRule,
        options: &Options,
    ) -> Result<SharedKeyTable, Error> {
        let path = path.as_ref();
        let key_error = |source| Error::Key {
            path: path.into(),
            source,
        };
        let format = Keys::new(capacity, rule).ok_or(key_error(KeyError::InvalidCapacity))?;
        sys::watch_forks().map_err(io_error(path, "pthread_atfork"))?;
        let (mapping, created, process) = match format.ledgered() {
            true => attach_ledgered(path, &format, options).map(|(m, c, p)| (m, c, Some(p)))?,
            false => attach(path, &format, options).map(|(m, c)| (m, c, None))?,
        };
        let corrupt = || Error::Corrupt {
            path: path.into(),
            what: "key table memory",
        };
        let state = mapping.view::<KeyTableState>(KEY_STATE_OFFSET, 1);
        let buckets = mapping.view::<KeyBucket>(BUCKETS_OFFSET, format.buckets());
        let (Some([state]), Some(buckets)) = (state, buckets) else {
            return Err(corrupt());
        };
        let storage = SharedKeys { state, buckets };
        // SAFETY: `storage` borrows the mapped memory, which stays at its
        // address (moving `Mapping` does not move it) until the mapping is
        // dropped; `table` is dropped before it (field order) and is handed
        // out only at `&self`'s lifetime, so the `'static` never leaks.
        let storage =
            unsafe { std::mem::transmute::<SharedKeys<'_>, SharedKeys<'static>>(storage) };
        let ledger = match process {
            Some(process) => Some(ledger_in(&mapping, &format, process).ok_or_else(corrupt)?),
            None => None,
        };
        let table = SharedKeyTable {
            table: KeyTable::new(storage, rule).map_err(key_error)?,
            ledger,
            _mapping: mapping,
            path: path.into(),
            created,
        };
        if let Some(ledger) = &table.ledger {
            ledger
                .slot(&table.table)
                .map_err(|_| Error::NoProcessSlot {
                    path: path.into(),
                    max: KEY_PROCESSES,
                })?;
        }
        Ok(table)
    }

    /// [`KeyTable::decide`], keeping the ledger of an in-flight file. A
    /// call refused there (the key at its limit, or every candidate
    /// holding units) first gives back the units of processes that died,
    /// at most once per 100 ms per process, and is decided again if any
    /// were. [`KeyError::LedgerFull`] when this process holds units on
    /// as many keys as its ledger row keeps; [`KeyError::NoProcessSlot`]
    /// when a fork child finds no slot.
    #[inline]
    pub fn decide(&self, key: &[u8], now_ms: u64, cost: u32) -> Result<KeyDecision, KeyError> {
        let Some(ledger) = &self.ledger else {
            return self.table.decide(key, now_ms, cost);
        };
        let slot = ledger.slot(&self.table)?;
        let first = self.table.decide_ledgered(&ledger.rows, slot, key, cost);
        let refused = match &first {
            Ok(d) => !d.admitted && d.retry_after_ms != NEVER,
            Err(e) => *e == KeyError::TableFull,
        };
        if refused && ledger.sweep_due() && ledger.reclaim_dead(&self.table).unwrap_or(0) > 0 {
            return self.table.decide_ledgered(&ledger.rows, slot, key, cost);
        }
        first
    }

    /// [`KeyTable::release`], keeping the ledger of an in-flight file: a
    /// process gives back only units it took itself.
    pub fn release(&self, key: &[u8], units: u32) -> Result<bool, KeyError> {
        let Some(ledger) = &self.ledger else {
            return self.table.release(key, units);
        };
        let slot = ledger.slot(&self.table)?;
        self.table.release_ledgered(&ledger.rows, slot, key, units)
    }

    /// Gives back the units of every process that died holding a slot of
    /// an in-flight file (the others hold none): how many. Calls refused
    /// and new processes do it too; this is for a caller that wants it
    /// now.
    pub fn reclaim_dead(&self) -> Result<u64, Error> {
        let Some(ledger) = &self.ledger else {
            return Ok(0);
        };
        ledger
            .reclaim_dead(&self.table)
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                action: "fcntl(F_SETLK)",
                source,
            })
    }

    /// The units this process holds in an in-flight file, by its ledger
    /// row (0 for other rules, or before its first call after a fork).
    pub fn held_here(&self) -> u64 {
        let Some(ledger) = &self.ledger else {
            return 0;
        };
        ledger
            .own_slot()
            .map_or(0, |slot| ledger.rows.held_by(slot))
    }

    /// The core's table over the file: `peek`, `reset`, `stats`, and
    /// `decide` and `release` of rules other than in flight.
    #[inline(always)]
    pub fn table(&self) -> &KeyTable<SharedKeys<'_>> {
        &self.table
    }

    /// The rule (the file's: equal to the one given to `open`).
    pub fn rule(&self) -> &KeyRule {
        self.table.rule()
    }

    /// How many keys fit (the capacity asked for, rounded up to buckets).
    pub fn capacity(&self) -> usize {
        self.table.capacity()
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this process initialised the file.
    pub fn created(&self) -> bool {
        self.created
    }

    /// The rule of the ready key table file at `path`, read back from its
    /// header (exceptions by fingerprint), for a process that does not know
    /// it: `open` the file with it. The path is checked as `open` checks it
    /// (a missing file is an [`Error::Io`], not created);
    /// a file that is no key table, of another version or cell layout, or
    /// not ready is refused, and a header whose rule does not match its
    /// digest is [`Error::Corrupt`].
    pub fn read_rule(path: impl AsRef<Path>, options: &Options) -> Result<KeyRule, Error> {
        let path = path.as_ref();
        sys::watch_forks().map_err(io_error(path, "pthread_atfork"))?;
        // `open` creates a missing file; reading one must not.
        if let Err(source) = std::fs::symlink_metadata(path) {
            let action = "open";
            return Err(Error::Io {
                path: path.into(),
                action,
                source,
            });
        }
        let mut header = vec![0u8; HEADER_SIZE];
        {
            // The descriptor is closed before the lock is let go (`attach`).
            let registry = registry::lock();
            let list = ledgered::processes();
            // An in-flight file this process keeps is read through its
            // descriptor: closing another would drop its slot lock.
            let known = std::fs::symlink_metadata(path).ok();
            let kept = known.and_then(|m| ledgered::find(&list, (m.dev(), m.ino())));
            let mut read = |file: &File| {
                file.read_exact_at(&mut header, 0)
                    .map_err(|_| Error::Truncated {
                        path: path.into(),
                        expected: HEADER_SIZE as u64,
                        found: file.metadata().map_or(0, |m| m.len()),
                    })
            };
            match kept {
                Some(process) => read(&process.file)?,
                None => read(&open_unattached(path, options, &registry)?)?,
            }
        }
        let word = |i: usize| {
            let bytes: [u8; 8] = header[i * 8..i * 8 + 8].try_into().unwrap_or_default();
            u64::from_ne_bytes(bytes)
        };
        if word(HEADER_MAGIC).to_ne_bytes() != KEY_MAGIC {
            return Err(Error::NotATable { path: path.into() });
        }
        if word(HEADER_VERSION) != KEY_LAYOUT_VERSION {
            return Err(Error::WrongVersion {
                path: path.into(),
                ours: KEY_LAYOUT_VERSION,
                theirs: word(HEADER_VERSION),
            });
        }
        let cells = u64::from(sds_core::keyed::KEY_LAYOUT_VERSION);
        let corrupt = |what| Error::Corrupt {
            path: path.into(),
            what,
        };
        if word(HEADER_BYTE_ORDER) != byte_order_mark() || word(HEADER_DESCRIPTOR) != cells {
            return Err(Error::KeyMismatch {
                path: path.into(),
                what: "layout",
                field: KEY_FIELDS[0],
                ours: cells.to_string(),
                theirs: word(HEADER_DESCRIPTOR).to_string(),
            });
        }
        if word(HEADER_READY) != READY {
            return Err(corrupt("key table header (not ready)"));
        }
        rule_in_header(&word).ok_or(corrupt("key table rule"))
    }
}

/// Opens `path` as `open` does, under the registry lock, refusing a point
/// table file this process has attached before opening a descriptor of it
/// (closing that descriptor would drop the attachment's locks).
fn open_unattached(path: &Path, options: &Options, registry: &Registry) -> Result<File, Error> {
    let attached_here = |key| !matches!(registry.find(key), Found::Absent);
    let other_kind = || Error::OtherKind {
        path: path.into(),
        theirs: open::Points::KIND,
        ours: Keys::KIND,
    };
    let known = std::fs::symlink_metadata(path).ok();
    if known.is_some_and(|m| m.file_type().is_file() && attached_here((m.dev(), m.ino()))) {
        return Err(other_kind());
    }
    let (file, key) = open::open_checked(path, options.mode())?;
    if attached_here(key) {
        // The path became an attached point table's file since it was
        // looked at: closing this descriptor would drop that attachment's
        // locks, so it is kept open.
        std::mem::forget(file);
        return Err(other_kind());
    }
    Ok(file)
}

/// Opens, checks and maps the key file, or initialises it, under the
/// registry lock: a point table file this process has attached is refused
/// before it is opened (closing a second descriptor of it would drop this
/// process's locks on it), and no other open in this process closes a
/// descriptor of the file while this one holds its init lock. The
/// descriptor is closed before the lock is let go: the mapping is all a
/// key table keeps.
fn attach(path: &Path, format: &Keys, options: &Options) -> Result<(Mapping, bool), Error> {
    let registry = registry::lock();
    let file = open_unattached(path, options, &registry)?;
    open::attach_or_create_as(path, &file, format, options.init_timeout)
}

/// The ledger and process slots of an in-flight file's mapping.
fn ledger_in(mapping: &Mapping, format: &Keys, process: Arc<KeyProcess>) -> Option<Ledgered> {
    let records = mapping.view::<ProcessRecord>(format.processes_offset(), KEY_PROCESSES)?;
    let entries = KEY_PROCESSES * LEDGER_ROW;
    let entries = mapping.view::<KeyLedgerEntry>(format.ledger_offset(), entries)?;
    // SAFETY: as the table's storage in `open`: the views borrow the
    // mapping, which `SharedKeyTable` drops after them (field order).
    let (records, entries) = unsafe {
        (
            std::mem::transmute::<&[ProcessRecord], &'static [ProcessRecord]>(records),
            std::mem::transmute::<&[KeyLedgerEntry], &'static [KeyLedgerEntry]>(entries),
        )
    };
    Some(Ledgered {
        rows: KeyLedger::new(entries, LEDGER_ROW)?,
        records,
        process,
    })
}

/// [`attach`] for an in-flight file, keeping its descriptor: the one this
/// process already keeps for the file if it has one (closing another
/// would drop this process's slot lock), else a new one, kept in the
/// attachment returned.
fn attach_ledgered(
    path: &Path,
    format: &Keys,
    options: &Options,
) -> Result<(Mapping, bool, Arc<KeyProcess>), Error> {
    let registry = registry::lock();
    let mut list = ledgered::processes();
    let known = std::fs::symlink_metadata(path).ok();
    let known = known.filter(|m| m.file_type().is_file());
    let known = known.and_then(|m| ledgered::find(&list, (m.dev(), m.ino())));
    if let Some(process) = known {
        let (mapping, created) =
            open::attach_or_create_as(path, &process.file, format, options.init_timeout)?;
        return Ok((mapping, created, process));
    }
    let file = open_unattached(path, options, &registry)?;
    let key = file.metadata().map(|m| (m.dev(), m.ino()));
    let key = key.map_err(io_error(path, "fstat"))?;
    let process = match ledgered::find(&list, key) {
        Some(process) => {
            // The path became a file this process keeps since it was
            // looked at: closing this descriptor would drop the locks.
            std::mem::forget(file);
            process
        }
        None => KeyProcess::attach(&mut list, file, key),
    };
    let (mapping, created) =
        open::attach_or_create_as(path, &process.file, format, options.init_timeout)?;
    Ok((mapping, created, process))
}

impl Drop for SharedKeyTable {
    fn drop(&mut self) {
        if let Some(ledger) = &self.ledger {
            let mut list = ledgered::processes();
            ledger.detach(&self.table, &mut list);
        }
    }
}

impl std::fmt::Debug for SharedKeyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedKeyTable")
            .field("path", &self.path)
            .field("capacity", &self.capacity())
            .field("rule", self.rule())
            .field("created", &self.created)
            .finish()
    }
}
