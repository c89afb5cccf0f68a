//! Opening the file and the create-or-attach protocol.
//!
//! Whoever holds the init lock (a POSIX write lock on [`INIT_LOCK`]) decides:
//! a ready header that matches is attached, one that does not is refused; a
//! file that is not ready (new, or its creator died half-way: its lock went
//! with it) is sized and written from scratch, the ready word last. A ready
//! file is never written by this protocol again.

use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sds_core::{LayoutDescriptor, LayoutField};

use crate::error::{io_error, Error};
use crate::keyed_layout::Keys;
use crate::layout::*;
use crate::mapping::Mapping;
use crate::sys;

/// The file's identity in this host: (device, inode).
pub type FileKey = (u64, u64);

/// Opens (creating if needed) the file at `path` read-write without
/// following a symbolic link, then checks what it is.
pub fn open_checked(path: &Path, mode: u32) -> Result<(File, FileKey), Error> {
    let opened = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) => match e.raw_os_error() {
            Some(libc::ELOOP) => return Err(Error::Symlink { path: path.into() }),
            Some(libc::EISDIR) => {
                return Err(Error::NotRegularFile {
                    path: path.into(),
                    kind: "directory",
                })
            }
            // In a sticky world-writable directory (/dev/shm, /tmp) the
            // kernel refuses O_CREAT on another user's file: open it without
            // to say whose it is.
            Some(libc::EACCES) => OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .map_err(|_| Error::Io {
                    path: path.into(),
                    action: "open",
                    source: e,
                })?,
            _ => return Err(io_error(path, "open")(e)),
        },
    };
    let meta = file.metadata().map_err(io_error(path, "fstat"))?;
    check(path, &meta, mode)?;
    Ok((file, (meta.dev(), meta.ino())))
}

fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

/// A regular file granting nothing beyond `allowed`, of this user; or, when
/// `allowed` opens the file to a group (0660), of a group this process is
/// in (workers of one group under several users).
fn check(path: &Path, meta: &Metadata, allowed: u32) -> Result<(), Error> {
    if !meta.file_type().is_file() {
        return Err(Error::NotRegularFile {
            path: path.into(),
            kind: kind(meta),
        });
    }
    let euid = sys::euid();
    let group = (allowed & 0o060 != 0).then_some(meta.gid());
    if meta.uid() != euid && !group.is_some_and(sys::in_group) {
        return Err(Error::WrongOwner {
            path: path.into(),
            owner: meta.uid(),
            euid,
            group,
        });
    }
    let mode = meta.mode() & 0o7777;
    if mode & !allowed != 0 {
        return Err(Error::ModeTooWide {
            path: path.into(),
            mode,
            allowed,
        });
    }
    Ok(())
}

/// A kind of table file: what its header holds past the magic and the
/// version, and how long it is. The point table ([`Points`]) and the key
/// table (`keyed_layout.rs`) go through the one protocol below.
pub trait Format {
    /// The file's first 8 bytes.
    const MAGIC: [u8; 8];
    /// The file layout version this build reads and writes.
    const VERSION: u64;
    /// What the file holds, for errors ("point table", "key table").
    const KIND: &'static str;
    /// The whole file's length.
    fn file_len(&self) -> usize;
    /// The header words (index, value) a creator writes past the version,
    /// [`byte_order_mark`] at [`HEADER_BYTE_ORDER`] included.
    fn words(&self) -> Vec<(usize, u64)>;
    /// Refuses a ready header of this kind, byte order and version that
    /// describes another table than this process's (`word(i)`: header word
    /// `i`).
    fn check(&self, path: &Path, word: &dyn Fn(usize) -> u64) -> Result<(), Error>;
}

/// The point table's file: its core `LayoutDescriptor` and the offsets it
/// gives.
pub struct Points {
    descriptor: LayoutDescriptor,
    layout: Layout,
}

impl Format for Points {
    const MAGIC: [u8; 8] = MAGIC;
    const VERSION: u64 = LAYOUT_VERSION;
    const KIND: &'static str = "point table";

    fn file_len(&self) -> usize {
        self.layout.file_len
    }

    fn words(&self) -> Vec<(usize, u64)> {
        let words = descriptor_words(&self.descriptor).into_iter().enumerate();
        words.map(|(i, w)| (HEADER_DESCRIPTOR + i, w)).collect()
    }

    fn check(&self, path: &Path, word: &dyn Fn(usize) -> u64) -> Result<(), Error> {
        let mut words = [0u64; DESCRIPTOR_WORDS];
        for (i, w) in words.iter_mut().enumerate() {
            *w = word(HEADER_DESCRIPTOR + i);
        }
        let ours = &self.descriptor;
        match ours.differing_field(&descriptor_from_words(words)) {
            None => Ok(()),
            Some(field) => {
                let at = LayoutField::ALL.iter().position(|&f| f == field);
                let stored = words[at.unwrap_or(0)];
                Err(mismatch(path, field, u64::from(ours.get(field)), stored))
            }
        }
    }
}

/// What the protocol made of the file.
pub struct Attached {
    pub mapping: Mapping,
    pub layout: Layout,
    pub created: bool,
}

/// Attaches to the point table in `file`, or initialises it, under the
/// init lock (waited for up to `timeout`).
pub fn attach_or_create(
    path: &Path,
    file: &File,
    capacity: usize,
    timeout: Duration,
) -> Result<Attached, Error> {
    let descriptor = u32::try_from(capacity)
        .map(LayoutDescriptor::for_capacity)
        .map_err(|_| Error::InvalidCapacity { capacity })?;
    let layout = Layout::of(&descriptor).ok_or(Error::InvalidCapacity { capacity })?;
    let format = Points { descriptor, layout };
    let (mapping, created) = attach_or_create_as(path, file, &format, timeout)?;
    Ok(Attached {
        mapping,
        layout,
        created,
    })
}

/// Attaches to the table of `format` in `file`, or initialises it, under
/// the init lock (waited for up to `timeout`): the mapping, and whether
/// this process initialised it.
pub fn attach_or_create_as<F: Format>(
    path: &Path,
    file: &File,
    format: &F,
    timeout: Duration,
) -> Result<(Mapping, bool), Error> {
    take_init_lock(path, file, timeout)?;
    let attached = decide(path, file, format);
    // Closing the file would drop it too; an error here changes nothing.
    let _ = sys::unlock(file, INIT_LOCK);
    attached
}

fn take_init_lock(path: &Path, file: &File, timeout: Duration) -> Result<(), Error> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        if sys::try_lock(file, INIT_LOCK).map_err(io_error(path, "fcntl(F_SETLK)"))? {
            return Ok(());
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(Error::InitTimeout {
                path: path.into(),
                waited,
            });
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn decide<F: Format>(path: &Path, file: &File, format: &F) -> Result<(Mapping, bool), Error> {
    let size = file.metadata().map_err(io_error(path, "fstat"))?.len();
    if size == 0 {
        return initialise(path, file, format);
    }
    let expected = format.file_len() as u64;
    if size < HEADER_SIZE as u64 {
        // A creator sizes the file in one step: a short file is not ours.
        return Err(Error::Truncated {
            path: path.into(),
            expected,
            found: size,
        });
    }
    let mut bytes = [0u8; HEADER_SIZE];
    file.read_exact_at(&mut bytes, 0)
        .map_err(io_error(path, "read header"))?;
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
        u64::from_ne_bytes(w)
    };
    let magic_ok = bytes[..8] == F::MAGIC;
    if word(HEADER_READY) != READY {
        // Not ready: a creator died before the end. Ours if it got as far
        // as the magic, or if it died before writing any of the header.
        if magic_ok || bytes.iter().all(|&b| b == 0) {
            return initialise(path, file, format);
        }
        return Err(Error::NotATable { path: path.into() });
    }
    if !magic_ok {
        return Err(match kind_of(&bytes[..8]) {
            Some(theirs) => Error::OtherKind {
                path: path.into(),
                theirs,
                ours: F::KIND,
            },
            None => Error::NotATable { path: path.into() },
        });
    }
    // The byte order first: in another one every other word reads wrong.
    let byte_order = word(HEADER_BYTE_ORDER);
    if byte_order != byte_order_mark() {
        let field = LayoutField::ByteOrder;
        return Err(mismatch(path, field, byte_order_mark(), byte_order));
    }
    if word(HEADER_VERSION) != F::VERSION {
        return Err(Error::WrongVersion {
            path: path.into(),
            ours: F::VERSION,
            theirs: word(HEADER_VERSION),
        });
    }
    format.check(path, &word)?;
    if size != expected {
        let (path, found) = (path.into(), size);
        return Err(if size < expected {
            Error::Truncated {
                path,
                expected,
                found,
            }
        } else {
            Error::Oversized {
                path,
                expected,
                found,
            }
        });
    }
    let mapping = Mapping::new(file, format.file_len()).map_err(io_error(path, "mmap"))?;
    let ready = header(&mapping).map(|h| h[HEADER_READY].load(Ordering::Acquire));
    if ready != Some(READY) {
        return Err(Error::Corrupt {
            path: path.into(),
            what: "ready word changed after it was checked",
        });
    }
    Ok((mapping, false))
}

/// What a file of another kind than asked for holds, by its magic.
fn kind_of(magic: &[u8]) -> Option<&'static str> {
    let kinds = [(Points::MAGIC, Points::KIND), (Keys::MAGIC, Keys::KIND)];
    kinds
        .into_iter()
        .find(|(m, _)| m == magic)
        .map(|(_, kind)| kind)
}

fn mismatch(path: &Path, field: LayoutField, ours: u64, theirs: u64) -> Error {
    Error::LayoutMismatch {
        path: path.into(),
        field,
        ours,
        theirs,
    }
}

fn header(mapping: &Mapping) -> Option<&[AtomicU64]> {
    mapping.view::<AtomicU64>(0, HEADER_WORDS)
}

/// Writes a whole table: a zeroed file of the right size (all zero is the
/// core's fresh memory, and free process slots), the header, and last the
/// ready word (Release: whoever reads it ready sees the rest).
fn initialise<F: Format>(path: &Path, file: &File, format: &F) -> Result<(Mapping, bool), Error> {
    let len = format.file_len();
    // Through 0 so that whatever a dead creator left is zeroed.
    file.set_len(0).map_err(io_error(path, "ftruncate"))?;
    file.set_len(len as u64)
        .map_err(io_error(path, "ftruncate"))?;
    #[cfg(feature = "test-hooks")]
    crate::hooks::after_truncate();
    let mapping = Mapping::new(file, len).map_err(io_error(path, "mmap"))?;
    let words = header(&mapping).ok_or(Error::Corrupt {
        path: path.into(),
        what: "header does not fit",
    })?;
    words[HEADER_MAGIC].store(u64::from_ne_bytes(F::MAGIC), Ordering::Relaxed);
    words[HEADER_VERSION].store(F::VERSION, Ordering::Relaxed);
    for (i, w) in format.words() {
        words[i].store(w, Ordering::Relaxed);
    }
    words[HEADER_CREATOR_PID].store(u64::from(std::process::id()), Ordering::Relaxed);
    words[HEADER_READY].store(READY, Ordering::Release);
    Ok((mapping, true))
}
