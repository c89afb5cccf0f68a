//! A pulled strategy set applied to the table: each point's strategy
//! replaced on its own (one atomic store in the core), the points missing
//! from the set cleared, and a strategy the core refuses left out with its
//! reason while the point keeps its old strategy and return value.

use std::collections::{HashMap, HashSet};

use sds_core::{ErrorCode, Field, Points, Strategy, StrategyBuilder, Value, POINT_KEY};

/// The key of a point's fallback text in a console strategy.
pub const RETURN_VALUE_KEY: &str = "returnValueStr";

/// What applying a set did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Strategies in force from this set.
    pub set: usize,
    /// Points whose strategy was removed (missing from the set).
    pub removed: usize,
    /// Why each refused entry was refused.
    pub refused: Vec<String>,
    /// A refusal that may pass on a later try (the table was full): the
    /// version must not be taken, so the next pull brings the set again.
    pub retry: bool,
    /// The return values now in force, by point.
    pub return_values: HashMap<String, String>,
}

/// One entry of the set, read.
struct Entry {
    name: String,
    strategy: Strategy,
    return_value: Option<String>,
}

/// Reads one `SdsStrategy` object. Values go through the core's
/// [`StrategyBuilder`] (so JSON from the console follows the same rules as
/// every other input); keys that are neither a strategy field, `point` nor
/// `returnValueStr` are skipped, as the reference's lenient reader does.
/// `Err` carries the point's name when it has one.
fn read_entry(value: &serde_json::Value) -> Result<Entry, (Option<String>, String)> {
    let object = value
        .as_object()
        .ok_or((None, "a strategy that is not a JSON object".to_string()))?;
    let name = match object.get(POINT_KEY) {
        Some(serde_json::Value::String(name)) if !name.is_empty() => name.clone(),
        _ => return Err((None, "a strategy without a \"point\" name".into())),
    };
    let fail = |message: String| (Some(name.clone()), message);
    let return_value = match object.get(RETURN_VALUE_KEY) {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(text)) => Some(text.clone()),
        Some(_) => return Err(fail(format!("\"{RETURN_VALUE_KEY}\" must be a string"))),
    };
    let mut builder = StrategyBuilder::new();
    for (key, value) in object {
        if key == RETURN_VALUE_KEY || (key != POINT_KEY && Field::from_json_name(key).is_none()) {
            continue;
        }
        builder
            .set(key, json_value(value))
            .map_err(|e| fail(e.to_string()))?;
    }
    let strategy = builder.build().map_err(|e| fail(e.to_string()))?;
    Ok(Entry {
        name,
        strategy,
        return_value,
    })
}

/// A JSON value as the core's input rules see it.
fn json_value(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::String(_) => Value::Text,
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(v), _) => Value::from(v),
            (_, Some(v)) => Value::from(v),
            _ => n.as_f64().map_or(Value::OutOfRange, Value::from_f64),
        },
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => Value::NotAnInteger,
    }
}

/// Applies the whole set `entries` to `table`. `old_return_values` are the
/// return values in force before, kept for refused points.
pub fn apply(
    table: &dyn Points,
    entries: &[serde_json::Value],
    old_return_values: &HashMap<String, String>,
) -> Applied {
    let mut applied = Applied::default();
    // Every point the set names, refused or not: none of them is cleared.
    let mut named: HashSet<Vec<u8>> = HashSet::new();
    for value in entries {
        match read_entry(value) {
            Ok(entry) => {
                named.insert(entry.name.as_bytes().to_vec());
                match table.set_strategy(entry.name.as_bytes(), &entry.strategy) {
                    Ok(_) => {
                        applied.set += 1;
                        if let Some(text) = entry.return_value {
                            applied.return_values.insert(entry.name, text);
                        } else {
                            applied.return_values.remove(&entry.name);
                        }
                    }
                    Err(e) => {
                        applied.retry |= e.code() == ErrorCode::TableFull;
                        keep_old(&mut applied, old_return_values, &entry.name);
                        applied
                            .refused
                            .push(format!("point \"{}\": {e}", entry.name));
                    }
                }
            }
            Err((name, reason)) => {
                if let Some(name) = name {
                    named.insert(name.as_bytes().to_vec());
                    keep_old(&mut applied, old_return_values, &name);
                    applied.refused.push(format!("point \"{name}\": {reason}"));
                } else {
                    applied.refused.push(reason);
                }
            }
        }
    }
    let mut missing: Vec<Vec<u8>> = Vec::new();
    table.for_each_point(&mut |_, name, point| {
        if point.strategy().is_some() && !named.contains(name) {
            missing.push(name.to_vec());
        }
    });
    for name in missing {
        if table.remove_strategy(&name).is_ok() {
            applied.removed += 1;
        }
    }
    applied
}

fn keep_old(applied: &mut Applied, old: &HashMap<String, String>, name: &str) {
    if let Some(text) = old.get(name) {
        applied.return_values.insert(name.to_string(), text.clone());
    }
}
