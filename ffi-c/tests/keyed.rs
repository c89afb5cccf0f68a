//! Per-key limits through the C ABI (`sds_keys_*`): each rule kind, costs,
//! exceptions, the rule's JSON refused with the core's code and message, a
//! shared file attached twice and refused for another rule, and NULLs and
//! huge lengths refused with the outputs untouched.

use std::ptr::{null, null_mut};

use sds::{
    sds_keys, sds_keys_count_add, sds_keys_decide, sds_keys_free, sds_keys_new,
    sds_keys_open_shared, sds_keys_peek, sds_keys_release, sds_keys_reset, sds_keys_reset_all,
    sds_keys_stats_get, SDS_KEY_NEVER, SDS_MESSAGE_MAX,
};
use sds_core::keyed::{
    KeyCount, KeyDecision, KeyError, KeyRuleBuilder, KeyRuleKind, KeyTableStats,
};
use sds_core::{ErrorCode, Value};
use sds_testkit::TempDir;

mod common;
use common::{made, Refusal};

const RATE: &str = r#"{"kind": "rate", "limit": 10, "periodMs": 1000, "burst": 3}"#;

/// A key table made by `sds_keys_new` or `sds_keys_open_shared`, freed on
/// drop.
#[derive(Debug)]
struct Keys(*mut sds_keys);

impl Drop for Keys {
    fn drop(&mut self) {
        unsafe { sds_keys_free(self.0) };
    }
}

fn new(rule: &str, capacity: usize) -> Result<Keys, Refusal> {
    let mut keys = null_mut();
    let r = unsafe { sds_keys_new(rule.as_ptr().cast(), rule.len(), capacity, &mut keys) };
    made(r, keys).map(Keys)
}

fn shared(path: &str, rule: &str, capacity: usize) -> Result<Keys, Refusal> {
    let mut keys = null_mut();
    let (p, r) = (path.as_ptr().cast(), rule.as_ptr().cast());
    let code =
        unsafe { sds_keys_open_shared(p, path.len(), r, rule.len(), capacity, 0, &mut keys) };
    made(code, keys).map(Keys)
}

impl Keys {
    fn decide(&self, key: &[u8], now_ms: u64, cost: u32) -> Result<KeyDecision, Refusal> {
        let mut d = KeyDecision::default();
        let r = unsafe {
            sds_keys_decide(self.0, key.as_ptr().cast(), key.len(), now_ms, cost, &mut d)
        };
        made(r, d)
    }

    /// How many of `calls` calls of cost 1 at `now_ms` are admitted.
    fn admitted(&self, key: &[u8], now_ms: u64, calls: u32) -> u32 {
        (0..calls)
            .filter(|_| self.decide(key, now_ms, 1).unwrap().admitted)
            .count() as u32
    }

    fn peek(&self, key: &[u8], now_ms: u64) -> KeyDecision {
        let mut d = KeyDecision::default();
        let r = unsafe { sds_keys_peek(self.0, key.as_ptr().cast(), key.len(), now_ms, &mut d) };
        made(r, d).unwrap()
    }

    fn release(&self, key: &[u8], units: u32) -> Result<bool, Refusal> {
        let mut held = false;
        let r =
            unsafe { sds_keys_release(self.0, key.as_ptr().cast(), key.len(), units, &mut held) };
        made(r, held)
    }

    fn reset(&self, key: &[u8]) -> bool {
        let mut held = false;
        let r = unsafe { sds_keys_reset(self.0, key.as_ptr().cast(), key.len(), &mut held) };
        made(r, held).unwrap()
    }

    fn count(&self, key: &[u8], now_ms: u64, delta: i32) -> Result<KeyCount, Refusal> {
        let mut c = KeyCount::default();
        let (k, len) = (key.as_ptr().cast(), key.len());
        made(
            unsafe { sds_keys_count_add(self.0, k, len, now_ms, delta, &mut c) },
            c,
        )
    }

    fn reset_all(&self) -> u64 {
        let mut held = 0;
        made(unsafe { sds_keys_reset_all(self.0, &mut held) }, held).unwrap()
    }

    fn stats(&self) -> KeyTableStats {
        let mut s = KeyTableStats::default();
        made(unsafe { sds_keys_stats_get(self.0, &mut s) }, s).unwrap()
    }
}

fn decision(
    admitted: bool,
    limit: u32,
    remaining: u32,
    reset: u64,
    retry: u64,
    window: u64,
) -> KeyDecision {
    KeyDecision {
        admitted,
        limit,
        remaining,
        reset_ms: reset,
        retry_after_ms: retry,
        window_ms: window,
    }
}

/// Each call `(now_ms, cost)` of `key` and the decision it must get.
fn expect(keys: &Keys, key: &[u8], calls: &[(u64, u32, KeyDecision)]) {
    for &(now_ms, cost, want) in calls {
        assert_eq!(
            keys.decide(key, now_ms, cost),
            Ok(want),
            "{now_ms} ms, cost {cost}"
        );
    }
}

#[test]
fn a_rate_admits_its_burst_then_says_when_to_retry() {
    let keys = new(RATE, 100).unwrap();
    // T = 100 ms a unit, a burst of 3 is 300 ms of debt.
    expect(
        &keys,
        b"u",
        &[
            (1000, 1, decision(true, 3, 2, 100, 0, 300)),
            (1000, 2, decision(true, 3, 0, 300, 0, 300)),
            (1000, 1, decision(false, 3, 0, 300, 100, 300)),
        ],
    );
    assert_eq!(
        keys.admitted(b"u", 1100, 2),
        1,
        "one unit back after 100 ms"
    );
    // Another key is another state; a cost above the burst never fits.
    expect(
        &keys,
        b"v",
        &[(1000, 4, decision(false, 3, 3, 0, SDS_KEY_NEVER, 300))],
    );
    assert_eq!(keys.admitted(b"v", 1000, 5), 3);
}

#[test]
fn windows_fixed_and_sliding() {
    let fixed = new(
        r#"{"kind": "fixedWindow", "limit": 2, "periodMs": 1000}"#,
        100,
    )
    .unwrap();
    assert_eq!(fixed.admitted(b"k", 1500, 2), 2);
    expect(
        &fixed,
        b"k",
        &[
            (1600, 1, decision(false, 2, 0, 400, 400, 1000)),
            (2000, 1, decision(true, 2, 1, 1000, 0, 1000)),
        ],
    );

    let sliding = new(
        r#"{"kind": "slidingWindow", "limit": 4, "periodMs": 1000}"#,
        100,
    )
    .unwrap();
    assert_eq!(sliding.admitted(b"k", 1000, 5), 4);
    assert_eq!(sliding.decide(b"k", 1000, 1).unwrap().retry_after_ms, 1001);
    // Half-way through the next window the previous 4 weigh 2.
    assert_eq!(sliding.peek(b"k", 2500).remaining, 2);
    assert_eq!(sliding.admitted(b"k", 2500, 3), 2);
}

#[test]
fn in_flight_units_are_taken_and_given_back() {
    let keys = new(r#"{"kind": "inFlight", "limit": 2}"#, 100).unwrap();
    let (took_all, refused) = (
        decision(true, 2, 0, 0, 0, 0),
        decision(false, 2, 0, 0, 0, 0),
    );
    expect(&keys, b"c", &[(0, 2, took_all), (0, 1, refused)]);
    assert_eq!(keys.release(b"c", 1), Ok(true));
    assert!(keys.decide(b"c", 0, 1).unwrap().admitted);
    assert_eq!(keys.release(b"c", 5), Ok(true), "at most what it holds");
    assert_eq!(keys.release(b"c", 1), Ok(false), "it holds none");
    assert_eq!(keys.release(b"never", 1), Ok(false));
    assert_eq!(keys.peek(b"c", 0).remaining, 2);
    assert_eq!(keys.release(b"c", 0), Err(core_refusal(KeyError::ZeroCost)));
    let rate = new(RATE, 100).unwrap();
    assert_eq!(
        rate.release(b"c", 1),
        Err(core_refusal(KeyError::NotInFlight))
    );
}

#[test]
fn a_cost_of_zero_is_refused_and_peek_takes_nothing() {
    let keys = new(RATE, 100).unwrap();
    assert_eq!(
        keys.decide(b"u", 1000, 0),
        Err(core_refusal(KeyError::ZeroCost))
    );
    assert_eq!(keys.peek(b"u", 1000), decision(true, 3, 3, 0, 0, 300));
    assert_eq!(keys.stats().resident, 0, "neither took a cell");
    keys.decide(b"u", 1000, 2).unwrap();
    assert_eq!(keys.peek(b"u", 1000).remaining, 1);
    assert_eq!(keys.peek(b"u", 1000).remaining, 1);
}

#[test]
fn keys_are_any_bytes_and_reset_forgets_one() {
    let keys = new(RATE, 100).unwrap();
    let (binary, empty) = (&[0u8, 255, 0, 7][..], &b""[..]);
    for key in [binary, empty] {
        assert_eq!(keys.admitted(key, 1000, 4), 3);
    }
    assert_eq!(
        keys.peek(&[0, 255, 0], 1000).remaining,
        3,
        "a prefix is another key"
    );
    assert!(keys.reset(binary));
    assert!(!keys.reset(binary));
    assert_eq!(keys.admitted(binary, 1000, 4), 3);
    assert_eq!(keys.admitted(empty, 1000, 1), 0);
}

#[test]
fn exceptions_give_named_keys_their_own_limit() {
    let rule = r#"{"kind": "fixedWindow", "limit": 2, "periodMs": 1000,
                   "exceptions": [["partner-42", 5], ["vip", 1]]}"#;
    let keys = new(rule, 100).unwrap();
    assert_eq!(keys.admitted(b"partner-42", 0, 9), 5);
    assert_eq!(keys.admitted(b"vip", 0, 9), 1);
    assert_eq!(keys.admitted(b"anyone", 0, 9), 2);
}

#[test]
fn stats_count_residents_and_lossy_evictions() {
    // One bucket: 4 cells.
    let keys = new(RATE, 3).unwrap();
    let fresh = KeyTableStats {
        capacity: 4,
        ..Default::default()
    };
    assert_eq!(keys.stats(), fresh);
    for key in [b"a", b"b", b"c", b"d"] {
        assert_eq!(keys.admitted(key, 1000, 3), 3);
    }
    assert!(keys.decide(b"e", 1000, 1).unwrap().admitted);
    let stats = keys.stats();
    assert_eq!(
        (stats.resident, stats.evictions, stats.lossy_evictions),
        (4, 1, 1)
    );
    // A drained rate is a fresh key's state: taking it loses nothing.
    assert!(keys.decide(b"f", 60_000, 1).unwrap().admitted);
    assert_eq!(keys.stats().lossy_evictions, 1);
    assert_eq!(keys.stats().evictions, 2);
}

#[test]
fn window_counts_as_stores_keep_them() {
    let rule = r#"{"kind": "fixedWindow", "limit": 3, "periodMs": 1000, "windowFromFirstHit": 1}"#;
    let keys = new(rule, 100).unwrap();
    let count = |count, reset_ms| {
        Ok(KeyCount {
            count,
            previous: 0,
            reset_ms,
        })
    };
    assert_eq!(keys.count(b"k", 1500, 0), count(0, 0), "no window yet");
    assert_eq!(
        keys.count(b"k", 1500, 1),
        count(1, 1000),
        "the window starts"
    );
    assert_eq!(keys.count(b"k", 1700, 4), count(5, 800), "past the limit");
    assert_eq!(keys.count(b"k", 1700, -2), count(3, 800));
    assert_eq!(keys.count(b"k", 1900, 0), count(3, 600));
    assert!(!keys.decide(b"k", 1900, 1).unwrap().admitted);
    assert_eq!(keys.count(b"k", 2500, 0), count(0, 0), "the window is over");
    assert_eq!(
        keys.count(b"other", 1500, -1),
        count(0, 0),
        "no window, nothing taken"
    );

    keys.count(b"a", 3000, 1).unwrap();
    keys.count(b"b", 3000, 1).unwrap();
    assert_eq!(keys.reset_all(), 3, "k, a and b; a decrement takes no cell");
    assert_eq!(keys.stats().resident, 0);
    assert_eq!(keys.count(b"a", 3000, 0), count(0, 0));

    let sliding = new(
        r#"{"kind": "slidingWindow", "limit": 4, "periodMs": 1000}"#,
        100,
    )
    .unwrap();
    sliding.count(b"k", 1200, 3).unwrap();
    let c = sliding.count(b"k", 2400, 1).unwrap();
    assert_eq!(
        c,
        KeyCount {
            count: 1,
            previous: 3,
            reset_ms: 600
        }
    );

    let rate = new(RATE, 100).unwrap();
    for units in [1, -1, 0] {
        assert_eq!(
            rate.count(b"k", 0, units),
            Err(core_refusal(KeyError::NotWindow))
        );
    }
    // A flag takes JSON's booleans as 0 or 1: refused calls count with true.
    let text = r#"{"kind": "fixedWindow", "limit": 1, "periodMs": 1000, "countRefused": true}"#;
    let counting = new(text, 100).unwrap();
    assert!(counting.decide(b"k", 0, 1).unwrap().admitted);
    assert!(!counting.decide(b"k", 0, 1).unwrap().admitted);
    assert_eq!(
        counting.count(b"k", 0, 0).unwrap().count,
        2,
        "the refused call counted"
    );
}

/// The code and message of the core's key table error `e`.
fn core_refusal(e: KeyError) -> Refusal {
    (e.code(), format!("{}: {e}", e.code().as_str()))
}

/// The core's verdict on a rule of `kind` built from `pairs`.
fn core_says(kind: KeyRuleKind, pairs: &[(&str, Value)]) -> Refusal {
    let mut builder = KeyRuleBuilder::new(kind);
    let e = pairs
        .iter()
        .find_map(|(k, v)| builder.set(k, *v).err())
        .or_else(|| builder.build().err())
        .expect("a rule the core refuses");
    (e.code(), recorded(format!("{}: {e}", e.code().as_str())))
}

/// `message` as the last error keeps it: whole characters, at most
/// `SDS_MESSAGE_MAX` bytes.
fn recorded(mut message: String) -> String {
    let mut end = message.len().min(SDS_MESSAGE_MAX);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    message
}

#[test]
fn a_bad_rule_gets_the_cores_code_and_message() {
    use KeyRuleKind::*;
    let int = |v: i64| Value::from(v);
    let cases: [(&str, Refusal); 7] = [
        (
            r#"{"kind": "rate", "limit": 1.5, "periodMs": 1000}"#,
            core_says(Rate, &[("limit", Value::from_f64(1.5))]),
        ),
        (
            r#"{"kind": "rate", "limt": 1, "periodMs": 1000}"#,
            core_says(Rate, &[("limt", int(1))]),
        ),
        (
            r#"{"kind": "rate", "limit": 10}"#,
            core_says(Rate, &[("limit", int(10))]),
        ),
        (
            r#"{"kind": "fixedWindow", "limit": 1, "periodMs": 9, "burst": 2}"#,
            core_says(FixedWindow, &[("burst", int(2))]),
        ),
        (
            r#"{"kind": "inFlight", "limit": 0}"#,
            core_says(InFlight, &[("limit", int(0))]),
        ),
        (
            r#"{"kind": "slidingWindow", "limit": 4294967296, "periodMs": 10}"#,
            core_says(
                SlidingWindow,
                &[("limit", int(1 << 32)), ("periodMs", int(10))],
            ),
        ),
        (
            r#"{"kind": "rate", "limit": 1, "limit": 2, "periodMs": 10}"#,
            core_says(Rate, &[("limit", int(1)), ("limit", int(2))]),
        ),
    ];
    for (rule, expected) in cases {
        assert_eq!(new(rule, 100).err(), Some(expected), "{rule}");
    }
    let mut builder = KeyRuleBuilder::new(Rate);
    builder.except(b"a", int(1)).unwrap();
    let e = builder.except(b"a", int(2)).unwrap_err();
    let twice =
        r#"{"kind": "rate", "limit": 1, "periodMs": 10, "exceptions": [["a", 1], ["a", 2]]}"#;
    assert_eq!(
        new(twice, 100).err(),
        Some((e.code(), recorded(format!("SDS_INVALID_STRATEGY: {e}"))))
    );
}

#[test]
fn a_rule_without_a_kind_or_not_json_is_refused() {
    let invalid = |m: &str| {
        Some((
            ErrorCode::InvalidStrategy,
            format!("SDS_INVALID_STRATEGY: invalid key rule: {m}"),
        ))
    };
    let kinds = "kind must be one of rate, fixedWindow, slidingWindow, inFlight";
    assert_eq!(
        new(r#"{"limit": 1}"#, 100).err(),
        invalid("kind is required")
    );
    assert_eq!(
        new(r#"{"kind": "leaky", "limit": 1}"#, 100).err(),
        invalid(kinds)
    );
    assert_eq!(new(r#"{"kind": 1}"#, 100).err(), invalid(kinds));
    let twice = r#"{"kind": "rate", "kind": "rate"}"#;
    assert_eq!(new(twice, 100).err(), invalid(r#""kind" is given twice"#));
    let pairs = "exceptions must be a list of [key, limit] pairs";
    for exceptions in [r#"{"a": 1}"#, r#"[["a"]]"#, r#"[[1, 2]]"#, "3"] {
        let rule =
            format!(r#"{{"kind": "rate", "limit": 1, "periodMs": 9, "exceptions": {exceptions}}}"#);
        assert_eq!(new(&rule, 100).err(), invalid(pairs), "{rule}");
    }
    let json = |text: &str| new(text, 100).unwrap_err();
    assert_eq!(
        json("[1]"),
        (
            ErrorCode::InvalidJson,
            "SDS_INVALID_JSON: key rule must be a JSON object".into()
        )
    );
    let (code, message) = json(r#"{"kind": "rate""#);
    assert_eq!(code, ErrorCode::InvalidJson);
    assert!(message.contains("line 1 column"), "{message}");
    let text = b"{\"kind\": \"\xff\"}";
    let r = unsafe { sds_keys_new(text.as_ptr().cast(), text.len(), 100, &mut null_mut()) };
    let not_utf8 = (
        ErrorCode::InvalidJson,
        "SDS_INVALID_JSON: key rule: not UTF-8 (byte 10)".into(),
    );
    assert_eq!(made(r, ()), Err(not_utf8));
}

#[test]
fn a_shared_file_attached_twice_decides_on_the_same_keys() {
    let dir = TempDir::new("ffi-keyed-shared");
    let path = dir.path().join("limits.keys");
    let path = path.to_str().unwrap();
    let first = shared(path, RATE, 100).unwrap();
    let second = shared(path, RATE, 100).unwrap();
    assert_eq!(first.admitted(b"u", 1000, 2), 2);
    assert_eq!(second.admitted(b"u", 1000, 2), 1, "one unit was left");
    assert_eq!(first.peek(b"u", 1000).remaining, 0);
    assert_eq!(
        second.stats(),
        KeyTableStats {
            capacity: 100,
            resident: 1,
            admitted: 3,
            refused: 1,
            ..Default::default()
        }
    );
    drop(first);
    assert!(second.reset(b"u"));

    let other = r#"{"kind": "rate", "limit": 10, "periodMs": 1000, "burst": 4}"#;
    let (code, message) = shared(path, other, 100).err().unwrap();
    assert_eq!(code, ErrorCode::LayoutMismatch);
    assert!(
        message.contains(path) && message.contains("burst"),
        "{message}"
    );
    let (code, message) = shared(path, RATE, 200).err().unwrap();
    assert_eq!(code, ErrorCode::LayoutMismatch, "{message}");
    // In flight on a file: two handles of this process share its units.
    let in_flight = r#"{"kind": "inFlight", "limit": 2}"#;
    let other_path = dir.path().join("in-flight.keys");
    let other_path = other_path.to_str().unwrap();
    let (one, two) = (
        shared(other_path, in_flight, 100).unwrap(),
        shared(other_path, in_flight, 100).unwrap(),
    );
    assert!(one.decide(b"c", 0, 2).unwrap().admitted);
    assert!(!two.decide(b"c", 0, 1).unwrap().admitted);
    assert_eq!(two.release(b"c", 2), Ok(true));
    assert!(one.decide(b"c", 0, 2).unwrap().admitted);
}

#[test]
fn nulls_huge_lengths_and_bad_capacities_are_refused_before_anything_changes() {
    let keys = new(RATE, 100).unwrap();
    let null_arg = |what: &str| {
        (
            ErrorCode::NullArgument,
            format!("SDS_NULL_ARGUMENT: `{what}` is NULL"),
        )
    };
    let mut d = decision(true, 7, 7, 7, 7, 7);
    let untouched = d;
    let r = unsafe { sds_keys_decide(null(), b"k".as_ptr().cast(), 1, 0, 1, &mut d) };
    assert_eq!(made(r, ()), Err(null_arg("keys")));
    let r = unsafe { sds_keys_decide(keys.0, null(), 0, 0, 1, &mut d) };
    assert_eq!(made(r, ()), Err(null_arg("key")));
    let r = unsafe { sds_keys_decide(keys.0, b"k".as_ptr().cast(), 1, 0, 1, null_mut()) };
    assert_eq!(made(r, ()), Err(null_arg("out")));
    let r = unsafe { sds_keys_decide(keys.0, b"k".as_ptr().cast(), usize::MAX, 0, 1, &mut d) };
    let huge = (
        ErrorCode::InvalidArgument,
        "SDS_INVALID_ARGUMENT: `key_len` is too large".to_string(),
    );
    assert_eq!(made(r, ()), Err(huge.clone()));
    let r = unsafe { sds_keys_peek(keys.0, b"k".as_ptr().cast(), usize::MAX, 0, &mut d) };
    assert_eq!(made(r, ()), Err(huge.clone()));
    let r = unsafe { sds_keys_release(keys.0, b"k".as_ptr().cast(), usize::MAX, 1, null_mut()) };
    assert_eq!(made(r, ()), Err(huge.clone()));
    let r = unsafe { sds_keys_reset(keys.0, b"k".as_ptr().cast(), usize::MAX, null_mut()) };
    assert_eq!(made(r, ()), Err(huge));
    assert_eq!(d, untouched);
    assert_eq!(keys.stats().resident, 0);
    let r = unsafe { sds_keys_stats_get(null(), &mut KeyTableStats::default()) };
    assert_eq!(made(r, ()), Err(null_arg("keys")));
    unsafe { sds_keys_free(null_mut()) };

    let mut out = null_mut();
    let r = unsafe { sds_keys_new(null(), 0, 100, &mut out) };
    assert_eq!(made(r, ()), Err(null_arg("rule")));
    let r = unsafe { sds_keys_new(RATE.as_ptr().cast(), usize::MAX, 100, &mut out) };
    assert_eq!(made(r, ()).unwrap_err().0, ErrorCode::InvalidArgument);
    let r = unsafe { sds_keys_new(RATE.as_ptr().cast(), RATE.len(), 100, null_mut()) };
    assert_eq!(made(r, ()), Err(null_arg("out")));
    for bad in [0, (1 << 28) + 1, usize::MAX] {
        let refused = new(RATE, bad).err();
        assert_eq!(
            refused,
            Some(core_refusal(KeyError::InvalidCapacity)),
            "{bad}"
        );
    }
    assert!(out.is_null());
    let r = unsafe {
        sds_keys_open_shared(
            null(),
            0,
            RATE.as_ptr().cast(),
            RATE.len(),
            100,
            0,
            &mut out,
        )
    };
    assert_eq!(made(r, ()), Err(null_arg("path")));
    let dir = TempDir::new("ffi-keyed-flags");
    let path = dir.path().join("k").to_str().unwrap().to_string();
    let (p, rule) = (path.as_ptr().cast(), RATE.as_ptr().cast());
    let r = unsafe { sds_keys_open_shared(p, path.len(), rule, RATE.len(), 100, 2, &mut out) };
    let flags = "SDS_INVALID_ARGUMENT: unknown flag bits 0x2 (only SDS_SHARED_GROUP is known)";
    assert_eq!(
        made(r, ()),
        Err((ErrorCode::InvalidArgument, flags.to_string()))
    );
    assert!(out.is_null());
}
