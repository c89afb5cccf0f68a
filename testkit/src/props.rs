//! The settings of the workspace's property tests: few cases by default, so
//! `make test` stays quick, `PROPTEST_CASES` for long runs by hand; no
//! regression files (a failure found becomes a plain test in its file).

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

/// `default_cases` cases, or `PROPTEST_CASES` when it is set.
pub fn proptest_config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    }
}

/// `text` with `edits` applied in turn, each `(where, op, piece)`: at the
/// character boundary `where` (modulo their count), op 0 inserts
/// `pieces[piece]` (modulo their count), 1 deletes the next character, 2
/// replaces it with the piece: the mutations the parsers' suites feed
/// their readers.
pub fn mutate(text: &str, edits: &[(usize, u8, usize)], pieces: &[&str]) -> String {
    let mut text = text.to_string();
    for &(at, op, piece) in edits {
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        let at = bounds[at % bounds.len()];
        let piece = pieces[piece % pieces.len()];
        let next = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
        match op % 3 {
            0 => text.insert_str(at, piece),
            1 => text.replace_range(at..next, ""),
            _ => text.replace_range(at..next, piece),
        }
    }
    text
}

/// JSON's white space: mostly none, else one to three of its characters.
pub fn json_space() -> impl Strategy<Value = String> {
    prop_oneof![3 => Just(String::new()), 1 => "[ \t\n\r]{1,3}"]
}

/// A JSON object as text, of up to four members whose keys `key` and
/// values `value` write, with white space wherever JSON allows it.
pub fn json_object(
    key: impl Strategy<Value = String>,
    value: impl Strategy<Value = String>,
) -> impl Strategy<Value = String> {
    let s = json_space;
    let members = prop::collection::vec(json_member(key, value), 0..5);
    (s(), members, s(), s()).prop_map(|(before, members, inside, after)| {
        format!("{before}{{{inside}{}}}{after}", members.join(","))
    })
}

/// A JSON value as text: a `leaf`, or arrays and objects (their keys
/// written by the strategies `key` makes) of up to four values nesting
/// leaves up to three deep, with white space wherever JSON allows it.
pub fn json_nesting<L, K>(leaf: L, key: fn() -> K) -> impl Strategy<Value = String>
where
    L: Strategy<Value = String> + 'static,
    K: Strategy<Value = String> + 'static,
{
    let s = json_space;
    leaf.prop_recursive(3, 12, 4, move |inner| {
        let item = (s(), inner.clone(), s()).prop_map(|(a, v, b)| format!("{a}{v}{b}"));
        let items = prop::collection::vec(item, 0..4);
        let members = prop::collection::vec(json_member(key(), inner), 0..4);
        prop_oneof![
            (items, s()).prop_map(|(items, inside)| format!("[{inside}{}]", items.join(","))),
            (members, s())
                .prop_map(|(members, inside)| format!("{{{inside}{}}}", members.join(","))),
        ]
    })
}

/// One member of a JSON object, `key: value`, with white space around both.
fn json_member(
    key: impl Strategy<Value = String>,
    value: impl Strategy<Value = String>,
) -> impl Strategy<Value = String> {
    let s = json_space;
    (s(), key, s(), s(), value, s()).prop_map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"))
}

/// Pieces that break JSON in interesting ways, for [`mutate`]: quotes,
/// escapes (lone surrogates among them), structure, number parts, control
/// and Unicode spaces, literals cut short, comments, `NaN`.
pub const JSON_PIECES: &[&str] = &[
    "\"",
    "\\",
    "\\u",
    "\\ud800",
    "\\udc00",
    "\\uD83D\\uDE00",
    "\\x",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "e",
    "E",
    "+",
    "-",
    ".",
    "0",
    "1",
    "9",
    " ",
    "\t",
    "\u{0}",
    "\u{1f}",
    "\u{7f}",
    "\u{a0}",
    "\u{feff}",
    "\u{2028}",
    "\u{b}",
    "\u{c}",
    "null",
    "tru",
    "nul",
    "1e400",
    "é",
    "\u{1F600}",
    "//",
    "/*",
    "NaN",
];
