//! Native objects owned by Java through a `long` handle: a `Box` turned into
//! its address. Java keeps the handle in one field, passes it to every call
//! and frees it exactly once (`close()` or its reclaimer), then zeroes it.

use std::mem::ManuallyDrop;
use std::sync::Arc;

use sds_core::{ErrorCode, SlidingWindow};

pub(crate) type Window = SlidingWindow<Box<[sds_core::Bucket]>>;

/// Moves `value` to the heap and returns its address as a handle.
pub(crate) fn into_handle<T>(value: T) -> i64 {
    Box::into_raw(Box::new(value)) as i64
}

/// The object behind a live handle; `Closed` for the handle 0 Java keeps
/// after freeing.
///
/// # Safety
/// `handle` is 0 or a value [`into_handle`] returned for a `T` that has not
/// been passed to [`free`] yet: the Java classes keep the handle private and
/// zero it before freeing.
#[inline]
pub(crate) unsafe fn borrow<'a, T>(handle: i64) -> Result<&'a T, ErrorCode> {
    // SAFETY: see the function's contract.
    unsafe { (handle as *const T).as_ref() }.ok_or(ErrorCode::Closed)
}

/// Frees a handle; 0 is a no-op, so a double close from Java is harmless.
///
/// # Safety
/// As for [`borrow`], and no call may use the handle afterwards.
pub(crate) unsafe fn free<T>(handle: i64) {
    if handle != 0 {
        // SAFETY: see the function's contract.
        drop(unsafe { Box::from_raw(handle as *mut T) });
    }
}

/// Moves `value` into a new `Arc` and returns its address as a handle: the
/// tables' handles, which other native owners (the console agent, the
/// metrics registry) may hold a reference of too.
pub(crate) fn arc_into_handle<T>(value: T) -> i64 {
    Arc::into_raw(Arc::new(value)) as i64
}

/// Another reference to the `Arc` of a live handle; `Closed` for the
/// handle 0.
///
/// # Safety
/// As for [`borrow`], the handle an [`arc_into_handle`] of a `T`.
pub(crate) unsafe fn arc_of<T>(handle: i64) -> Result<Arc<T>, ErrorCode> {
    // SAFETY: see the function's contract; a live handle is the strong
    // reference `Arc::into_raw` made, which stays the handle's.
    let held = ManuallyDrop::new(unsafe { Arc::from_raw(borrow::<T>(handle)?) });
    Ok(Arc::clone(&held))
}

/// Drops the reference of an [`arc_into_handle`] handle (0: nothing to do);
/// a panic in the drop stops here, short of Java.
///
/// # Safety
/// As for [`arc_of`]; called once per handle, once no call is using it
/// (its `NativeHandle` sees to both).
pub(crate) unsafe fn free_arc<T>(handle: i64) {
    if handle != 0 {
        // SAFETY: see the function's contract.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Arc::from_raw(handle as *const T) }));
    }
}
