//! The system calls std does not wrap: classic POSIX record locks, the
//! shared mapping, the effective uid, a fork handler.
//!
//! The locks are classic `F_SETLK` / `F_GETLK` locks, not OFD locks: they
//! belong to the process, a fork child does not inherit them, and the kernel
//! drops them when the process dies. The price: closing ANY descriptor of
//! the file drops all of the process's locks on it (see `registry.rs`).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::registry;

/// A one-byte write lock request at `offset`.
fn record(kind: libc::c_int, offset: u64) -> io::Result<libc::flock> {
    let start = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "lock offset out of range"))?;
    Ok(libc::flock {
        l_type: kind as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: start,
        l_len: 1,
        l_pid: 0,
    })
}

fn fcntl_lock(file: &File, command: libc::c_int, lock: &mut libc::flock) -> io::Result<()> {
    // SAFETY: the descriptor is open for the borrow of `file`, and `lock`
    // points to a live, initialised `flock` the kernel may write back into.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), command, lock as *mut libc::flock) };
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Takes the write lock on byte `offset` without waiting: false if another
/// process holds a lock on it.
pub fn try_lock(file: &File, offset: u64) -> io::Result<bool> {
    let mut lock = record(libc::F_WRLCK, offset)?;
    match fcntl_lock(file, libc::F_SETLK, &mut lock) {
        Ok(()) => Ok(true),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Releases this process's lock on byte `offset` (nothing if it has none).
pub fn unlock(file: &File, offset: u64) -> io::Result<()> {
    let mut lock = record(libc::F_UNLCK, offset)?;
    fcntl_lock(file, libc::F_SETLK, &mut lock)
}

/// Whether another process holds a lock on byte `offset` (this process's
/// own locks never show).
pub fn locked_by_other(file: &File, offset: u64) -> io::Result<bool> {
    let mut lock = record(libc::F_WRLCK, offset)?;
    fcntl_lock(file, libc::F_GETLK, &mut lock)?;
    Ok(lock.l_type != libc::F_UNLCK as libc::c_short)
}

/// The effective uid.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether `gid` is this process's effective group or one of its
/// supplementary groups.
pub fn in_group(gid: u32) -> bool {
    // SAFETY: getegid has no preconditions and cannot fail.
    if unsafe { libc::getegid() } == gid {
        return true;
    }
    // SAFETY: a count of 0 asks only for the number of groups.
    let count = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if count <= 0 {
        return false;
    }
    let mut groups = vec![0 as libc::gid_t; count as usize];
    // SAFETY: `groups` has room for `count` ids; the call writes at most
    // that many and returns how many it wrote (or -1 when they grew since).
    let written = unsafe { libc::getgroups(count, groups.as_mut_ptr()) };
    written > 0 && groups[..written as usize].contains(&gid)
}

/// Maps `len` bytes of `file` shared, readable and writable.
pub fn map_shared(file: &File, len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: a fresh mapping at an address the kernel picks, of a file
    // descriptor open for the call; no existing memory is touched.
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if at == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(at.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))
}

/// Unmaps what [`map_shared`] mapped.
///
/// # Safety
/// `at` and `len` are one mapping of [`map_shared`], and no reference into
/// it outlives this call.
pub unsafe fn unmap(at: NonNull<u8>, len: usize) {
    // SAFETY: the caller's contract. munmap only fails for a bad range,
    // which that contract rules out; there is nothing to do about it in a
    // destructor anyway.
    unsafe {
        libc::munmap(at.as_ptr().cast::<libc::c_void>(), len);
    }
}

/// Bumped in every fork child (before `fork` returns there): an attachment
/// registered under another epoch was registered by the parent.
static FORK_EPOCH: AtomicU64 = AtomicU64::new(0);

extern "C" fn before_fork() {
    registry::hold_across_fork();
}

extern "C" fn forked_parent() {
    registry::release_after_fork();
}

extern "C" fn forked_child() {
    // An atomic add, and unlocking what `before_fork` locked: no
    // allocation, no lock taken (safe in the child of a threaded process).
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
    registry::release_after_fork();
}

/// Installs the fork handlers once per process: the epoch, and the lists
/// of attachments held across the fork (`registry`).
pub fn watch_forks() -> io::Result<()> {
    static INSTALLED: OnceLock<libc::c_int> = OnceLock::new();
    // SAFETY: registers plain functions that live for the whole program and
    // never unwind (they lock, or unlock, two process-wide lists).
    let rc = *INSTALLED.get_or_init(|| unsafe {
        libc::pthread_atfork(Some(before_fork), Some(forked_parent), Some(forked_child))
    });
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// How many forks this process is from the one that installed the handler.
pub fn fork_epoch() -> u64 {
    FORK_EPOCH.load(Ordering::Relaxed)
}
