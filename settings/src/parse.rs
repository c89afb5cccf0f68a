//! (key, value) pairs checked against a service's table of settings.

use std::path::PathBuf;

use crate::{camel_case, Kind, Setting, Value};

message_error!(
    /// Why a set of pairs was refused: one message, the same in every
    /// language. The service puts it into its own error (the agent's
    /// `StartError`, the cluster's `InvalidConfig`).
    SettingsError
);

/// A setting's value once checked.
#[derive(Clone, Debug, PartialEq)]
enum Checked {
    Text(String),
    Millis(u64),
    Bool(bool),
    List(Vec<String>),
}

/// Pairs checked against a table: every key named a setting once, every
/// value had the setting's type. The getters give each setting's value or
/// the service's default.
#[derive(Clone, Debug)]
pub struct Parsed {
    table: &'static [Setting],
    /// Per setting of `table`, in its order: the value given (`None`:
    /// absent or null).
    values: Vec<Option<Checked>>,
}

/// The longest text quoted back in a message, in characters.
const QUOTED_CHARS: usize = 40;

impl Parsed {
    /// Checks `pairs` against `table`; the first problem is the error, in an
    /// order that does not depend on the pairs' order: a key no setting
    /// has, then a setting given twice (both in the pairs' order), then the
    /// values, in the table's order. A language may not keep its caller's
    /// order (Python hands its positional arguments first, a JavaScript
    /// object its integer-like keys first), and an input with two problems
    /// must get one message everywhere.
    pub fn new(
        table: &'static [Setting],
        pairs: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<Parsed, SettingsError> {
        let pairs: Vec<(String, Value)> = pairs.into_iter().collect();
        let mut found = Vec::with_capacity(pairs.len());
        for (key, _) in &pairs {
            found.push(find(table, key)?);
        }
        let mut given: Vec<Option<(String, bool, Value)>> = vec![None; table.len()];
        for ((key, value), (index, in_seconds)) in pairs.into_iter().zip(found) {
            // Null gives nothing (the default), so it never clashes: a
            // JavaScript spread that unsets one spelling and sets another
            // is fine.
            if value == Value::Null {
                continue;
            }
            if let Some((first, _, _)) = &given[index] {
                // Two spellings are named in byte order, not the order
                // given, which a language may not keep (Python's
                // `app_name` is positional, so it comes before `appName`).
                let (a, b) = if *first <= key {
                    (first.as_str(), key.as_str())
                } else {
                    (key.as_str(), first.as_str())
                };
                return Err(SettingsError(if a == b {
                    format!("\"{key}\" is given twice")
                } else {
                    format!("\"{a}\" and \"{b}\" are one setting: give it once")
                }));
            }
            given[index] = Some((key, in_seconds, value));
        }
        let mut values = Vec::with_capacity(table.len());
        for (setting, given) in table.iter().zip(given) {
            values.push(match given {
                Some((key, in_seconds, value)) => check(setting.kind, in_seconds, &key, value)?,
                None => None,
            });
        }
        Ok(Parsed { table, values })
    }

    fn value(&self, name: &str) -> Option<&Checked> {
        let index = self
            .table
            .iter()
            .position(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} is not a setting of this table"));
        self.values[index].as_ref()
    }

    /// A [`Kind::Text`] setting; the empty text when absent.
    pub fn text(&self, name: &str) -> String {
        self.optional_text(name).unwrap_or_default()
    }

    /// A [`Kind::OptionalText`] (or [`Kind::Text`]) setting.
    pub fn optional_text(&self, name: &str) -> Option<String> {
        match self.value(name) {
            Some(Checked::Text(text)) => Some(text.clone()),
            _ => None,
        }
    }

    /// A [`Kind::Path`] setting.
    pub fn path(&self, name: &str) -> Option<PathBuf> {
        self.optional_text(name).map(PathBuf::from)
    }

    /// The TLS files both services take, each a [`Kind::Path`] setting:
    /// `tls_ca_file` (the CA that verifies the servers), `tls_cert_file`
    /// and `tls_key_file` (the client's, for mutual TLS), in that order.
    pub fn tls_files(&self) -> [Option<PathBuf>; 3] {
        crate::TLS_FILES.map(|setting| self.path(setting.name))
    }

    /// A [`Kind::Millis`] setting, `default` when absent.
    pub fn millis(&self, name: &str, default: u64) -> u64 {
        match self.value(name) {
            Some(Checked::Millis(ms)) => *ms,
            _ => default,
        }
    }

    /// A [`Kind::Bool`] setting, `default` when absent.
    pub fn flag(&self, name: &str, default: bool) -> bool {
        match self.value(name) {
            Some(Checked::Bool(b)) => *b,
            _ => default,
        }
    }

    /// A [`Kind::TextList`] setting; empty when absent.
    pub fn list(&self, name: &str) -> Vec<String> {
        match self.value(name) {
            Some(Checked::List(items)) => items.clone(),
            _ => Vec::new(),
        }
    }
}

/// The setting `key` names, and whether it names its seconds spelling.
fn find(table: &[Setting], key: &str) -> Result<(usize, bool), SettingsError> {
    for (index, setting) in table.iter().enumerate() {
        if key == setting.name || key == camel_case(setting.name) {
            return Ok((index, false));
        }
        if let Some(seconds) = setting.seconds {
            if key == seconds || key == camel_case(seconds) {
                return Ok((index, true));
            }
        }
    }
    let names: Vec<&str> = table.iter().map(|s| s.name).collect();
    Err(SettingsError(format!(
        "unknown setting \"{}\"; the settings are: {} (or their camelCase spellings)",
        quoted_part(key),
        names.join(", ")
    )))
}

fn check(
    kind: Kind,
    in_seconds: bool,
    key: &str,
    value: Value,
) -> Result<Option<Checked>, SettingsError> {
    if value == Value::Null {
        return Ok(None);
    }
    let refused = |expected: &str, value: &Value| {
        SettingsError(format!("{key} must be {expected}, not {}", describe(value)))
    };
    Ok(Some(match (kind, value) {
        (Kind::Text | Kind::OptionalText | Kind::Path, Value::Text(text)) => Checked::Text(text),
        (Kind::Text, v) => return Err(refused("text", &v)),
        (Kind::OptionalText, v) => return Err(refused("text or null", &v)),
        (Kind::Path, v) => return Err(refused("a path (text) or null", &v)),
        (Kind::Bool, Value::Bool(b)) => Checked::Bool(b),
        (Kind::Bool, v) => return Err(refused("true or false", &v)),
        (Kind::Millis, v) if in_seconds => Checked::Millis(
            seconds_as_millis(&v)
                .ok_or_else(|| refused("a finite number of seconds, at least 0", &v))?,
        ),
        (Kind::Millis, v) => Checked::Millis(whole_millis(&v).ok_or_else(|| {
            refused(
                "a whole number of milliseconds from 0 to 18446744073709551615",
                &v,
            )
        })?),
        (Kind::TextList, Value::Text(text)) => Checked::List(vec![text]),
        (Kind::TextList, Value::List(items)) => {
            let mut texts = Vec::with_capacity(items.len());
            for (at, item) in items.into_iter().enumerate() {
                match item {
                    Value::Text(text) => texts.push(text),
                    other => {
                        return Err(SettingsError(format!(
                            "{key}[{at}] must be text, not {}",
                            describe(&other)
                        )))
                    }
                }
            }
            Checked::List(texts)
        }
        (Kind::TextList, v) => return Err(refused("text or a list of text", &v)),
    }))
}

/// An integer (or an integral float, as JavaScript has only those) from 0
/// to `u64::MAX`.
fn whole_millis(value: &Value) -> Option<u64> {
    match *value {
        Value::Int(n) => u64::try_from(n).ok(),
        // Below 2^64 exactly: `as` would saturate a larger one silently.
        Value::Float(x) if x.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&x) => {
            Some(x as u64)
        }
        _ => None,
    }
}

/// Seconds (any finite number at least 0) as milliseconds, rounded; one
/// beyond `u64::MAX` ms is that (the services saturate their schedules).
fn seconds_as_millis(value: &Value) -> Option<u64> {
    match *value {
        Value::Int(n) if n >= 0 => Some(u64::try_from(n.saturating_mul(1000)).unwrap_or(u64::MAX)),
        // `as` saturates: a huge number of seconds is "never".
        Value::Float(x) if x.is_finite() && x >= 0.0 => Some((x * 1000.0).round() as u64),
        _ => None,
    }
}

/// A value as a message quotes it, in words no language owns.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(x) => format!("{x:?}"),
        Value::Text(text) => format!("the text \"{}\"", quoted_part(text)),
        Value::List(_) => "a list".to_string(),
        Value::Other(type_name) => format!("a value of type {type_name}"),
    }
}

/// `text` as a message quotes it: control characters escaped, at most
/// [`QUOTED_CHARS`] characters, then `…`.
fn quoted_part(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(QUOTED_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().nth(QUOTED_CHARS).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Setting] = &[
        Setting::new("servers", Kind::Text),
        Setting::new("ip", Kind::OptionalText),
        Setting::new("tls_ca_file", Kind::Path),
        Setting::millis("timeout_ms", "timeout"),
        Setting::new("redis_cluster", Kind::Bool),
        Setting::new("points", Kind::TextList),
    ];

    fn parse(pairs: &[(&str, Value)]) -> Result<Parsed, String> {
        Parsed::new(TABLE, pairs.iter().map(|(k, v)| (k.to_string(), v.clone()))).map_err(|e| e.0)
    }

    fn text(s: &str) -> Value {
        Value::text(s)
    }

    #[test]
    fn tls_files_follow_a_services_settings_and_read_in_their_order() {
        const TLS: &[Setting] = &crate::with_tls_files::<4>(&[Setting::new("ip", Kind::Text)]);
        let names: Vec<&str> = TLS.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["ip", "tls_ca_file", "tls_cert_file", "tls_key_file"]
        );
        let pairs = [("tlsKeyFile", "/k.pem"), ("tls_ca_file", "/ca.pem")];
        let parsed = Parsed::new(TLS, pairs.map(|(k, v)| (k.to_string(), text(v)))).unwrap();
        let [ca, cert, key] = parsed.tls_files();
        assert_eq!(
            (ca, cert, key),
            (Some("/ca.pem".into()), None, Some("/k.pem".into()))
        );
    }

    #[test]
    fn absent_and_null_settings_take_the_defaults() {
        let parsed = parse(&[("ip", Value::Null)]).unwrap();
        assert_eq!(parsed.text("servers"), "");
        assert_eq!(parsed.optional_text("ip"), None);
        assert_eq!(parsed.path("tls_ca_file"), None);
        assert_eq!(parsed.millis("timeout_ms", 1000), 1000);
        assert!(parsed.flag("redis_cluster", true));
        assert!(parsed.list("points").is_empty());
    }

    #[test]
    fn snake_camel_and_seconds_spellings_name_one_setting() {
        let parsed = parse(&[
            ("tlsCaFile", text("/ca.pem")),
            ("timeout", Value::Float(0.25)),
            ("redisCluster", Value::Bool(true)),
            ("points", text("a")),
        ])
        .unwrap();
        assert_eq!(parsed.path("tls_ca_file"), Some(PathBuf::from("/ca.pem")));
        assert_eq!(parsed.millis("timeout_ms", 1), 250);
        assert!(parsed.flag("redis_cluster", false));
        assert_eq!(parsed.list("points"), ["a"]);
        assert_eq!(
            parse(&[("timeoutMs", Value::Float(300.0))])
                .unwrap()
                .millis("timeout_ms", 1),
            300
        );
    }

    #[test]
    fn seconds_round_to_the_millisecond_and_saturate() {
        let ms = |v: Value| parse(&[("timeout", v)]).unwrap().millis("timeout_ms", 7);
        assert_eq!(ms(Value::Float(0.0004)), 0);
        assert_eq!(ms(Value::Float(0.0005)), 1);
        assert_eq!(ms(Value::Int(3)), 3000);
        assert_eq!(ms(Value::Float(1e300)), u64::MAX);
        assert_eq!(ms(Value::Int(i128::MAX)), u64::MAX);
    }

    #[test]
    fn each_wrong_value_has_one_message() {
        let cases: &[(&str, Value, &str)] = &[
            ("servers", Value::Int(5), "servers must be text, not 5"),
            ("ip", Value::Bool(true), "ip must be text or null, not true"),
            ("tls_ca_file", Value::List(vec![]), "tls_ca_file must be a path (text) or null, not a list"),
            ("timeout_ms", Value::Int(-1), "timeout_ms must be a whole number of milliseconds from 0 to 18446744073709551615, not -1"),
            ("timeout_ms", Value::Float(1.5), "timeout_ms must be a whole number of milliseconds from 0 to 18446744073709551615, not 1.5"),
            ("timeoutMs", Value::Float(1.8446744073709552e19), "timeoutMs must be a whole number of milliseconds from 0 to 18446744073709551615, not 1.8446744073709552e19"),
            ("timeout_ms", Value::Int(1 << 64), "timeout_ms must be a whole number of milliseconds from 0 to 18446744073709551615, not 18446744073709551616"),
            ("timeout", Value::Float(f64::NAN), "timeout must be a finite number of seconds, at least 0, not NaN"),
            ("timeout", Value::Float(f64::INFINITY), "timeout must be a finite number of seconds, at least 0, not inf"),
            ("timeout", Value::Int(-1), "timeout must be a finite number of seconds, at least 0, not -1"),
            ("timeout", text("1"), "timeout must be a finite number of seconds, at least 0, not the text \"1\""),
            ("redis_cluster", Value::Int(1), "redis_cluster must be true or false, not 1"),
            ("points", Value::Other("dict".into()), "points must be text or a list of text, not a value of type dict"),
            ("points", Value::List(vec![text("a"), Value::Null]), "points[1] must be text, not null"),
        ];
        for (key, value, message) in cases {
            assert_eq!(
                parse(&[(key, value.clone())]).unwrap_err(),
                *message,
                "{key} = {value:?}"
            );
        }
    }

    #[test]
    fn unknown_and_repeated_keys_are_refused() {
        assert_eq!(
            parse(&[("url", text("x"))]).unwrap_err(),
            "unknown setting \"url\"; the settings are: servers, ip, tls_ca_file, timeout_ms, \
             redis_cluster, points (or their camelCase spellings)"
        );
        for pairs in [
            [("timeout", Value::Int(1)), ("timeout_ms", Value::Int(5))],
            [("timeout_ms", Value::Int(5)), ("timeout", Value::Int(1))],
        ] {
            assert_eq!(
                parse(&pairs).unwrap_err(),
                "\"timeout\" and \"timeout_ms\" are one setting: give it once"
            );
        }
        assert_eq!(
            parse(&[("ip", text("1.2.3.5")), ("ip", text("1.2.3.4"))]).unwrap_err(),
            "\"ip\" is given twice"
        );
        let parsed = parse(&[
            ("timeout_ms", Value::Null),
            ("timeout", Value::Int(2)),
            ("timeoutMs", Value::Null),
        ]);
        assert_eq!(parsed.unwrap().millis("timeout_ms", 1), 2000);
    }

    #[test]
    fn the_verdict_does_not_depend_on_the_order_of_the_pairs() {
        // Every order of the same pairs: an unknown key first, then a
        // repeat, then the first bad value in the table's order.
        let bad = [
            ("timeout_ms", Value::Int(-1)),
            ("points", Value::Int(3)),
            ("servers", Value::Int(5)),
            ("ip", Value::Bool(true)),
        ];
        let extra = [
            (None, "servers must be text, not 5"),
            (Some(("url", text("x"))), "unknown setting \"url\"; the settings are: servers, ip, tls_ca_file, timeout_ms, redis_cluster, points (or their camelCase spellings)"),
            (Some(("ip", text("1.2.3.4"))), "\"ip\" is given twice"),
        ];
        for (added, message) in extra {
            let mut pairs: Vec<(&str, Value)> = bad.to_vec();
            pairs.extend(added);
            for rotation in 0..pairs.len() {
                pairs.rotate_left(1);
                let mut reversed = pairs.clone();
                reversed.reverse();
                for order in [&pairs, &reversed] {
                    let got = parse(order).unwrap_err();
                    assert_eq!(got, message, "{order:?} ({rotation})");
                }
            }
        }
    }

    #[test]
    fn a_long_or_odd_text_is_quoted_short_and_escaped() {
        let long = format!("a\n{}", "x".repeat(100));
        let message = parse(&[(long.as_str(), Value::Null)]).unwrap_err();
        assert!(
            message.starts_with(&format!("unknown setting \"a\\n{}…\";", "x".repeat(38))),
            "{message}"
        );
        let message = parse(&[("timeout", text(&long))]).unwrap_err();
        assert!(
            message.ends_with(&format!("not the text \"a\\n{}…\"", "x".repeat(38))),
            "{message}"
        );
    }
}
