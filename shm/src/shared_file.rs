//! `SharedFile`: this process's attachment to a table file.

use std::fmt;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sds_core::{Held, LayoutField, Owner, PointId};

use crate::core_table::{Memory, Slot, Table, TableState};
use crate::error::{io_error, Error};
use crate::fork_lock::ForkLock;
use crate::layout::{Layout, HEADER_LAST_SCAN, MAX_PROCESSES, PROCESSES_OFFSET};
use crate::mapping::Mapping;
use crate::open::{self, FileKey};
use crate::processes::{self, ProcessRecord, Registration};
use crate::registry::{self, Found};
use crate::roles;
use crate::sys;

/// How to open a table file.
#[derive(Clone, Debug)]
pub struct Options {
    group: bool,
    pub(crate) init_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            group: false,
            init_timeout: Duration::from_secs(5),
        }
    }
}

impl Options {
    /// Mode 0600, a 5 s wait for another process's initialisation.
    pub fn new() -> Options {
        Options::default()
    }

    /// Mode 0660 instead of 0600: the file's group may attach too (it must
    /// still be owned by this user).
    pub fn group_access(mut self, group: bool) -> Options {
        self.group = group;
        self
    }

    /// The options of a file mode a user gave: 0600, or 0660 for the
    /// user's group too; [`Error::InvalidMode`] otherwise.
    pub fn of_mode(mode: u32) -> Result<Options, Error> {
        match mode {
            0o600 => Ok(Options::new()),
            0o660 => Ok(Options::new().group_access(true)),
            _ => Err(Error::InvalidMode { mode }),
        }
    }

    /// How long to wait for another process to finish initialising.
    pub fn init_timeout(mut self, timeout: Duration) -> Options {
        self.init_timeout = timeout;
        self
    }

    /// The mode a new file gets (before the umask), and the most an
    /// existing one may grant.
    pub fn mode(&self) -> u32 {
        if self.group {
            0o660
        } else {
            0o600
        }
    }
}

/// A table file attached to this process: mapped, with a process slot.
/// Clones share the attachment; the last one to go detaches.
#[derive(Clone)]
pub struct SharedFile {
    inner: Arc<Attachment>,
}

/// The descriptors to close on detach: the attachment's, and any a racing
/// open of the same file made (closing it early would drop our locks).
struct Handles {
    file: File,
    parked: Mutex<Vec<File>>,
}

/// This process's attachment to a table file (shared by the clones of a
/// [`SharedFile`]). As the core's `Liveness` of the views [`SharedFile::table`]
/// makes, it answers for the owner ids of the file's process slots.
pub struct Attachment {
    path: PathBuf,
    key: FileKey,
    layout: Layout,
    created: bool,
    mapping: Mapping,
    /// `None` only inside `drop`.
    handles: Option<Handles>,
    /// The fork epoch (`sys::fork_epoch`) `owner` was registered in: any
    /// other means this process is a fork child that has not registered.
    epoch: AtomicU64,
    owner: AtomicU32,
    /// Free in a fork child whatever the parent's threads were doing: the
    /// child registers anew before it reads it.
    registration: ForkLock<Registration>,
    /// Who in this process holds each host-wide role (`roles.rs`).
    roles: roles::Holders,
}

static NO_STATE: TableState = TableState::new();

/// The least time between two scans for dead holders on refused requests
/// ([`SharedFile::on_refused`]), host-wide.
pub const SCAN_INTERVAL_MS: u64 = 1_000;

impl SharedFile {
    /// Opens the table file at `path`, creating and initialising it if
    /// needed, and registers this process in it. A file this process has
    /// already attached is shared, not opened again.
    pub fn open(
        path: impl AsRef<Path>,
        capacity: usize,
        options: &Options,
    ) -> Result<SharedFile, Error> {
        let path = path.as_ref();
        sds_core::check_capacity(capacity).map_err(|_| Error::InvalidCapacity { capacity })?;
        sys::watch_forks().map_err(io_error(path, "pthread_atfork"))?;
        let start = Instant::now();
        let mut opened: Option<(File, FileKey)> = None;
        loop {
            let mut registry = registry::lock();
            let key = match &opened {
                Some((_, key)) => Some(*key),
                None => std::fs::symlink_metadata(path)
                    .ok()
                    .filter(|m| m.file_type().is_file())
                    .map(|m| (m.dev(), m.ino())),
            };
            match key.map_or(Found::Absent, |key| registry.find(key)) {
                Found::Live(inner) => {
                    if let Some((file, _)) = opened.take() {
                        inner.park(file);
                    }
                    // Unlocked before `inner` may drop (its drop locks).
                    drop(registry);
                    return SharedFile { inner }.of_capacity(path, capacity);
                }
                Found::Closing => {
                    drop(registry);
                    let waited = start.elapsed();
                    if waited >= options.init_timeout {
                        return Err(Error::InitTimeout {
                            path: path.into(),
                            waited,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                Found::Absent => {}
            }
            let (file, key) = match opened.take() {
                Some(opened) => opened,
                None => {
                    let fresh = open::open_checked(path, options.mode())?;
                    if !matches!(registry.find(fresh.1), Found::Absent) {
                        // The path changed to a file we have attached.
                        opened = Some(fresh);
                        continue;
                    }
                    fresh
                }
            };
            let inner = Arc::new(Attachment::attach(path, file, key, capacity, options)?);
            registry.insert(key, &inner);
            return Ok(SharedFile { inner });
        }
    }

    fn of_capacity(self, path: &Path, capacity: usize) -> Result<SharedFile, Error> {
        if capacity == self.capacity() {
            Ok(self)
        } else {
            Err(Error::LayoutMismatch {
                path: path.into(),
                field: LayoutField::Capacity,
                ours: capacity as u64,
                theirs: self.capacity() as u64,
            })
        }
    }

    /// The descriptor this process's record locks are taken through.
    pub(crate) fn lock_file(&self) -> &File {
        self.inner.file()
    }

    pub(crate) fn holders(&self) -> &roles::Holders {
        &self.inner.roles
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The table's capacity.
    pub fn capacity(&self) -> usize {
        self.inner.layout.capacity
    }

    /// Whether this process initialised the file.
    pub fn created(&self) -> bool {
        self.inner.created
    }

    /// This process's owner id (its process slot and that slot's
    /// generation, see [`Registration::owner`]), registering it first if it
    /// is a fork child that has not yet. Inline: two loads and a compare
    /// once registered.
    #[inline]
    pub fn owner(&self) -> Result<u32, Error> {
        let inner = &self.inner;
        if inner.epoch.load(Ordering::Acquire) == sys::fork_epoch() {
            return Ok(inner.owner.load(Ordering::Relaxed));
        }
        self.register_child()
    }

    #[cold]
    #[inline(never)]
    fn register_child(&self) -> Result<u32, Error> {
        Ok(self.registration()?.owner)
    }

    /// This process's registration, made first if it is a fork child that
    /// has none yet.
    pub fn registration(&self) -> Result<Registration, Error> {
        let inner = &self.inner;
        let mut registration = inner.registration.lock();
        let epoch = sys::fork_epoch();
        if inner.epoch.load(Ordering::Acquire) != epoch {
            *registration = inner.register()?;
            inner.owner.store(registration.owner, Ordering::Relaxed);
            inner.epoch.store(epoch, Ordering::Release);
        }
        Ok(*registration)
    }

    /// Whether the process holding owner id `owner` is alive: this process
    /// for its own id, otherwise whether the id's process slot is still at
    /// the id's generation and another process holds its lock. Ids no
    /// registration makes (0 included) are not alive.
    pub fn is_alive(&self, owner: u32) -> bool {
        self.inner.is_alive(owner)
    }

    /// The mapped slots.
    pub fn slots(&self) -> &[Slot] {
        self.inner.memory().map_or(&[], |memory| memory.slots)
    }

    /// The mapped table state block.
    pub fn table_state(&self) -> &TableState {
        self.inner.memory().map_or(&NO_STATE, |memory| memory.state)
    }

    /// The ledger row of process slot `process`: the permits its holder
    /// holds, per point (empty for a slot out of range).
    pub fn ledger_row(&self, process: usize) -> &[Held] {
        self.inner
            .memory()
            .map_or(&[], |memory| memory.row(process))
    }

    /// The core's view of the table, as this process's owner (registering
    /// it first if it is a fork child), asking the file's process slots
    /// about the others and counting its permits in this process's ledger
    /// row. A view made before a `fork` holds the parent's owner and row: a
    /// child makes its own.
    pub fn table(&self) -> Result<Table<'_>, Error> {
        let id = self.owner()?;
        let corrupt = |what| Error::Corrupt {
            path: self.inner.path.clone(),
            what,
        };
        let owner = Owner::new(id).ok_or_else(|| corrupt("owner id"))?;
        let (process, _) = processes::slot_of(id).ok_or_else(|| corrupt("owner id"))?;
        let memory = self.inner.memory().ok_or_else(|| corrupt("table memory"))?;
        memory
            .table(owner, process, &self.inner)
            .map_err(|source| Error::Core {
                path: self.inner.path.clone(),
                source,
            })
    }

    /// Call when a request on point `point` was refused for its
    /// concurrency threshold (`Reason::Concurrent`), with the request's
    /// `now_ms`: at most once per [`SCAN_INTERVAL_MS`] per table, host-wide
    /// (a timestamp in the file's header), it scans the process slots for
    /// holders that died, gives their permits back
    /// ([`SharedFile::reclaim_dead`]), and recounts `point` from the live
    /// processes' ledger rows ([`SharedFile::recount`]); otherwise one load.
    /// A refused request is the only sign a dead process's permits give, so
    /// a threshold blocked by them frees itself within about a second of
    /// refusals, and the passing path pays nothing. A clock more than an
    /// interval behind the stored time counts as due (another clock base, or
    /// a reset). Returns the permits given back (0 on errors).
    #[cold]
    pub fn on_refused(&self, point: PointId, now_ms: u64) -> u64 {
        let Some(last_scan) = self.inner.last_scan() else {
            return 0;
        };
        let last = last_scan.load(Ordering::Relaxed);
        let due = now_ms >= last.saturating_add(SCAN_INTERVAL_MS)
            || now_ms.saturating_add(SCAN_INTERVAL_MS) <= last;
        // One process of the host scans per interval: whoever moves the time.
        if !due
            || last_scan
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return 0;
        }
        let returned = self.reclaim_dead().unwrap_or(0);
        let _ = self.recount(point);
        returned
    }

    /// Gives back the permits of every process that died attached to the
    /// file (its process slot still "in use", its lock free), each exactly
    /// once however many processes notice, and frees their process slots;
    /// each point a dead process held permits on is recounted from the live
    /// processes' rows. Done on attach and by [`SharedFile::on_refused`];
    /// one `fcntl` per process slot in use. Returns the permits given back.
    pub fn reclaim_dead(&self) -> Result<u64, Error> {
        let inner = &self.inner;
        // A fork child registers first: it recounts as itself.
        self.owner()?;
        // Held so no thread of this process claims a slot meanwhile.
        let registration = inner.registration.lock();
        let records = records(&inner.mapping).ok_or_else(|| inner.corrupt("process slots"))?;
        let memory = inner
            .memory()
            .ok_or_else(|| inner.corrupt("table memory"))?;
        processes::reclaim_dead(
            inner.file(),
            records,
            Some(registration.slot),
            registration.owner,
            &memory,
        )
        .map_err(|source| Error::Io {
            path: inner.path.clone(),
            action: "fcntl(F_SETLK)",
            source,
        })
    }

    /// Makes point `id`'s count of permits in flight the sum of the live
    /// processes' ledger rows (`sds_core::PointTable::recount`): exact
    /// again, whatever happened to it. The point takes and returns no permit
    /// while the rows are read (one compare-and-swap per process slot, in
    /// use or not: each counter is tagged). Returns the new count.
    pub fn recount(&self, id: PointId) -> Result<u32, Error> {
        let inner = &self.inner;
        let owner = self.owner()?;
        let records = records(&inner.mapping).ok_or_else(|| inner.corrupt("process slots"))?;
        let memory = inner
            .memory()
            .ok_or_else(|| inner.corrupt("table memory"))?;
        let live = processes::every_row(records, &memory);
        let owner = Owner::new(owner).ok_or_else(|| inner.corrupt("owner id"))?;
        memory
            .recount(id, owner, &**inner, &live)
            .map_err(|source| Error::Core {
                path: inner.path.clone(),
                source,
            })
    }
}

/// Changes in every fork child of the process (a `pthread_atfork` handler
/// counts forks): a view made under another value holds the owner of the
/// process it was made in. One relaxed load.
#[inline]
pub fn fork_epoch() -> u64 {
    sys::fork_epoch()
}

impl Attachment {
    fn is_alive(&self, owner: u32) -> bool {
        if self.epoch.load(Ordering::Acquire) == sys::fork_epoch()
            && self.owner.load(Ordering::Relaxed) == owner
        {
            return true;
        }
        match records(&self.mapping) {
            Some(records) => processes::held_by_other(self.file(), records, owner),
            None => true,
        }
    }
}

impl sds_core::Liveness for Attachment {
    fn is_alive(&self, owner: u32) -> bool {
        Attachment::is_alive(self, owner)
    }

    #[cfg(feature = "test-hooks")]
    fn checkpoint(&self, at: sds_core::Checkpoint) {
        crate::hooks::checkpoint(at);
    }
}

impl fmt::Debug for SharedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedFile")
            .field("path", &self.inner.path)
            .field("capacity", &self.capacity())
            .field("created", &self.created())
            .field("owner", &self.inner.owner.load(Ordering::Relaxed))
            .finish()
    }
}

impl Attachment {
    fn attach(
        path: &Path,
        file: File,
        key: FileKey,
        capacity: usize,
        options: &Options,
    ) -> Result<Attachment, Error> {
        let open::Attached {
            mapping,
            layout,
            created,
        } = open::attach_or_create(path, &file, capacity, options.init_timeout)?;
        let corrupt = |what| Error::Corrupt {
            path: path.into(),
            what,
        };
        let memory = Memory::of(&mapping, &layout).ok_or(corrupt("table memory"))?;
        let epoch = sys::fork_epoch();
        let records = records(&mapping).ok_or(corrupt("process slots"))?;
        let registration = claim(path, &file, records, &memory)?;
        Ok(Attachment {
            path: path.into(),
            key,
            layout,
            created,
            mapping,
            handles: Some(Handles {
                file,
                parked: Mutex::new(Vec::new()),
            }),
            epoch: AtomicU64::new(epoch),
            owner: AtomicU32::new(registration.owner),
            registration: ForkLock::new(registration),
            roles: Default::default(),
        })
    }

    fn memory(&self) -> Option<Memory<'_>> {
        Memory::of(&self.mapping, &self.layout)
    }

    /// The header word of the last scan for dead holders.
    fn last_scan(&self) -> Option<&AtomicU64> {
        self.mapping
            .view::<AtomicU64>(HEADER_LAST_SCAN * 8, 1)?
            .first()
    }

    fn corrupt(&self, what: &'static str) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            what,
        }
    }

    fn file(&self) -> &File {
        // Taken only by `drop`, after which nothing can call this.
        &self.handles.as_ref().expect("handles live until drop").file
    }

    fn park(&self, file: File) {
        if let Some(handles) = &self.handles {
            handles
                .parked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(file);
        }
    }

    fn register(&self) -> Result<Registration, Error> {
        let records = records(&self.mapping).ok_or_else(|| self.corrupt("process slots"))?;
        let memory = self.memory().ok_or_else(|| self.corrupt("table memory"))?;
        claim(&self.path, self.file(), records, &memory)
    }
}

fn records(mapping: &Mapping) -> Option<&[ProcessRecord]> {
    mapping.view::<ProcessRecord>(PROCESSES_OFFSET, MAX_PROCESSES)
}

/// Takes a process slot (giving back its dead holder's permits), then gives
/// back those of every other process that died attached: a process that
/// attaches frees what the dead left at once. The caller keeps the other
/// threads of this process from claiming meanwhile.
fn claim(
    path: &Path,
    file: &File,
    records: &[ProcessRecord],
    memory: &Memory<'_>,
) -> Result<Registration, Error> {
    let io = |source| Error::Io {
        path: path.into(),
        action: "fcntl(F_SETLK)",
        source,
    };
    let registration =
        processes::claim(file, records, memory)
            .map_err(io)?
            .ok_or(Error::NoProcessSlot {
                path: path.into(),
                max: MAX_PROCESSES,
            })?;
    processes::reclaim_dead(
        file,
        records,
        Some(registration.slot),
        registration.owner,
        memory,
    )
    .map_err(io)?;
    Ok(registration)
}

impl Drop for Attachment {
    fn drop(&mut self) {
        // Closing under the registry lock: an open of this file in the
        // meantime waits, instead of attaching and then losing its locks to
        // this close.
        let mut registry = registry::lock();
        if let (Some(handles), Some(records), Some(memory)) = (
            &self.handles,
            records(&self.mapping),
            Memory::of(&self.mapping, &self.layout),
        ) {
            if self.epoch.load(Ordering::Acquire) == sys::fork_epoch() {
                let registration = *self.registration.lock();
                processes::release(&handles.file, records, &registration, &memory);
            }
        }
        self.handles = None;
        registry.remove_closed(self.key);
        // The mapping is unmapped after this, when the fields drop.
    }
}
