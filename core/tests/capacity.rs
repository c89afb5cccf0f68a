//! A capacity as bindings receive it: one verdict for every whole number.

use sds_core::{capacity_from_i128, Error, ErrorCode, MAX_CAPACITY};

#[test]
fn negative_zero_and_huge_capacities_are_one_verdict() {
    for n in [
        -1,
        0,
        MAX_CAPACITY as i128 + 1,
        i64::MAX as i128,
        u64::MAX as i128 + 1,
        i128::MIN,
        i128::MAX,
    ] {
        let e = capacity_from_i128(n).unwrap_err();
        assert_eq!(e, Error::InvalidCapacity, "{n}");
        assert_eq!(e.code(), ErrorCode::InvalidCapacity);
        assert_eq!(e.to_string(), "table capacity must be within 1..=1048576");
    }
    assert_eq!(capacity_from_i128(1), Ok(1));
    assert_eq!(capacity_from_i128(MAX_CAPACITY as i128), Ok(MAX_CAPACITY));
}
