//! A service's `Fields` status (`Status::NAMES`, `values()`) into its C
//! struct, field by name in one loop. The C structs keep their own field
//! order: it is the ABI (reordering would break every compiled caller).
//! Public but hidden only for `tests/status_structs.rs`, which holds each
//! C struct's fields to its native status's.

use std::os::raw::c_char;

use sds_settings::{FieldValue, Fields};

use crate::args::c_text;

/// A C field a status value is written into.
pub trait CField {
    /// Its value before any status is written (never a trap: plain data).
    const ZERO: Self;
    /// Writes `value`; a value of another type is a bug of this crate (the
    /// tests fill every struct from a real status), caught as a panic.
    fn set(&mut self, value: FieldValue);
}

/// The numbers and flags: the value of their own type.
macro_rules! scalar_fields {
    ($($ty:ty = $zero:literal as $variant:ident),*) => {$(
        impl CField for $ty {
            const ZERO: $ty = $zero;
            fn set(&mut self, value: FieldValue) {
                match value {
                    FieldValue::$variant(v) => *self = v,
                    other => mismatch(stringify!($ty), other),
                }
            }
        }
    )*};
}
scalar_fields!(u64 = 0 as U64, i64 = 0 as I64, bool = false as Bool);

/// Text, NUL-terminated and cut at a character boundary to fit; none is
/// the empty text.
impl<const N: usize> CField for [c_char; N] {
    const ZERO: [c_char; N] = [0; N];
    fn set(&mut self, value: FieldValue) {
        match value {
            FieldValue::Text(text) | FieldValue::OptionalText(Some(text)) => *self = c_text(&text),
            FieldValue::OptionalText(None) => *self = Self::ZERO,
            other => mismatch("char[]", other),
        }
    }
}

fn mismatch(field: &str, value: FieldValue) -> ! {
    panic!("status value {value:?} does not fit a {field} field")
}

/// A C status struct whose fields are set by name.
pub trait CStatus: Sized {
    /// Its fields' names, in the struct's order.
    const NAMES: &'static [&'static str];
    /// Every field zero.
    fn zero() -> Self;
    /// Sets the field `name`; false if the struct has none of that name.
    fn set(&mut self, name: &str, value: FieldValue) -> bool;
}

/// Implements [`CStatus`] for a struct from the list of its fields: `zero`
/// names every field without `..`, so the list cannot miss one nor name
/// one the struct lacks.
macro_rules! c_status {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl $crate::status::CStatus for $ty {
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            fn zero() -> Self {
                $ty { $($field: $crate::status::CField::ZERO),* }
            }

            fn set(&mut self, name: &str, value: ::sds_settings::FieldValue) -> bool {
                match name {
                    $(stringify!($field) => $crate::status::CField::set(&mut self.$field, value),)*
                    _ => return false,
                }
                true
            }
        }
    };
}
pub(crate) use c_status;

/// `status` as its C struct. A name the C struct lacks is skipped here (a
/// test fails on it), so a caller still gets the rest.
pub fn to_c<C: CStatus, S: Fields>(status: &S) -> C {
    let mut c = C::zero();
    for (name, value) in S::NAMES.iter().zip(status.values()) {
        c.set(name, value);
    }
    c
}
