//! A route's policies deciding requests: the order of `RoutePolicies`
//! (peek after a refusal, in-flight units held and given back, a full
//! in-flight table), with private key tables and explicit times.

use std::sync::Arc;

use sds_core::keyed::{KeyError, KeyRuleBuilder, KeyRuleKind};
use sds_core::Value;
use sds_http::{HeaderStyle, RouteError, RoutePolicies, Verdict, MAX_POLICIES};
use sds_shm::AnyKeys;

/// The start of a minute: a fixed window of 60 s resets in 60 s.
const NOW: u64 = 1_700_000_040_000;

fn table(kind: KeyRuleKind, fields: &[(&str, i64)], capacity: usize) -> Arc<AnyKeys> {
    let mut builder = KeyRuleBuilder::new(kind);
    for &(field, value) in fields {
        builder.set(field, Value::from(value)).unwrap();
    }
    Arc::new(AnyKeys::private(builder.build().unwrap(), capacity).unwrap())
}

/// `limit` per minute, fixed window.
fn window(limit: i64) -> Arc<AnyKeys> {
    table(
        KeyRuleKind::FixedWindow,
        &[("limit", limit), ("periodMs", 60_000)],
        64,
    )
}

fn in_flight(limit: i64, capacity: usize) -> Arc<AnyKeys> {
    table(KeyRuleKind::InFlight, &[("limit", limit)], capacity)
}

fn route(policies: &[(&str, &Arc<AnyKeys>)]) -> RoutePolicies {
    let policies = policies
        .iter()
        .map(|&(name, limit)| (name.to_string(), Arc::clone(limit)))
        .collect();
    RoutePolicies::new(HeaderStyle::Draft10, policies).unwrap()
}

fn remaining(limit: &AnyKeys, key: &[u8]) -> u32 {
    limit.peek(key, NOW).remaining
}

#[test]
fn every_policy_with_a_key_takes_its_cost_and_the_headers_speak_for_each() {
    let (a, b) = (window(10), window(5));
    let r = route(&[("per-ip", &a), ("per-user", &b)]);
    let d = r
        .decide(&[Some(b"1.2.3.4"), Some(b"alice")], &[2, 1], NOW)
        .unwrap();
    assert_eq!((d.verdict, d.held), (Verdict::Admitted, 0));
    assert_eq!((remaining(&a, b"1.2.3.4"), remaining(&b, b"alice")), (8, 4));
    assert_eq!(
        r.headers(&d),
        vec![
            (
                "RateLimit-Policy",
                r#""per-ip";q=10;w=60, "per-user";q=5;w=60"#.to_string()
            ),
            (
                "RateLimit",
                r#""per-ip";r=8;t=60, "per-user";r=4;t=60"#.to_string()
            ),
        ]
    );
}

#[test]
fn a_policy_without_a_key_is_left_out_of_the_decision_and_the_headers() {
    let (a, b) = (window(10), window(5));
    let r = route(&[("per-ip", &a), ("per-user", &b)]);
    let d = r.decide(&[None, Some(b"alice")], &[1, 1], NOW).unwrap();
    assert_eq!(d.verdict, Verdict::Admitted);
    assert_eq!(d.decisions().len(), 1);
    assert_eq!(d.decisions()[0].0, 1);
    assert_eq!(remaining(&b, b"alice"), 4);
    assert!(r.headers(&d)[0].1.starts_with(r#""per-user""#));
    let none = r.decide(&[None, None], &[1, 1], NOW).unwrap();
    assert_eq!(none.verdict, Verdict::Admitted);
    assert!(r.headers(&none).is_empty());
}

#[test]
fn after_a_refusal_the_later_policies_only_peek_and_the_earlier_keep_their_hit() {
    let (first, tight, last) = (window(10), window(1), window(10));
    let r = route(&[("a", &first), ("b", &tight), ("c", &last)]);
    let keys = [Some(&b"k"[..]), Some(&b"k"[..]), Some(&b"k"[..])];
    assert_eq!(
        r.decide(&keys, &[1, 1, 1], NOW).unwrap().verdict,
        Verdict::Admitted
    );
    let d = r.decide(&keys, &[1, 1, 1], NOW + 1).unwrap();
    assert_eq!(d.verdict, Verdict::Limited);
    // The first took its unit (as flask-limiter's limits do), the last did not.
    assert_eq!(remaining(&first, b"k"), 8);
    assert_eq!(remaining(&last, b"k"), 9);
    assert_eq!(d.decisions().len(), 3);
    let fields = r.headers(&d);
    assert_eq!(fields[2].0, "Retry-After");
    assert_eq!(fields[1].1, r#""a";r=8;t=60, "b";r=0;t=60, "c";r=9;t=60"#);
}

#[test]
fn in_flight_units_are_held_until_released_and_given_back_on_a_refusal() {
    let (conns, tight) = (in_flight(2, 16), window(1));
    let r = route(&[("conns", &conns), ("rate", &tight)]);
    let keys = [Some(&b"k"[..]), Some(&b"k"[..])];
    let d = r.decide(&keys, &[1, 1], NOW).unwrap();
    assert_eq!((d.verdict, d.held), (Verdict::Admitted, 0b01));
    assert_eq!(remaining(&conns, b"k"), 1);
    // The window refuses the second request: its in-flight unit goes back at once.
    let refused = r.decide(&keys, &[1, 1], NOW).unwrap();
    assert_eq!((refused.verdict, refused.held), (Verdict::Limited, 0));
    assert_eq!(remaining(&conns, b"k"), 1);
    r.release(d.held, &keys, &[1, 1]);
    assert_eq!(remaining(&conns, b"k"), 2);
}

#[test]
fn a_full_in_flight_table_is_table_full_with_nothing_held_and_no_headers() {
    // 4 cells (one bucket): four keys holding units fill it.
    let (rate, conns) = (window(100), in_flight(1, 4));
    let r = route(&[("rate", &rate), ("conns", &conns)]);
    let mut held = Vec::new();
    for k in 0..64u8 {
        let key = [k];
        let d = r.decide(&[Some(&key), Some(&key)], &[1, 1], NOW).unwrap();
        if d.verdict == Verdict::TableFull {
            assert_eq!(d.held, 0);
            assert!(r.headers(&d).is_empty());
            // The rate policy before it keeps its hit, nothing in flight was taken.
            assert_eq!(remaining(&rate, &key), 99);
            assert_eq!(remaining(&conns, &key), 1);
            assert!(held.len() >= 4, "full after {} keys", held.len());
            for key in held {
                let key: [u8; 1] = key;
                r.release(0b10, &[Some(&key), Some(&key)], &[1, 1]);
                assert_eq!(remaining(&conns, &key), 1);
            }
            return;
        }
        assert_eq!(d.held, 0b10);
        held.push(key);
    }
    panic!("a table of 4 cells never filled");
}

#[test]
fn a_zero_cost_is_the_tables_error_and_gives_back_what_was_held() {
    let (conns, rate) = (in_flight(5, 16), window(10));
    let r = route(&[("conns", &conns), ("rate", &rate)]);
    let keys = [Some(&b"k"[..]), Some(&b"k"[..])];
    assert_eq!(
        r.decide(&keys, &[1, 0], NOW).unwrap_err(),
        KeyError::ZeroCost
    );
    assert_eq!(remaining(&conns, b"k"), 5);
}

#[test]
fn a_route_refuses_bad_names_twins_and_too_many_policies() {
    let a = window(1);
    let named = |names: &[&str]| {
        let policies = names
            .iter()
            .map(|n| (n.to_string(), Arc::clone(&a)))
            .collect();
        RoutePolicies::new(HeaderStyle::Draft6, policies).map(|_| ())
    };
    assert!(matches!(named(&[""]), Err(RouteError::Name(_))));
    assert!(matches!(named(&["tab\there"]), Err(RouteError::Name(_))));
    assert_eq!(
        named(&["a", "b", "a"]),
        Err(RouteError::DuplicateName("a".into()))
    );
    let many: Vec<String> = (0..=MAX_POLICIES).map(|i| format!("p{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(named(&many), Err(RouteError::TooMany(MAX_POLICIES + 1)));
    assert_eq!(named(&many[..MAX_POLICIES]), Ok(()));
    assert_eq!(
        RouteError::TooMany(65).to_string(),
        "a route has at most 64 policies, not 65"
    );
}
