//! [`SharedKeyTable`]: the core's key table in a file of its own, shared by
//! every process that opens it.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use sds_core::keyed::{
    KeyBucket, KeyError, KeyRule, KeyRuleKind, KeyTable, KeyTableState, SharedKeys,
};

use crate::error::Error;
use crate::keyed_layout::{
    rule_in_header, Keys, BUCKETS_OFFSET, KEY_FIELDS, KEY_LAYOUT_VERSION, KEY_MAGIC,
    KEY_STATE_OFFSET,
};
use crate::layout::{
    byte_order_mark, HEADER_BYTE_ORDER, HEADER_DESCRIPTOR, HEADER_MAGIC, HEADER_READY, HEADER_SIZE,
    HEADER_VERSION, READY,
};
use crate::mapping::{Mapping, Shared};
use crate::open::{self, Format};
use crate::registry::{self, Found, Registry};
use crate::Options;

// SAFETY: the core's `KeyTableState` is `repr(C)`, made only of integer
// atomics (any bit pattern is valid counters) and changed only through them.
unsafe impl Shared for KeyTableState {}

// SAFETY: the core's `KeyBucket` is `repr(C)`, four cells of two integer
// atomics each (any bit pattern is a valid cell: all zero is empty, a state
// of another generation reads as a fresh key's), changed only through them.
unsafe impl Shared for KeyBucket {}

/// A key table in a shared file: every process that opens the file with
/// the same capacity and rule decides on the same keys, host-wide.
///
/// The file holds no process slots: a process keeps no descriptor open
/// and no lock, so a fork child (a gunicorn or cluster worker) uses its
/// parent's `SharedKeyTable` as it is.
pub struct SharedKeyTable {
    // Declared before the mapping so it is dropped first: it borrows the
    // mapped memory.
    table: KeyTable<SharedKeys<'static>>,
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
    /// differ, is refused ([`Error::KeyMismatch`], naming the field), as is
    /// an `inFlight` rule ([`Error::InFlightNotShared`]: a killed process's
    /// units would stay held).
    pub fn open(
        path: impl AsRef<Path>,
        capacity: usize,
        rule: KeyRule,
        options: &Options,
    ) -> Result<SharedKeyTable, Error> {
        let path = path.as_ref();
        if rule.kind() == KeyRuleKind::InFlight {
            return Err(Error::InFlightNotShared { path: path.into() });
        }
        let key_error = |source| Error::Key {
            path: path.into(),
            source,
        };
        let format = Keys::new(capacity, rule).ok_or(key_error(KeyError::InvalidCapacity))?;
        let (mapping, created) = attach(path, &format, options)?;
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
        Ok(SharedKeyTable {
            table: KeyTable::new(storage, rule).map_err(key_error)?,
            _mapping: mapping,
            path: path.into(),
            created,
        })
    }

    /// The core's table over the file: `decide`, `peek`, `reset`, `stats`.
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
            let file = open_unattached(path, options, &registry)?;
            file.read_exact_at(&mut header, 0)
                .map_err(|_| Error::Truncated {
                    path: path.into(),
                    expected: HEADER_SIZE as u64,
                    found: file.metadata().map_or(0, |m| m.len()),
                })?;
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
