//! The file's shared mapping, and the one place its bytes become typed
//! references.

use std::fs::File;
use std::io;
use std::mem::{align_of, size_of};
use std::ptr::NonNull;

use crate::sys;

/// Types the mapping may be viewed as.
///
/// # Safety
/// Every bit pattern is a valid value (another process, or a hostile file,
/// may have written any bytes), and all mutation goes through atomics, so
/// shared references stay valid while other processes write.
pub unsafe trait Shared: Sync {}

// SAFETY: an integer atomic: any bits are a value, changed only atomically.
unsafe impl Shared for std::sync::atomic::AtomicU64 {}

/// A `MAP_SHARED` mapping of a whole file, unmapped on drop.
pub struct Mapping {
    at: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is only read or written through `Shared` views
// (atomics); the pointer itself is plain data.
unsafe impl Send for Mapping {}
// SAFETY: as above: shared access only hands out `Shared` (Sync) views.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the first `len` bytes of `file` (its length, checked by the caller).
    pub fn new(file: &File, len: usize) -> io::Result<Mapping> {
        let at = sys::map_shared(file, len)?;
        Ok(Mapping { at, len })
    }

    /// Checks that `count` values of `T` fit at `offset` and are aligned;
    /// returns their address.
    fn place<T>(&self, offset: usize, count: usize) -> Option<*mut T> {
        let end = count.checked_mul(size_of::<T>())?.checked_add(offset)?;
        if end > self.len {
            return None;
        }
        let at = self.at.as_ptr().wrapping_add(offset);
        (at as usize % align_of::<T>() == 0).then_some(at.cast::<T>())
    }

    /// `count` values of `T` at `offset`; `None` if out of the mapping or
    /// misaligned.
    pub fn view<T: Shared>(&self, offset: usize, count: usize) -> Option<&[T]> {
        let at = self.place::<T>(offset, count)?;
        // SAFETY: `place` checked that the range lies inside the live mapping
        // and is aligned for T; T is `Shared`, so any bytes there are valid
        // values and other processes' writes go through atomics; the slice
        // borrows `self`, so it cannot outlive the mapping.
        Some(unsafe { std::slice::from_raw_parts(at, count) })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `at`/`len` are the mapping made in `new`; every view
        // borrowed `self`, so none is left.
        unsafe { sys::unmap(self.at, self.len) };
    }
}
