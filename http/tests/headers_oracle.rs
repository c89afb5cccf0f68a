//! `headers` against the rules of the fields it writes: every value is an
//! RFC 9110 field value; `RateLimit` and `RateLimit-Policy` read back, with
//! a reader of RFC 9651 Structured Field Lists written here, as one String
//! item per limit, named by its policy, with the decision's numbers as
//! Integer parameters; the older fields and `Retry-After` are decimal
//! integers with the values the module documents.
//!
//! The properties run `PROPTEST_CASES` cases each (a few hundred by
//! default); run them long with e.g. `PROPTEST_CASES=100000`.

use proptest::prelude::*;
use sds_core::keyed::{KeyDecision, NEVER};
use sds_http::{check_policy_name, headers, HeaderStyle, Limited};
use sds_testkit::proptest_config as config;

/// One list item: the String and its parameters, in order.
type Item = (String, Vec<(String, i64)>);

/// RFC 9651 §4.2.1: a List of Items whose bare items are Strings with
/// Integer parameters (all this module writes); `None` if `text` is not one.
fn parse_list(text: &str) -> Option<Vec<Item>> {
    let mut rest = text.as_bytes();
    let mut items = Vec::new();
    if rest.is_empty() {
        return Some(items);
    }
    loop {
        // sf-string (§4.2.5)
        rest = rest.strip_prefix(b"\"")?;
        let mut name = String::new();
        loop {
            match *rest.first()? {
                b'\\' => {
                    let c = *rest.get(1)?;
                    if c != b'"' && c != b'\\' {
                        return None;
                    }
                    name.push(c as char);
                    rest = &rest[2..];
                }
                b'"' => {
                    rest = &rest[1..];
                    break;
                }
                c @ 0x20..=0x7e => {
                    name.push(c as char);
                    rest = &rest[1..];
                }
                _ => return None,
            }
        }
        // parameters (§4.2.3.2): ";" *SP key "=" sf-integer
        let mut params = Vec::new();
        while let Some(after) = rest.strip_prefix(b";") {
            rest = after;
            while let Some(after) = rest.strip_prefix(b" ") {
                rest = after;
            }
            if !rest.first()?.is_ascii_lowercase() && *rest.first()? != b'*' {
                return None;
            }
            let key_len = rest
                .iter()
                .take_while(|&&b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-.*".contains(&b)
                })
                .count();
            let key = std::str::from_utf8(&rest[..key_len]).ok()?.to_string();
            rest = rest[key_len..].strip_prefix(b"=")?;
            // sf-integer (§4.2.4): an optional minus and 1 to 15 digits.
            let negative = rest.first() == Some(&b'-');
            if negative {
                rest = &rest[1..];
            }
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 || digits > 15 {
                return None;
            }
            let value: i64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
            rest = &rest[digits..];
            params.push((key, if negative { -value } else { value }));
        }
        items.push((name, params));
        // OWS "," OWS, or the end
        while let Some(after) = rest.strip_prefix(b" ").or_else(|| rest.strip_prefix(b"\t")) {
            rest = after;
        }
        if rest.is_empty() {
            return Some(items);
        }
        rest = rest.strip_prefix(b",")?;
        while let Some(after) = rest.strip_prefix(b" ").or_else(|| rest.strip_prefix(b"\t")) {
            rest = after;
        }
        if rest.is_empty() {
            return None;
        }
    }
}

/// RFC 9110 §5.5: visible characters with spaces between, none around.
fn is_field_value(text: &str) -> bool {
    text.bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b))
        && !text.starts_with([' ', '\t'])
        && !text.ends_with([' ', '\t'])
}

fn decimal(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn ceil_seconds(ms: u64) -> u64 {
    ms / 1000 + u64::from(ms % 1000 != 0)
}

/// Decisions as key tables make them: times below 2^44 ms (a period is at
/// most 2^40 ms, a rate's burst 2^53 µs), so that seconds fit an
/// sf-integer's 15 digits. (`headers` prints any `u64` in full; a table
/// never hands it one that large.)
fn decision() -> impl Strategy<Value = KeyDecision> {
    let ms = prop_oneof![0u64..3000, 0u64..(1 << 44), Just((1 << 44) - 1)];
    (
        any::<bool>(),
        any::<u32>(),
        any::<u32>(),
        ms.clone(),
        ms.clone(),
        ms,
        0u8..4,
    )
        .prop_map(
            |(admitted, limit, remaining, reset_ms, retry, window_ms, kind)| KeyDecision {
                admitted,
                limit,
                remaining: remaining.min(limit),
                reset_ms,
                retry_after_ms: match (admitted, kind) {
                    (true, _) | (false, 0) => 0,
                    (false, 1) => NEVER,
                    _ => retry,
                },
                window_ms,
            },
        )
}

fn policy_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9-]{0,12}",
        2 => "[ -~]{1,70}",
        1 => any::<String>(),
        1 => "[\"\\\\ a\u{e9}\u{7f}\n\u{1F600}]{1,6}",
    ]
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn every_field_reads_back_as_documented(
        limits in prop::collection::vec((policy_name(), decision()), 0..5),
        style in prop::sample::select(&[HeaderStyle::Draft10, HeaderStyle::Draft6, HeaderStyle::XRateLimit][..]),
    ) {
        let limited: Vec<Limited> = limits
            .iter()
            .map(|(policy, decision)| Limited { policy, decision: *decision })
            .collect();
        let fields = headers(&limited, style);
        if limits.is_empty() {
            prop_assert!(fields.is_empty());
            return Ok(());
        }
        for (name, value) in &fields {
            prop_assert!(is_field_value(value), "{}: {:?}", name, value);
        }
        let field = |name: &str| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str());
        let names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
        let mut want_names = match style {
            HeaderStyle::Draft10 => vec!["RateLimit-Policy", "RateLimit"],
            HeaderStyle::Draft6 => vec!["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
            HeaderStyle::XRateLimit => vec!["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"],
        };
        let wait = limits
            .iter()
            .map(|(_, d)| d)
            .filter(|d| !d.admitted && d.retry_after_ms != 0 && d.retry_after_ms != NEVER)
            .map(|d| ceil_seconds(d.retry_after_ms).max(1))
            .max();
        if wait.is_some() {
            want_names.push("Retry-After");
        }
        prop_assert_eq!(&names, &want_names);
        prop_assert_eq!(field("Retry-After").map(decimal), wait.map(Some));
        match style {
            HeaderStyle::Draft10 => {
                // A name a String cannot hold has those characters as `?`.
                let shown = |name: &str| -> String {
                    name.chars().map(|c| if (' '..='~').contains(&c) { c } else { '?' }).collect()
                };
                let policy = parse_list(field("RateLimit-Policy").unwrap());
                let state = parse_list(field("RateLimit").unwrap());
                let want_policy: Vec<Item> = limits
                    .iter()
                    .map(|(name, d)| {
                        let params = vec![
                            ("q".to_string(), i64::from(d.limit)),
                            ("w".to_string(), ceil_seconds(d.window_ms).max(1) as i64),
                        ];
                        (shown(name), params)
                    })
                    .collect();
                let want_state: Vec<Item> = limits
                    .iter()
                    .map(|(name, d)| {
                        let params = vec![
                            ("r".to_string(), i64::from(d.remaining)),
                            ("t".to_string(), ceil_seconds(d.reset_ms) as i64),
                        ];
                        (shown(name), params)
                    })
                    .collect();
                prop_assert_eq!(policy, Some(want_policy));
                prop_assert_eq!(state, Some(want_state));
            }
            _ => {
                // The limit closest to refusing: the least remaining, the
                // latest reset on a tie.
                let least = limits.iter().map(|(_, d)| d.remaining).min().unwrap();
                let reset = limits
                    .iter()
                    .filter(|(_, d)| d.remaining == least)
                    .map(|(_, d)| d.reset_ms)
                    .max()
                    .unwrap();
                let tight = limits
                    .iter()
                    .find(|(_, d)| d.remaining == least && d.reset_ms == reset)
                    .unwrap()
                    .1;
                let values: Vec<Option<u64>> = fields[..3].iter().map(|(_, v)| decimal(v)).collect();
                prop_assert_eq!(
                    values,
                    vec![Some(u64::from(tight.limit)), Some(u64::from(least)), Some(ceil_seconds(reset))]
                );
            }
        }
    }

    /// A name passes the check exactly when a String holds it (printable
    /// ASCII, RFC 9651 §3.3.3) and it has 1 to 64 characters; a name that
    /// passes reads back as itself.
    #[test]
    fn checked_names_are_strings_that_read_back(name in policy_name(), d in decision()) {
        let holdable = name.bytes().all(|b| (0x20..=0x7e).contains(&b));
        let want = holdable && !name.is_empty() && name.len() <= 64;
        prop_assert_eq!(check_policy_name(&name).is_ok(), want, "{:?}", name);
        if want {
            let fields = headers(&[Limited { policy: &name, decision: d }], HeaderStyle::Draft10);
            let items = parse_list(&fields[0].1).unwrap();
            prop_assert_eq!(&items[0].0, &name);
        }
    }
}

#[test]
fn the_reader_refuses_what_is_no_list() {
    // The reader itself, on what the property relies on.
    assert_eq!(
        parse_list(r#""a\"b";q=1;w=2, "c";q=3"#),
        Some(vec![
            (
                "a\"b".to_string(),
                vec![("q".to_string(), 1), ("w".to_string(), 2)]
            ),
            ("c".to_string(), vec![("q".to_string(), 3)]),
        ])
    );
    for bad in [
        r#""a"#,
        r#""a\x""#,
        r#""a";q=1234567890123456"#,
        r#""a", "#,
        r#""a";Q=1"#,
        "\"\u{e9}\"",
    ] {
        assert_eq!(parse_list(bad), None, "{bad}");
    }
}
