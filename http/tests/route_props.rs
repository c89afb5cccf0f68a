//! `RoutePolicies::decide` and `release` against the invariants the route
//! module documents, on random routes and request sequences: which
//! policies decide, which only peek, what each table keeps, what is held
//! and given back.
//!
//! The properties run `PROPTEST_CASES` cases each (a few hundred by
//! default); run them long with e.g. `PROPTEST_CASES=100000`.

use std::sync::Arc;

use proptest::prelude::*;
use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
use sds_core::{ErrorCode, Value};
use sds_http::{HeaderStyle, RouteError, RoutePolicies, Verdict, MAX_POLICIES};
use sds_shm::AnyKeys;
use sds_testkit::proptest_config as config;

/// The start of a minute: no fixed window of 60 s ends within a case.
const NOW: u64 = 1_700_000_040_000;
/// More keys than the smallest table has cells (4, one bucket), so that
/// in-flight tables fill.
const KEYS: [&[u8]; 6] = [b"a", b"b", b"c", b"d", b"e", b"f"];

/// A policy: in flight (with a table of `capacity` keys) or a fixed window.
#[derive(Clone, Debug)]
struct Policy {
    in_flight: bool,
    limit: i64,
    capacity: usize,
}

fn table(p: &Policy) -> Arc<AnyKeys> {
    let kind = if p.in_flight {
        KeyRuleKind::InFlight
    } else {
        KeyRuleKind::FixedWindow
    };
    let mut builder = KeyRuleBuilder::new(kind);
    builder.set("limit", Value::from(p.limit)).unwrap();
    if !p.in_flight {
        builder.set("periodMs", Value::from(60_000i64)).unwrap();
    }
    Arc::new(AnyKeys::private(builder.build().unwrap(), p.capacity).unwrap())
}

fn policy() -> impl Strategy<Value = Policy> {
    (any::<bool>(), 1i64..6).prop_map(|(in_flight, limit)| Policy {
        in_flight,
        limit,
        capacity: if in_flight { 4 } else { 64 },
    })
}

/// One request: a key (index into `KEYS`) or none per policy, a cost per
/// policy (0 now and then: an error), ms since the last, and whether its
/// held units are given back at once (else at the end).
#[derive(Clone, Debug)]
struct Request {
    keys: Vec<Option<usize>>,
    costs: Vec<u32>,
    dt: u64,
    release_now: bool,
}

fn request(n: usize) -> impl Strategy<Value = Request> {
    (
        prop::collection::vec(prop::option::weighted(0.8, 0usize..KEYS.len()), n),
        prop::collection::vec(prop_oneof![20 => 1u32..3, 1 => Just(0u32)], n),
        0u64..100,
        prop::bool::weighted(0.3),
    )
        .prop_map(|(keys, costs, dt, release_now)| Request {
            keys,
            costs,
            dt,
            release_now,
        })
}

fn route_and_requests() -> impl Strategy<Value = (Vec<Policy>, Vec<Request>)> {
    prop::collection::vec(policy(), 1..5).prop_flat_map(|policies| {
        let n = policies.len();
        (Just(policies), prop::collection::vec(request(n), 1..16))
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn decide_keeps_the_documented_order((policies, requests) in route_and_requests()) {
        let tables: Vec<Arc<AnyKeys>> = policies.iter().map(table).collect();
        let named = tables
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("p{i}"), Arc::clone(t)))
            .collect();
        let route = RoutePolicies::new(HeaderStyle::Draft10, named).unwrap();
        let mut now = NOW;
        let mut outstanding = Vec::new();
        for r in &requests {
            now += r.dt;
            let keys: Vec<Option<&[u8]>> = r.keys.iter().map(|k| k.map(|k| KEYS[k])).collect();
            // What each policy's table says of this request's key, before.
            let peek = |i: usize| keys[i].map(|k| tables[i].peek(k, now).remaining);
            let before: Vec<Option<u32>> = (0..tables.len()).map(peek).collect();
            let result = route.decide(&keys, &r.costs, now);
            let after: Vec<Option<u32>> = (0..tables.len()).map(peek).collect();
            let keyed: Vec<usize> = (0..tables.len()).filter(|&i| keys[i].is_some()).collect();
            let took = |i: usize| before[i].unwrap() - r.costs[i] == after[i].unwrap();
            let kept = |i: usize| before[i] == after[i];
            let decided = match result {
                Err(e) => {
                    // Only a cost of 0 errs here; in-flight units are given
                    // back, window hits kept.
                    prop_assert_ne!(e.code(), ErrorCode::TableFull);
                    prop_assert!(r.costs.contains(&0));
                    for &i in &keyed {
                        prop_assert!(!policies[i].in_flight || kept(i), "policy {} kept units", i);
                    }
                    continue;
                }
                Ok(decided) => decided,
            };
            let order: Vec<usize> = decided.decisions().iter().map(|&(i, _)| i).collect();
            match decided.verdict {
                Verdict::Admitted => {
                    prop_assert_eq!(&order, &keyed, "every policy with a key decides, in order");
                    let mut held = 0u64;
                    for &(i, d) in decided.decisions() {
                        prop_assert!(d.admitted);
                        prop_assert!(took(i), "policy {} took its cost", i);
                        prop_assert_eq!(Some(d.remaining), after[i]);
                        if policies[i].in_flight {
                            held |= 1 << i;
                        }
                    }
                    prop_assert_eq!(decided.held, held);
                    // No policy applied: no headers.
                    let fields = if keyed.is_empty() { 0 } else { 2 };
                    prop_assert_eq!(route.headers(&decided).len(), fields);
                    if r.release_now {
                        route.release(decided.held, &keys, &r.costs);
                        for &i in &keyed {
                            let given_back = before[i] == peek(i);
                            prop_assert_eq!(given_back, policies[i].in_flight, "policy {} after release", i);
                        }
                    } else {
                        outstanding.push((decided.held, r.keys.clone(), r.costs.clone()));
                    }
                }
                Verdict::Limited => {
                    prop_assert_eq!(&order, &keyed, "every policy with a key is in the headers");
                    prop_assert_eq!(decided.held, 0);
                    let first = decided
                        .decisions()
                        .iter()
                        .position(|(_, d)| !d.admitted)
                        .expect("a refusal");
                    for (n, &(i, _)) in decided.decisions().iter().enumerate() {
                        if n < first && !policies[i].in_flight {
                            prop_assert!(took(i), "policy {} before the refusal keeps its hit", i);
                        } else {
                            // Refused, peeked after it, or in flight given back.
                            prop_assert!(kept(i), "policy {} changed", i);
                        }
                    }
                    prop_assert!(!route.headers(&decided).is_empty());
                }
                Verdict::TableFull => {
                    prop_assert!(order.is_empty());
                    prop_assert_eq!(decided.held, 0);
                    prop_assert!(route.headers(&decided).is_empty());
                    // The full table is an in-flight one; nothing is held.
                    prop_assert!(keyed.iter().any(|&i| policies[i].in_flight));
                    for &i in &keyed {
                        prop_assert!(!policies[i].in_flight || kept(i), "policy {} holds units", i);
                        prop_assert!(policies[i].in_flight || kept(i) || took(i));
                    }
                }
            }
        }
        // Every unit held is given back: the in-flight tables are empty.
        for (held, ks, costs) in &outstanding {
            let keys: Vec<Option<&[u8]>> = ks.iter().map(|k| k.map(|k| KEYS[k])).collect();
            route.release(*held, &keys, costs);
        }
        for (i, p) in policies.iter().enumerate() {
            if p.in_flight {
                for key in KEYS {
                    prop_assert_eq!(tables[i].peek(key, now).remaining, p.limit as u32, "policy {} key {:?}", i, key);
                }
            }
        }
    }

    /// A route is refused for too many policies, a name a header cannot
    /// carry, or a name given twice (the first such, in order).
    #[test]
    fn a_route_is_set_up_or_refused_as_documented(
        names in prop::collection::vec(prop_oneof![
            8 => "[a-c]{1,2}",
            1 => Just(String::new()),
            1 => "[a\u{e9}\t]{1,2}",
            1 => "x{64,66}",
        ], 0..8),
        many in any::<bool>(),
    ) {
        let limit = table(&Policy { in_flight: false, limit: 1, capacity: 4 });
        let names = if many {
            (0..=MAX_POLICIES).map(|i| format!("p{i}")).collect()
        } else {
            names
        };
        let want = if names.len() > MAX_POLICIES {
            Some(RouteError::TooMany(names.len()))
        } else {
            names.iter().enumerate().find_map(|(i, name)| {
                let printable = name.bytes().all(|b| (0x20..0x7f).contains(&b));
                if name.is_empty() || name.len() > 64 || !printable {
                    Some("name")
                } else if names[..i].contains(name) {
                    Some("twice")
                } else {
                    None
                }
                .map(|why| match why {
                    "name" => RouteError::Name(sds_http::check_policy_name(name).unwrap_err()),
                    _ => RouteError::DuplicateName(name.clone()),
                })
            })
        };
        let policies = names.iter().map(|n| (n.clone(), Arc::clone(&limit))).collect();
        let got = RoutePolicies::new(HeaderStyle::Draft6, policies);
        match want {
            None => {
                let route = got.unwrap();
                prop_assert_eq!(route.names(), &names[..]);
            }
            Some(e) => prop_assert_eq!(got.err(), Some(e)),
        }
    }
}
