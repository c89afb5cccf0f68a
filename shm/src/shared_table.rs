//! [`SharedTable`]: a table file opened once and this process's view of it
//! on every call, as a binding holds it (the C ABI, Python and Node each
//! keep one per client), and [`View`], whose `enter` gives back a dead
//! holder's permits after a refusal for concurrency.

use std::ops::Deref;
use std::path::Path;
use std::sync::OnceLock;

use sds_core::{Entry, Flags, PointId, Reason};

use crate::{Error, Options, SharedFile, Table};

/// This process's attachment to a table file, and its views of the table.
///
/// A view holds the owner id and the ledger row (where its permits are
/// counted) of the process it was made in, so a fork child must not use its
/// parent's. The view made at open serves the process that opened (one load
/// and a compare of the fork epoch per call); a fork child (a gunicorn,
/// multiprocessing or cluster worker) makes its own view on its first call,
/// which registers it in its own process slot, and keeps it; a process
/// further down (a child of a child that had made its view) makes one per
/// call.
pub struct SharedTable {
    // The views are declared before `file` so they are dropped first: they
    // borrow the mapping that `file` keeps alive.
    view: Table<'static>,
    /// `fork_epoch()` when `view` was made.
    epoch: u64,
    /// Boxed: a fork child's view, rarely made, kept out of the struct.
    child: OnceLock<Box<(u64, Table<'static>)>>,
    file: SharedFile,
}

/// This process's view of a [`SharedTable`] for one call: every method of
/// the core's table through `Deref`, and `enter`/`enter_point` that, when
/// they refuse a request for its concurrency threshold, let the file give
/// back the permits of processes that died holding some
/// ([`SharedFile::on_refused`]).
pub struct View<'a> {
    table: Kept<'a>,
    file: &'a SharedFile,
}

/// A view kept by the `SharedTable`, or made for the call.
enum Kept<'a> {
    Kept(&'a Table<'a>),
    /// Boxed: the common case stays one pointer wide.
    Made(Box<Table<'a>>),
}

impl<'a> Deref for View<'a> {
    type Target = Table<'a>;

    #[inline(always)]
    fn deref(&self) -> &Table<'a> {
        match &self.table {
            Kept::Kept(view) => view,
            Kept::Made(view) => view,
        }
    }
}

impl View<'_> {
    /// The core's `enter_point`; a refusal for concurrency then scans for
    /// dead holders (rate-limited host-wide, see [`SharedFile::on_refused`]).
    /// Every other request pays one well-predicted branch.
    #[inline(always)]
    pub fn enter_point(
        &self,
        id: PointId,
        now_ms: u64,
        flags: Flags,
    ) -> Result<Entry, sds_core::Error> {
        let entry = (**self).enter_point(id, now_ms, flags)?;
        if entry.reason() == Some(Reason::Concurrent) {
            self.file.on_refused(id, now_ms);
        }
        Ok(entry)
    }

    /// The core's `enter` (by name, creating the point), with
    /// [`View::enter_point`]'s scan after a refusal for concurrency.
    #[inline(always)]
    pub fn enter(&self, name: &[u8], now_ms: u64, flags: Flags) -> Result<Entry, sds_core::Error> {
        self.enter_point((**self).insert(name)?, now_ms, flags)
    }
}

impl SharedTable {
    /// Opens the table file at `path` ([`SharedFile::open`]) and makes this
    /// process's view of it.
    pub fn open(
        path: impl AsRef<Path>,
        capacity: usize,
        options: &Options,
    ) -> Result<SharedTable, Error> {
        let file = SharedFile::open(path, capacity, options)?;
        let view = file.table()?;
        Ok(SharedTable {
            // SAFETY: see `forever`.
            view: unsafe { forever(view) },
            epoch: crate::fork_epoch(),
            child: OnceLock::new(),
            file,
        })
    }

    /// This process's view of the table: a fork child registers in its own
    /// process slot before its first call (which may fail).
    #[inline(always)]
    pub fn view(&self) -> Result<View<'_>, Error> {
        if crate::fork_epoch() == self.epoch {
            Ok(View {
                table: Kept::Kept(&self.view),
                file: &self.file,
            })
        } else {
            self.forked_view()
        }
    }

    #[cold]
    #[inline(never)]
    fn forked_view(&self) -> Result<View<'_>, Error> {
        let epoch = crate::fork_epoch();
        let (at, kept) = match self.child.get() {
            Some(kept) => &**kept,
            None => {
                // SAFETY: see `forever`.
                let view = unsafe { forever(self.file.table()?) };
                // Another thread of this child may have set it first: then
                // that view is this same process's, as good as ours.
                &**self.child.get_or_init(|| Box::new((epoch, view)))
            }
        };
        let table = if *at == epoch {
            Kept::Kept(kept)
        } else {
            Kept::Made(Box::new(self.file.table()?))
        };
        Ok(View {
            table,
            file: &self.file,
        })
    }

    /// The table's capacity.
    pub fn capacity(&self) -> usize {
        self.file.capacity()
    }

    /// How many points the table holds (the same from every process).
    pub fn len(&self) -> usize {
        self.view.len()
    }

    /// Whether the table holds no point yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The attachment to the file.
    pub fn file(&self) -> &SharedFile {
        &self.file
    }
}

/// A view of `SharedTable`'s file at `'static`, to be kept beside it.
///
/// # Safety
/// The view borrows the state, slots and ledger rows of the file's mapping
/// and the attachment, both owned by the `Arc` behind the `SharedFile`
/// (moving the `SharedFile` or the `SharedTable` does not move them) and
/// freed only when its last clone drops. The caller keeps the view in the
/// same `SharedTable` as the file, declared before it (dropped first); the
/// `'static` never leaks: `view()` hands views out at `&self`'s lifetime.
unsafe fn forever(view: Table<'_>) -> Table<'static> {
    // SAFETY: the caller's contract.
    unsafe { std::mem::transmute::<Table<'_>, Table<'static>>(view) }
}
