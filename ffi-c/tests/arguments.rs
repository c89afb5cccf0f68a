//! A bad argument is judged by the core's own validator: the code and the
//! last error's text are exactly the core's error for it, so C reports it
//! word for word as every other binding does.

use std::ptr::null_mut;

use sds::*;
use sds_core::window::check_parameters;
use sds_core::{check_capacity, EntryParts, Error, Flags, Outcome, Strategy, MAX_CAPACITY};

mod common;
use common::last_error;
use sds_testkit::TempDir;

/// `got` failed with `want`'s code, and the last error is `want` as the
/// core words it.
fn assert_core_error(got: sds_result, want: Error) {
    assert_eq!(got, want.code(), "{want:?}");
    assert_eq!(last_error(), format!("{}: {want}", want.as_str()));
}

struct Table(*mut sds_table);

impl Table {
    fn new() -> Table {
        let mut raw = null_mut();
        assert_eq!(unsafe { sds_table_new(4, &mut raw) }, sds_result::Ok);
        Table(raw)
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        unsafe { sds_table_free(self.0) }
    }
}

#[test]
fn unknown_flag_bits_are_the_cores_verdict() {
    let t = Table::new();
    let mut entry = EntryParts::default();
    for bits in [2, 3, 0x8000_0000, u32::MAX] {
        let want = Flags::from_known_bits(bits).unwrap_err();
        let r = unsafe { sds_enter(t.0, "p".as_ptr().cast(), 1, 1000, bits, &mut entry) };
        assert_core_error(r, want);
        let r = unsafe { sds_enter_point(t.0, 0, 1000, bits, &mut entry) };
        assert_core_error(r, want);
    }
    assert_eq!(unsafe { sds_table_len(t.0) }, 0, "no point was created");
}

#[test]
fn an_unknown_outcome_is_the_cores_verdict() {
    let t = Table::new();
    let mut entry = EntryParts::default();
    let r = unsafe { sds_enter(t.0, "p".as_ptr().cast(), 1, 1000, 0, &mut entry) };
    assert_eq!(r, sds_result::Ok);
    for code in [3, 7, u32::MAX] {
        let want = Outcome::from_code(code.into()).unwrap_err();
        assert_core_error(unsafe { sds_exit(t.0, &entry, 1000, code) }, want);
    }
    assert_eq!(unsafe { sds_exit(t.0, &entry, 1000, 0) }, sds_result::Ok);
}

#[test]
fn a_bad_capacity_is_the_cores_verdict() {
    for capacity in [0, MAX_CAPACITY + 1, usize::MAX] {
        let mut raw = null_mut();
        let want = check_capacity(capacity).unwrap_err();
        assert_core_error(unsafe { sds_table_new(capacity, &mut raw) }, want);
        assert!(raw.is_null(), "output untouched");
        // A shared table: the same verdict and message, and no file made.
        let dir = TempDir::new("ffi-bad-capacity");
        let path = dir.join("t.sds");
        let text = path.to_str().unwrap();
        let r = unsafe {
            sds_table_open_shared(text.as_ptr().cast(), text.len(), capacity, 0, &mut raw)
        };
        assert_core_error(r, want);
        assert!(raw.is_null() && !path.exists());
    }
}

#[test]
fn bad_window_parameters_are_the_cores_verdict() {
    let cases: [(u64, usize, usize); 5] = [
        (0, 10, 30),
        (1000, 0, 30),
        (1000, 10, 19),
        (1000, 10, (1 << 16) + 1),
        (1000, 10, usize::MAX), // refused before any allocation
    ];
    for (bucket_ms, buckets, ring) in cases {
        let mut raw = null_mut();
        let want = check_parameters(bucket_ms, buckets, ring).unwrap_err();
        let r = unsafe { sds_window_new(bucket_ms, buckets, ring, &mut raw) };
        assert_core_error(r, want);
        assert!(raw.is_null(), "output untouched");
    }
}

#[test]
fn an_invalid_strategy_struct_is_the_cores_verdict() {
    let t = Table::new();
    let strategy = Strategy {
        delay_time: 5,
        ..sds_strategy_default()
    };
    let want = strategy.validate().unwrap_err();
    let r = unsafe { sds_table_set_strategy(t.0, "p".as_ptr().cast(), 1, &strategy) };
    assert_core_error(r, want);
}
