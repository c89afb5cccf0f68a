//! Runs every keyed scenario of `conformance/keyed` through `KeyTable`, its
//! rule fed to `KeyRuleBuilder` from the file's JSON object as a binding
//! feeds it from its own values.

use sds_conformance as driver;

use driver::{CountCall, KeySurface, RuleFailure};
use sds_core::keyed::{
    KeyBucket, KeyDecision, KeyError, KeyRule, KeyRuleBuilder, KeyRuleError, KeyTable, KindInput,
    BUCKET_CELLS,
};
use sds_core::Value;
use serde_json::Value as Json;

struct Keys(KeyTable<Vec<KeyBucket>>);

/// A JSON value as the core's rule input (as the C ABI reads its JSON).
fn input(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::String(_) => Value::Text,
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::from(i),
            (None, Some(u), _) => Value::from(u),
            (None, None, Some(f)) => Value::from_f64(f),
            (None, None, None) => Value::OutOfRange,
        },
        Json::Bool(flag) => Value::Bool(*flag),
        Json::Array(_) | Json::Object(_) => Value::NotAnInteger,
    }
}

fn failure(e: KeyRuleError) -> RuleFailure {
    (e.code().as_str().to_string(), e.to_string())
}

/// The rule of a scenario's object: `kind`, the builder's entries, and
/// `exceptions` as `[key, limit]` pairs (null: none).
fn rule(object: &Json) -> Result<KeyRule, RuleFailure> {
    let members = object.as_object().expect("a rule is an object");
    let kind = match members.get("kind") {
        None | Some(Json::Null) => KindInput::Absent,
        Some(Json::String(name)) => KindInput::Text(name),
        Some(_) => KindInput::Other,
    };
    let mut builder = KeyRuleBuilder::for_kind(kind).map_err(failure)?;
    for (name, value) in members {
        match name.as_str() {
            "kind" => {}
            "exceptions" => except(&mut builder, value).map_err(failure)?,
            _ => builder.set(name, input(value)).map_err(failure)?,
        }
    }
    builder.build().map_err(failure)
}

/// The exceptions of `value`, a list of `[key, limit]` pairs (null: none).
fn except(builder: &mut KeyRuleBuilder, value: &Json) -> Result<(), KeyRuleError> {
    let pairs = match value {
        Json::Null => return Ok(()),
        Json::Array(pairs) => pairs,
        _ => return Err(KeyRuleBuilder::not_pairs()),
    };
    for pair in pairs {
        match pair.as_array().map(Vec::as_slice) {
            Some([Json::String(key), limit]) => builder.except(key.as_bytes(), input(limit))?,
            _ => return Err(KeyRuleBuilder::not_pairs()),
        }
    }
    Ok(())
}

fn code(e: KeyError) -> String {
    e.code().as_str().to_string()
}

fn answer(d: KeyDecision) -> Json {
    let [limit, remaining] = [d.limit, d.remaining].map(u64::from);
    driver::answer_json(
        d.admitted,
        [limit, remaining, d.reset_ms, d.retry_after_ms, d.window_ms],
    )
}

impl KeySurface for Keys {
    fn decide(&self, key: &[u8], at: u64, cost: u32) -> Result<Json, String> {
        self.0.decide(key, at, cost).map(answer).map_err(code)
    }

    fn peek(&self, key: &[u8], at: u64) -> Result<Json, String> {
        Ok(answer(self.0.peek(key, at)))
    }

    fn release(&self, key: &[u8], units: u32) -> Result<bool, String> {
        self.0.release(key, units).map_err(code)
    }

    fn reset(&self, key: &[u8]) -> Result<bool, String> {
        Ok(self.0.reset(key))
    }

    fn reset_all(&self) -> Result<u64, String> {
        Ok(self.0.reset_all())
    }

    fn count(&self, key: &[u8], at: u64, call: CountCall) -> Result<Json, String> {
        let counted = match call {
            CountCall::Increment(n) => self.0.increment(key, at, n),
            CountCall::Decrement(n) => self.0.decrement(key, at, n),
            CountCall::Read => self.0.count(key, at),
        };
        let c = counted.map_err(code)?;
        Ok(driver::counts_json([c.count, c.previous, c.reset_ms]))
    }

    fn stats(&self) -> Result<Json, String> {
        let s = self.0.stats();
        let counters = [s.capacity, s.resident, s.evictions, s.lossy_evictions];
        Ok(driver::key_stats_json(counters))
    }
}

#[test]
fn every_keyed_scenario_passes() {
    let run = driver::run_keyed_all(|object, capacity| {
        let buckets = (0..capacity.div_ceil(BUCKET_CELLS))
            .map(|_| KeyBucket::new())
            .collect();
        let table = KeyTable::new(buckets, rule(object)?).expect("a valid capacity");
        Ok(Keys(table))
    });
    assert!(run.steps >= 300, "only {} keyed steps ran", run.steps);
    println!("{} keyed scenarios, {} steps passed", run.files, run.steps);
}
