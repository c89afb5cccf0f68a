//! A service's `Fields` status (`Status::NAMES`, `values()`) into its C
//! struct, field by name in one loop. The C structs keep their own field
//! order: it is the ABI (reordering would break every compiled caller).

use std::os::raw::c_char;

use sds_settings::{FieldValue, Fields};

use crate::args::c_text;

/// A C field a status value is written into.
pub(crate) trait CField {
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
pub(crate) trait CStatus: Sized {
    /// Its fields' names, in the struct's order (for the tests that hold
    /// them to the native status's).
    #[cfg(test)]
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
            #[cfg(test)]
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
/// test fails on it: see `unit_tests`), so a caller still gets the rest.
pub(crate) fn to_c<C: CStatus, S: Fields>(status: &S) -> C {
    let mut c = C::zero();
    for (name, value) in S::NAMES.iter().zip(status.values()) {
        c.set(name, value);
    }
    c
}

#[cfg(test)]
mod unit_tests {
    use super::*;
    use crate::{sds_agent_status, sds_cluster_state};

    /// Every name of the native status is a field of the C struct and the
    /// other way round, each set from its own value.
    fn assert_same_fields<C: CStatus, S: Fields>(status: &S) {
        let mut native = S::NAMES.to_vec();
        let mut c_names = C::NAMES.to_vec();
        native.sort_unstable();
        c_names.sort_unstable();
        assert_eq!(c_names, native, "the C struct's fields are the status's");
        let mut c = C::zero();
        for (name, value) in S::NAMES.iter().zip(status.values()) {
            assert!(c.set(name, value), "{name} is no C field");
        }
    }

    fn text(field: &[c_char]) -> String {
        let bytes: Vec<u8> = field
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn the_agent_status_is_its_c_struct() {
        let status = sds_agent::Status {
            last_pull_ms: 1,
            last_pull_ok: true,
            last_upload_ms: 2,
            last_upload_ok: false,
            version: -1,
            is_reporter: true,
            server: "http://a:8887".into(),
            last_error: "é".repeat(200),
            pull_failures: 3,
            upload_failures: 4,
            uploads: 5,
            strategies_waiting: 6,
            points_left_out: 7,
        };
        assert_same_fields::<sds_agent_status, _>(&status);
        let c: sds_agent_status = to_c(&status);
        assert_eq!((c.last_pull_ms, c.last_upload_ms, c.version), (1, 2, -1));
        assert_eq!(
            (c.last_pull_ok, c.last_upload_ok, c.is_reporter),
            (true, false, true)
        );
        assert_eq!((c.pull_failures, c.upload_failures, c.uploads), (3, 4, 5));
        assert_eq!((c.strategies_waiting, c.points_left_out), (6, 7));
        assert_eq!(text(&c.server), "http://a:8887");
        // 255 bytes of room: 127 two-byte characters, never half of one.
        assert_eq!(text(&c.last_error), "é".repeat(127));
    }

    #[test]
    fn the_cluster_status_is_its_c_struct() {
        let mut status = sds_cluster::Status {
            connected: true,
            syncing: false,
            last_sync_ms: 1,
            lag_ms: 2,
            rtt_us: 3,
            syncs: 4,
            failures: 5,
            round_trips: 6,
            commands: 7,
            last_error: Some("down".into()),
            points: 8,
            points_failing: 9,
        };
        assert_same_fields::<sds_cluster_state, _>(&status);
        let c: sds_cluster_state = to_c(&status);
        assert_eq!((c.connected, c.syncing), (true, false));
        assert_eq!((c.last_sync_ms, c.lag_ms, c.rtt_us), (1, 2, 3));
        assert_eq!(
            (c.syncs, c.failures, c.round_trips, c.commands),
            (4, 5, 6, 7)
        );
        assert_eq!((c.points, c.points_failing), (8, 9));
        assert_eq!(text(&c.last_error), "down");
        status.last_error = None;
        let c: sds_cluster_state = to_c(&status);
        assert_eq!(text(&c.last_error), "");
    }
}
