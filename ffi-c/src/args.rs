//! Reading C arguments: NULL checks, names as byte slices, and text written
//! into caller buffers. Every check runs before anything changes, so a bad
//! argument leaves the state as it was.

use core::fmt;
use std::os::raw::c_char;

use sds_core::{Error, MAX_NAME_LEN};

use crate::boundary::Failure;

/// The point name `(ptr, len)` as bytes; any bytes are allowed (UTF-8 or
/// not, NUL included), as in the core. Empty and too-long names get the
/// core's errors; the length is checked before the slice is formed.
///
/// # Safety
/// `ptr` must point to `len` readable bytes when `len <= MAX_NAME_LEN`.
pub(crate) unsafe fn name<'a>(ptr: *const c_char, len: usize) -> Result<&'a [u8], Failure> {
    if ptr.is_null() {
        return Err(Failure::null("name"));
    }
    if len > MAX_NAME_LEN {
        return Err(Error::NameTooLong.into());
    }
    Ok(core::slice::from_raw_parts(ptr.cast::<u8>(), len))
}

/// The bytes `(ptr, len)` of a text argument.
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
pub(crate) unsafe fn bytes<'a>(
    ptr: *const c_char,
    len: usize,
    argument: &'static str,
) -> Result<&'a [u8], Failure> {
    if ptr.is_null() {
        return Err(Failure::null(argument));
    }
    if len > isize::MAX as usize {
        return Err(Failure::invalid(&format_args!(
            "`{argument}_len` is too large"
        )));
    }
    Ok(core::slice::from_raw_parts(ptr.cast::<u8>(), len))
}

/// A shared reference from a `const T *` argument.
///
/// # Safety
/// `ptr` must be NULL or point to a live, aligned `T`.
pub(crate) unsafe fn input<'a, T>(ptr: *const T, argument: &'static str) -> Result<&'a T, Failure> {
    ptr.as_ref().ok_or_else(|| Failure::null(argument))
}

/// A checked output pointer; written once the call has succeeded.
pub(crate) struct Out<T>(*mut T);

/// Checks an output pointer before any work is done.
pub(crate) fn out<T>(ptr: *mut T, argument: &'static str) -> Result<Out<T>, Failure> {
    if ptr.is_null() {
        Err(Failure::null(argument))
    } else {
        Ok(Out(ptr))
    }
}

impl<T> Out<T> {
    /// Writes the result.
    ///
    /// # Safety
    /// The pointer must be aligned and writable (the caller's promise).
    pub(crate) unsafe fn write(self, value: T) {
        self.0.write(value);
    }
}

/// Writes `value` to `*out` unless the caller passed NULL to skip it.
///
/// # Safety
/// `out` must be NULL or writable.
pub(crate) unsafe fn write_if_given<T>(out: *mut T, value: T) {
    if !out.is_null() {
        out.write(value);
    }
}

/// Writes to `*out` (checked first) a new heap object built by `make`: the
/// `_new` functions of the opaque types.
///
/// # Safety
/// `out` must be NULL or writable.
pub(crate) unsafe fn into_box<T>(
    out: *mut *mut T,
    make: impl FnOnce() -> Result<T, Failure>,
) -> Result<(), Failure> {
    let out = self::out(out, "out")?;
    out.write(Box::into_raw(Box::new(make()?)));
    Ok(())
}

/// Frees what [`into_box`] made; NULL is a no-op.
///
/// # Safety
/// `ptr` must be NULL or come from [`into_box`], not freed yet.
pub(crate) unsafe fn unbox<T>(ptr: *mut T) {
    if !ptr.is_null() {
        drop(Box::from_raw(ptr));
    }
}

/// The body of the exports that write one text into a caller's buffer
/// (`buf`, `len` bytes, the length without the NUL to `*written`): the
/// buffer arguments are checked first, then `text` writes (or refuses its
/// input, and nothing is written). The text is cut at a character boundary
/// to `len - 1` bytes and NUL-terminated.
///
/// # Safety
/// `buf` must be NULL or point to `len` writable bytes, `written` NULL or
/// writable.
pub(crate) unsafe fn write_text(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
    text: impl FnOnce(&mut TextWriter) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if buf.is_null() {
        return Err(Failure::null("buf"));
    }
    let written = out(written, "written")?;
    if len == 0 {
        return Err(Failure::invalid(&"`len` is 0: no room for the NUL"));
    }
    let mut writer = TextWriter {
        buf: buf.cast(),
        capacity: len - 1,
        len: 0,
    };
    text(&mut writer)?;
    writer.buf.add(writer.len).write(0);
    written.write(writer.len);
    Ok(())
}

/// Text going into a caller's buffer of `capacity + 1` bytes.
pub(crate) struct TextWriter {
    buf: *mut u8,
    capacity: usize,
    len: usize,
}

impl fmt::Write for TextWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: the caller promised `capacity + 1` writable bytes at `buf`.
        let room = unsafe { core::slice::from_raw_parts_mut(self.buf, self.capacity) };
        append_fitting(room, &mut self.len, s)
    }
}

/// Appends `s` to `buf[..*len]`, whole characters only, as far as it fits;
/// an error once something did not fit (the text is then truncated).
pub(crate) fn append_fitting(buf: &mut [u8], len: &mut usize, s: &str) -> fmt::Result {
    for ch in s.chars() {
        let mut utf8 = [0u8; 4];
        let bytes = ch.encode_utf8(&mut utf8).as_bytes();
        let end = *len + bytes.len();
        if end > buf.len() {
            return Err(fmt::Error);
        }
        buf[*len..end].copy_from_slice(bytes);
        *len = end;
    }
    Ok(())
}

/// `text` as a NUL-terminated C field of `N` bytes: the whole characters
/// that fit in `N - 1` bytes, the rest zero.
pub(crate) fn c_text<const N: usize>(text: &str) -> [c_char; N] {
    let mut bytes = [0u8; N];
    let mut len = 0;
    let _ = append_fitting(&mut bytes[..N - 1], &mut len, text);
    bytes.map(|b| b as c_char)
}
