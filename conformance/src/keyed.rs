//! The keyed scenarios of `conformance/keyed/` (README.md, "Keyed
//! scenarios"): the driver reads each file, asks the runner's surface for a
//! table of the file's rule and capacity, and walks the steps. A runner
//! only says how its surface builds a table and makes each call; the
//! driver owns the format and every check.

use std::path::{Path, PathBuf};

use sds_core::keyed::KeyDecision;
use serde_json::{json, Value};

use crate::{assert_none_failed, json_files, subset, window_int};

/// Which count call a step makes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CountCall {
    /// Counts this many units whatever the limit.
    Increment(u32),
    /// Takes up to this many units off a live window's count.
    Decrement(u32),
    /// Reads.
    Read,
}

/// What a runner's key table does for the driver. Keys are bytes; answers
/// are JSON in the scenario format ([`answer_json`], [`counts_json`],
/// [`key_stats_json`]); errors are code names (`SDS_INVALID_ARGUMENT`,
/// `SDS_TABLE_FULL`, ...).
pub trait KeySurface {
    fn decide(&self, key: &[u8], at: u64, cost: u32) -> Result<Value, String>;
    fn peek(&self, key: &[u8], at: u64) -> Result<Value, String>;
    /// Whether the key held any units.
    fn release(&self, key: &[u8], units: u32) -> Result<bool, String>;
    /// Whether the key was held.
    fn reset(&self, key: &[u8]) -> Result<bool, String>;
    /// How many keys the table held.
    fn reset_all(&self) -> Result<u64, String>;
    fn count(&self, key: &[u8], at: u64, call: CountCall) -> Result<Value, String>;
    fn stats(&self) -> Result<Value, String>;
}

/// A rule's failure as a surface reports it: the code name and the whole
/// message.
pub type RuleFailure = (String, String);

/// What a run of the keyed scenarios checked.
#[derive(Debug, Default)]
pub struct KeyedRun {
    pub files: usize,
    pub steps: usize,
}

/// Every keyed scenario file, sorted.
pub fn keyed_files() -> Vec<PathBuf> {
    json_files("keyed")
}

/// A decision in the scenario format, from `admitted` and `[limit,
/// remaining, reset_ms, retry_after_ms, window_ms]` (a `retry_after_ms` of
/// `u64::MAX` is "never").
pub fn answer_json(admitted: bool, numbers: [u64; 5]) -> Value {
    let [limit, remaining, reset, retry, window] = numbers;
    let retry = match retry {
        u64::MAX => json!("never"),
        ms => json!(ms),
    };
    json!({
        "admitted": admitted, "limit": limit, "remaining": remaining,
        "resetMs": reset, "retryAfterMs": retry, "windowMs": window,
    })
}

/// A core decision in the scenario format (what every Rust runner, the C
/// ABI's included, gets back).
pub fn decision_json(d: KeyDecision) -> Value {
    let [limit, remaining] = [d.limit, d.remaining].map(u64::from);
    answer_json(
        d.admitted,
        [limit, remaining, d.reset_ms, d.retry_after_ms, d.window_ms],
    )
}

/// A window rule's counts in the scenario format, from `[count, previous,
/// reset_ms]`.
pub fn counts_json([count, previous, reset]: [u64; 3]) -> Value {
    json!({ "count": count, "previous": previous, "resetMs": reset })
}

/// A key table's counters in the scenario format, from `[capacity,
/// resident, evictions, lossy_evictions]`.
pub fn key_stats_json([capacity, resident, evictions, lossy]: [u64; 4]) -> Value {
    json!({
        "capacity": capacity, "resident": resident,
        "evictions": evictions, "lossyEvictions": lossy,
    })
}

/// The step's key: `key` (its UTF-8 bytes) or `keyHex`.
fn key_of(step: &Value) -> Result<Vec<u8>, String> {
    match (&step["key"], &step["keyHex"]) {
        (Value::String(text), Value::Null) => Ok(text.as_bytes().to_vec()),
        (Value::Null, Value::String(hex)) => from_hex(hex),
        _ => Err("a step names its key by exactly one of key, keyHex".into()),
    }
}

fn from_hex(hex: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("keyHex {hex:?} is not pairs of hex digits");
    if hex.len() % 2 != 0 {
        return Err(bad());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
        .collect()
}

/// The integer `name` of `step` (`default` when absent), a cost or units.
fn units(step: &Value, name: &str, default: u32) -> Result<u32, String> {
    match &step[name] {
        Value::Null => Ok(default),
        v => u32::try_from(window_int(v, name)?).map_err(|_| format!("{name}: above 2^32 - 1")),
    }
}

/// Compares a call's result with the step's `error`, or its value with
/// `expect` (a subset of the fields for objects, the whole value else).
fn check(step: &Value, got: Result<Value, String>) -> Result<(), String> {
    match (got, step["error"].as_str()) {
        (Err(code), Some(want)) if code == want => Ok(()),
        (Err(code), Some(want)) => Err(format!("expected error {want}, got error {code}")),
        (Err(code), None) => Err(format!("expected no error, got error {code}")),
        (Ok(value), Some(want)) => Err(format!("expected error {want}, got {value}")),
        (Ok(value), None) => match &step["expect"] {
            Value::Null => Err("a step checks something: expect or error".into()),
            want @ Value::Object(_) => subset(want, &value, "answer"),
            want if *want == value => Ok(()),
            want => Err(format!("expected {want}, got {value}")),
        },
    }
}

/// A decide step: `repeat` calls at one `at`; `tally` counts the admitted
/// and refused ones, `expect` checks the last.
fn decide<S: KeySurface>(surface: &S, step: &Value, key: &[u8], at: u64) -> Result<(), String> {
    let cost = units(step, "cost", 1)?;
    let repeat = units(step, "repeat", 1)?;
    if repeat > 1 && step["tally"].is_null() {
        return Err("a repeated decide has a tally".into());
    }
    let (mut admitted, mut refused) = (0u32, 0u32);
    let mut last = Err(String::new());
    for _ in 0..repeat {
        last = surface.decide(key, at, cost);
        match &last {
            Ok(a) if a["admitted"] == true => admitted += 1,
            Ok(_) => refused += 1,
            Err(_) => break,
        }
    }
    if !step["tally"].is_null() && last.is_ok() {
        let tally = json!({ "admitted": admitted, "refused": refused });
        if tally != step["tally"] {
            return Err(format!("tally: expected {}, got {tally}", step["tally"]));
        }
    }
    check(step, last)
}

/// The members a step may have: any other is a typo the driver refuses.
const STEP_MEMBERS: [&str; 12] = [
    "op", "key", "keyHex", "at", "cost", "units", "repeat", "tally", "expect", "error", "rule",
    "message",
];

fn run_step<S: KeySurface>(
    surface: &S,
    step: &Value,
    rule_table: &dyn Fn(&Value) -> Result<(), RuleFailure>,
) -> Result<(), String> {
    let members = step.as_object().ok_or("a step is an object")?;
    if let Some(odd) = members.keys().find(|k| !STEP_MEMBERS.contains(&k.as_str())) {
        return Err(format!("unknown step member {odd:?}"));
    }
    let op = step["op"].as_str().unwrap_or("");
    let at = || window_int(&step["at"], "at");
    let key = || key_of(step);
    let counts = |call| check(step, surface.count(&key()?, at()?, call));
    match op {
        "decide" => decide(surface, step, &key()?, at()?),
        "peek" => check(step, surface.peek(&key()?, at()?)),
        "release" => {
            let got = surface.release(&key()?, units(step, "units", 1)?);
            check(step, got.map(Value::from))
        }
        "reset" => check(step, surface.reset(&key()?).map(Value::from)),
        "reset_all" => check(step, surface.reset_all().map(Value::from)),
        "increment" => counts(CountCall::Increment(units(step, "units", 1)?)),
        "decrement" => counts(CountCall::Decrement(units(step, "units", 1)?)),
        "count" => counts(CountCall::Read),
        "stats" => check(step, surface.stats()),
        "rule" => {
            let got = rule_table(&step["rule"]);
            let want = match (step["error"].as_str(), step["message"].as_str()) {
                (Some(code), Some(message)) => Err((code.to_string(), message.to_string())),
                (None, None) => Ok(()),
                _ => return Err("a failing rule step has both error and message".into()),
            };
            match got == want {
                true => Ok(()),
                false => Err(format!("expected {want:?}, got {got:?}")),
            }
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

/// Runs one keyed scenario on a table from `fresh(rule, capacity)`; how
/// many steps it checked.
pub fn run_keyed<S: KeySurface>(
    file: &Path,
    fresh: &impl Fn(&Value, usize) -> Result<S, RuleFailure>,
) -> Result<usize, String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let scenario: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let capacity = window_int(&scenario["capacity"], "capacity")? as usize;
    let surface =
        fresh(&scenario["rule"], capacity).map_err(|e| format!("the file's rule: {e:?}"))?;
    let rule_table = |rule: &Value| fresh(rule, capacity).map(drop);
    let steps = scenario["steps"].as_array().ok_or("no steps")?;
    for (i, step) in steps.iter().enumerate() {
        run_step(&surface, step, &rule_table).map_err(|e| format!("step {i} ({step}): {e}"))?;
    }
    Ok(steps.len())
}

/// Runs every keyed scenario, each on a table from `fresh(rule, capacity)`
/// (`rule` the file's object as it is: `kind`, the builder's entries and
/// `exceptions` as `[key, limit]` pairs; `Err` the code name and message of
/// a refused rule); panics listing the failures.
pub fn run_keyed_all<S: KeySurface>(
    fresh: impl Fn(&Value, usize) -> Result<S, RuleFailure>,
) -> KeyedRun {
    let files = keyed_files();
    assert!(files.len() >= 20, "keyed scenarios are missing");
    let mut run = KeyedRun::default();
    let mut failures = Vec::new();
    for file in &files {
        match run_keyed(file, &fresh) {
            Ok(steps) => run.steps += steps,
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    assert_none_failed(&failures, files.len(), "keyed scenarios");
    run.files = files.len();
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_utf8_bytes_or_hex() {
        assert_eq!(from_hex("00ffC3a9").unwrap(), [0, 0xff, 0xc3, 0xa9]);
        assert!(from_hex("abc").is_err() && from_hex("zz").is_err() && from_hex("éé").is_err());
        assert_eq!(key_of(&json!({ "key": "é" })).unwrap(), [0xc3, 0xa9]);
        assert_eq!(key_of(&json!({ "keyHex": "" })).unwrap(), [0u8; 0]);
        assert!(key_of(&json!({ "key": "a", "keyHex": "61" })).is_err());
        assert!(key_of(&json!({})).is_err());
    }

    #[test]
    fn a_step_fails_on_any_difference() {
        let got = || Ok(answer_json(false, [1, 0, 0, u64::MAX, 0]));
        assert_eq!(
            check(&json!({ "expect": { "retryAfterMs": "never" } }), got()),
            Ok(())
        );
        assert!(check(&json!({ "expect": { "retryAfterMs": 0 } }), got()).is_err());
        assert!(check(&json!({ "expect": { "remainder": 0 } }), got()).is_err());
        assert!(check(&json!({ "error": "SDS_TABLE_FULL" }), got()).is_err());
        assert!(check(&json!({}), got()).is_err());
        let full = || Err("SDS_TABLE_FULL".to_string());
        assert_eq!(check(&json!({ "error": "SDS_TABLE_FULL" }), full()), Ok(()));
        assert!(check(&json!({ "error": "SDS_INVALID_ARGUMENT" }), full()).is_err());
        assert!(check(&json!({ "expect": true }), full()).is_err());
        assert!(check(&json!({ "expect": true }), Ok(json!(false))).is_err());
    }
}
