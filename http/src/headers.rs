//! Header fields of key decisions.
//!
//! draft-ietf-httpapi-ratelimit-headers-10 (the default): one list item per
//! limit, named by its policy (a Structured Field String):
//!
//! ```text
//! RateLimit-Policy: "per-user";q=100;w=60, "per-ip";q=1000;w=3600
//! RateLimit: "per-user";r=42;t=17, "per-ip";r=900;t=2000
//! ```
//!
//! `q` is the decision's `limit` (a window's limit, a rate's burst), `w` its
//! `window_ms` and `t` its `reset_ms`, both in whole seconds rounded up (a
//! client that waits `t` seconds finds the quota back), `r` its
//! `remaining`. The older styles have one value per field, so they speak
//! for the limit closest to refusing (the least `remaining`; the latest
//! reset on a tie): `RateLimit-Limit`, `RateLimit-Remaining`,
//! `RateLimit-Reset` (seconds, draft-06) or the same as `X-RateLimit-*`
//! (GitHub's and most gateways' names; `Reset` in seconds here too).
//!
//! `Retry-After` (seconds, rounded up, at least 1) comes with a refusal:
//! the longest wait among the refused limits, since every one of them must
//! admit. A refusal no wait can cure (a cost above the quota) or one that
//! waits on a release (in flight) has none.

use std::fmt;

use sds_core::keyed::{KeyDecision, NEVER};

/// Which header fields [`headers`] writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum HeaderStyle {
    /// `RateLimit` and `RateLimit-Policy`, draft-ietf-httpapi-ratelimit-headers-10.
    Draft10,
    /// `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`.
    Draft6,
    /// `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`.
    XRateLimit,
}

impl HeaderStyle {
    /// The style of a name as bindings take it: `"draft-10"`, `"draft-6"`,
    /// `"x-ratelimit"`; `None` for any other.
    pub fn from_name(name: &str) -> Option<HeaderStyle> {
        match name {
            "draft-10" => Some(HeaderStyle::Draft10),
            "draft-6" => Some(HeaderStyle::Draft6),
            "x-ratelimit" => Some(HeaderStyle::XRateLimit),
            _ => None,
        }
    }
}

/// One limit's decision for a request and the name of its policy.
#[derive(Copy, Clone, Debug)]
pub struct Limited<'a> {
    /// The policy's name: printable ASCII ([`check_policy_name`]).
    pub policy: &'a str,
    /// What the limit decided.
    pub decision: KeyDecision,
}

/// A policy name that a header cannot carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyNameError(pub String);

impl fmt::Display for PolicyNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "policy name {:?} must be 1 to 64 printable ASCII characters",
            self.0
        )
    }
}

impl std::error::Error for PolicyNameError {}

/// Checks that `name` can be a policy's name in a header (a Structured
/// Field String holds printable ASCII only; 64 is ours, to keep headers
/// short): what a middleware checks once, when a route is configured.
pub fn check_policy_name(name: &str) -> Result<(), PolicyNameError> {
    let printable = name.bytes().all(|b| (0x20..0x7f).contains(&b));
    if name.is_empty() || name.len() > 64 || !printable {
        return Err(PolicyNameError(name.to_string()));
    }
    Ok(())
}

/// Whole seconds of `ms`, rounded up.
fn seconds(ms: u64) -> u64 {
    ms.div_ceil(1000)
}

/// The header fields of `limits` in `style`, in order, for the response to
/// one request; nothing for no limits. A name [`check_policy_name`]
/// refuses is written with its other characters as `?`.
pub fn headers(limits: &[Limited<'_>], style: HeaderStyle) -> Vec<(&'static str, String)> {
    headers_of(limits.iter().copied(), style)
}

/// [`headers`] of limits read from an iterator (read up to three times),
/// so that a route need not collect its decisions first.
pub(crate) fn headers_of<'a, I>(limits: I, style: HeaderStyle) -> Vec<(&'static str, String)>
where
    I: Iterator<Item = Limited<'a>> + Clone,
{
    let mut fields = Vec::with_capacity(4);
    if limits.clone().next().is_none() {
        return fields;
    }
    match style {
        HeaderStyle::Draft10 => {
            let policy = list(limits.clone(), |out, d| {
                param(out, ";q=", u64::from(d.limit));
                param(out, ";w=", seconds(d.window_ms).max(1));
            });
            let state = list(limits.clone(), |out, d| {
                param(out, ";r=", u64::from(d.remaining));
                param(out, ";t=", seconds(d.reset_ms));
            });
            fields.push(("RateLimit-Policy", policy));
            fields.push(("RateLimit", state));
        }
        HeaderStyle::Draft6 | HeaderStyle::XRateLimit => {
            let tightest = limits
                .clone()
                .map(|l| l.decision)
                .min_by_key(|d| (d.remaining, std::cmp::Reverse(d.reset_ms)))
                .expect("limits is not empty");
            let [limit, remaining, reset] = if style == HeaderStyle::Draft6 {
                ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]
            } else {
                [
                    "X-RateLimit-Limit",
                    "X-RateLimit-Remaining",
                    "X-RateLimit-Reset",
                ]
            };
            fields.push((limit, tightest.limit.to_string()));
            fields.push((remaining, tightest.remaining.to_string()));
            fields.push((reset, seconds(tightest.reset_ms).to_string()));
        }
    }
    let wait = limits
        .filter(|l| !l.decision.admitted)
        .map(|l| l.decision.retry_after_ms)
        .filter(|&ms| ms != 0 && ms != NEVER)
        .max();
    if let Some(ms) = wait {
        fields.push(("Retry-After", seconds(ms).max(1).to_string()));
    }
    fields
}

/// A Structured Field List of the limits: each policy name as a String
/// with the parameters `params` writes.
fn list<'a>(
    limits: impl Iterator<Item = Limited<'a>>,
    params: impl Fn(&mut String, &KeyDecision),
) -> String {
    let mut out = String::with_capacity(48);
    for (i, limited) in limits.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        let name = limited.policy;
        if name
            .bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
        {
            // The usual name: nothing to escape or replace.
            out.push_str(name);
        } else {
            for c in name.chars() {
                match c {
                    '"' | '\\' => {
                        out.push('\\');
                        out.push(c);
                    }
                    ' '..='~' => out.push(c),
                    _ => out.push('?'),
                }
            }
        }
        out.push('"');
        params(&mut out, &limited.decision);
    }
    out
}

/// Writes `prefix` and `value` in decimal, without the formatting
/// machinery: it runs twice per policy per request.
fn param(out: &mut String, prefix: &str, value: u64) {
    out.push_str(prefix);
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // Pushed as chars: no UTF-8 check of bytes known to be digits.
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(admitted: bool, limit: u32, remaining: u32, reset_ms: u64) -> KeyDecision {
        KeyDecision {
            admitted,
            limit,
            remaining,
            reset_ms,
            retry_after_ms: if admitted { 0 } else { reset_ms },
            window_ms: 60_000,
        }
    }

    #[test]
    fn draft_10_lists_every_policy_with_seconds_rounded_up() {
        let limits = [
            Limited {
                policy: "per-user",
                decision: decision(true, 100, 42, 16_001),
            },
            Limited {
                policy: "a \"b\\",
                decision: decision(true, 5, 4, 0),
            },
        ];
        assert_eq!(
            headers(&limits, HeaderStyle::Draft10),
            [
                (
                    "RateLimit-Policy",
                    r#""per-user";q=100;w=60, "a \"b\\";q=5;w=60"#.to_string()
                ),
                (
                    "RateLimit",
                    r#""per-user";r=42;t=17, "a \"b\\";r=4;t=0"#.to_string()
                ),
            ]
        );
    }

    #[test]
    fn numbers_from_zero_to_the_largest_and_names_with_what_a_string_cannot_hold() {
        let mut long = decision(true, u32::MAX, 0, u64::MAX);
        long.window_ms = 1;
        let limits = [
            Limited {
                policy: "caf\u{e9}\n",
                decision: long,
            },
            Limited {
                policy: "p",
                decision: decision(true, 10, 9, 999),
            },
        ];
        assert_eq!(
            headers(&limits, HeaderStyle::Draft10),
            [
                (
                    "RateLimit-Policy",
                    r#""caf??";q=4294967295;w=1, "p";q=10;w=60"#.to_string()
                ),
                (
                    "RateLimit",
                    r#""caf??";r=0;t=18446744073709552, "p";r=9;t=1"#.to_string()
                ),
            ]
        );
    }

    #[test]
    fn older_styles_speak_for_the_tightest_limit_and_a_refusal_waits_for_all() {
        let limits = [
            Limited {
                policy: "a",
                decision: decision(false, 10, 0, 2_500),
            },
            Limited {
                policy: "b",
                decision: decision(false, 10, 0, 30_000),
            },
            Limited {
                policy: "c",
                decision: decision(true, 99, 50, 1),
            },
        ];
        let fields = headers(&limits, HeaderStyle::XRateLimit);
        assert_eq!(
            fields,
            [
                ("X-RateLimit-Limit", "10".to_string()),
                ("X-RateLimit-Remaining", "0".to_string()),
                ("X-RateLimit-Reset", "30".to_string()),
                ("Retry-After", "30".to_string()),
            ]
        );
        let fields = headers(&limits[2..], HeaderStyle::Draft6);
        assert_eq!(fields[0], ("RateLimit-Limit", "99".to_string()));
        assert_eq!(fields.len(), 3, "no Retry-After when admitted");
    }

    #[test]
    fn a_refusal_no_wait_cures_has_no_retry_after_and_a_short_one_waits_a_second() {
        let mut never = decision(false, 10, 0, 500);
        never.retry_after_ms = NEVER;
        let fields = headers(
            &[Limited {
                policy: "p",
                decision: never,
            }],
            HeaderStyle::Draft10,
        );
        assert!(fields.iter().all(|(name, _)| *name != "Retry-After"));
        let soon = decision(false, 10, 0, 1);
        let fields = headers(
            &[Limited {
                policy: "p",
                decision: soon,
            }],
            HeaderStyle::Draft10,
        );
        assert_eq!(fields[2], ("Retry-After", "1".to_string()));
        assert!(headers(&[], HeaderStyle::Draft10).is_empty());
    }

    #[test]
    fn policy_names_are_printable_ascii() {
        assert!(check_policy_name("per-user 100/min").is_ok());
        for bad in ["", "é", "a\nb", &"x".repeat(65)] {
            let e = check_policy_name(bad).unwrap_err();
            assert!(e.to_string().contains("printable ASCII"), "{e}");
        }
        assert_eq!(HeaderStyle::from_name("draft-6"), Some(HeaderStyle::Draft6));
        assert_eq!(HeaderStyle::from_name("Draft-6"), None);
    }
}
