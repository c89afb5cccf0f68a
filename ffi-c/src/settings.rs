//! A service's C config struct as the `(key, Value)` pairs of `sds-settings`:
//! the one conversion from C's values (a NULL pointer, a C string, a
//! uint64) to `Value`, so the service's `from_settings` judges them with its
//! own defaults and messages. The keys are the struct's field names, which
//! are the settings' snake_case names.

use std::ffi::CStr;
use std::os::raw::c_char;

use sds_settings::Value;

use crate::boundary::Failure;

/// A config field that is one setting.
pub(crate) trait CSetting {
    /// The field's value for the setting `key`.
    ///
    /// # Safety
    /// A pointer field must be NULL or point to what the header says.
    unsafe fn value(&self, key: &str) -> Result<Value, Failure>;
}

impl CSetting for *const c_char {
    /// A NUL-terminated string; NULL is the service's default.
    unsafe fn value(&self, key: &str) -> Result<Value, Failure> {
        if self.is_null() {
            return Ok(Value::Null);
        }
        utf8(CStr::from_ptr(*self).to_bytes(), key)
    }
}

impl CSetting for u64 {
    /// A number of milliseconds; 0 is the service's default (the header's
    /// promise to callers that zero-initialise the struct).
    unsafe fn value(&self, _key: &str) -> Result<Value, Failure> {
        Ok(match *self {
            0 => Value::Null,
            n => Value::Int(n.into()),
        })
    }
}

/// `len` bytes of text at `ptr` (no NUL needed); NULL is the default.
///
/// # Safety
/// `ptr` must be NULL or point to `len` readable bytes.
pub(crate) unsafe fn text(ptr: *const c_char, len: usize, key: &str) -> Result<Value, Failure> {
    if ptr.is_null() {
        return Ok(Value::Null);
    }
    if len > isize::MAX as usize {
        return Err(Failure::invalid(&format_args!(
            "the length of `{key}` is too large"
        )));
    }
    utf8(std::slice::from_raw_parts(ptr.cast::<u8>(), len), key)
}

/// C strings are bytes; a setting's text is UTF-8 in every language.
fn utf8(bytes: &[u8], key: &str) -> Result<Value, Failure> {
    std::str::from_utf8(bytes)
        .map(|text| Value::Text(text.to_string()))
        .map_err(|_| Failure::invalid(&format_args!("`{key}` is not UTF-8")))
}

/// The pairs of the named fields of a config struct, each by its
/// [`CSetting`] conversion, under its own name; `?` on the first field C
/// cannot hand over.
macro_rules! c_settings {
    ($config:expr; $($field:ident),* $(,)?) => {
        vec![$((
            stringify!($field).to_string(),
            $crate::settings::CSetting::value(&$config.$field, stringify!($field))?,
        )),*]
    };
}
pub(crate) use c_settings;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_zero_are_the_default_and_text_must_be_utf8() {
        unsafe {
            assert_eq!(std::ptr::null::<c_char>().value("ip").unwrap(), Value::Null);
            assert_eq!(c"h".as_ptr().value("ip").unwrap(), Value::Text("h".into()));
            assert_eq!(0u64.value("timeout_ms").unwrap(), Value::Null);
            assert_eq!(
                u64::MAX.value("timeout_ms").unwrap(),
                Value::Int(u64::MAX.into())
            );
            assert_eq!(text(std::ptr::null(), 3, "urls").unwrap(), Value::Null);
            assert_eq!(
                text(c"ab".as_ptr(), 1, "urls").unwrap(),
                Value::Text("a".into())
            );
            assert!(c"\xe9".as_ptr().value("hostname").is_err());
        }
        assert_eq!(
            crate::result::last_error_text(),
            "SDS_INVALID_ARGUMENT: `hostname` is not UTF-8"
        );
    }
}
