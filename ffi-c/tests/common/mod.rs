//! Helpers shared by the C ABI's Rust tests: C strings and buffers to Rust
//! and back, and this thread's last error.

// Not every test file uses every helper.
#![allow(dead_code)]

use std::ffi::CString;
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sds::{sds_last_error_message, sds_result, SDS_MESSAGE_MAX};

/// The text of a C buffer, up to its first NUL if it holds one.
pub fn text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8(bytes).unwrap()
}

/// This thread's last error message.
pub fn last_error() -> String {
    let mut buf = [0 as c_char; SDS_MESSAGE_MAX + 1];
    let mut len = 0usize;
    let r = unsafe { sds_last_error_message(buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!(r, sds_result::Ok);
    text(&buf[..len])
}

/// `path` as a C string, for a file name in a config struct.
pub fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}
