//! Runs every scenario of `conformance/scenarios` through `PointTable`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sds_core::{Entry, Flags, Outcome, PointTable, Slot, Stats, Strategy};
use serde_json::{Map, Value};

fn scenario_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("conformance/scenarios exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

fn strategy_from(json: &Map<String, Value>) -> Result<Strategy, &'static str> {
    let mut s = Strategy::DEFAULT;
    for (key, value) in json {
        let n = value.as_i64().ok_or("SDS_INVALID_STRATEGY")?;
        s.set_json(key, n).map_err(|e| e.as_str())?;
    }
    Ok(s)
}

fn set_strategy(
    table: &PointTable<Vec<Slot>>,
    point: &str,
    value: &Value,
) -> Result<(), &'static str> {
    match value {
        Value::Null => table
            .remove_strategy(point.as_bytes())
            .map_err(|e| e.as_str()),
        Value::Object(map) => {
            let s = strategy_from(map)?;
            table
                .set_strategy(point.as_bytes(), &s)
                .map(|_| ())
                .map_err(|e| e.as_str())
        }
        _ => panic!("strategy must be an object or null"),
    }
}

fn word(entry: &Entry) -> &'static str {
    entry.reason().map_or("pass", |r| r.as_str())
}

fn stats_json(s: &Stats) -> Value {
    serde_json::json!({
        "visit": s.visit, "exception": s.exception, "timeout": s.timeout,
        "downgrade": s.downgrade, "concurrent": s.concurrent,
        "lastCycle": {
            "visitNum": s.last_cycle.visit_num, "exceptionNum": s.last_cycle.exception_num,
            "timeoutNum": s.last_cycle.timeout_num, "downgradeNum": s.last_cycle.downgrade_num,
            "concurrentNum": s.last_cycle.concurrent_num,
        }
    })
}

/// Checks that every key of `expected` has the same value in `actual`.
fn subset(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().try_for_each(|(k, v)| {
            let got = a
                .get(k)
                .ok_or_else(|| format!("{path}.{k}: no such stat"))?;
            subset(v, got, &format!("{path}.{k}"))
        }),
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

fn run(file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let scenario: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let table = PointTable::new((0..16).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    let default_point = scenario["point"].as_str().unwrap_or("p").to_string();
    if let Some(s) = scenario.get("strategy") {
        set_strategy(&table, &default_point, s).map_err(|e| format!("initial strategy: {e}"))?;
    }
    let mut open: HashMap<String, Vec<Entry>> = HashMap::new();
    let steps = scenario["steps"].as_array().ok_or("no steps")?;
    for (i, step) in steps.iter().enumerate() {
        let fail = |msg: String| format!("step {i} ({}): {msg}", step);
        let at = step["at"].as_u64().ok_or_else(|| fail("no at".into()))?;
        let point = step["point"].as_str().unwrap_or(&default_point).to_string();
        match step["op"].as_str().unwrap_or("") {
            "enter" => {
                let repeat = step["repeat"].as_u64().unwrap_or(1);
                let flags = if step["pressure_test"].as_bool().unwrap_or(false) {
                    Flags::PRESSURE_TEST
                } else {
                    Flags::NONE
                };
                let mut tally: HashMap<String, u64> = HashMap::new();
                for _ in 0..repeat {
                    let entry = table
                        .enter(point.as_bytes(), at, flags)
                        .map_err(|e| fail(e.to_string()))?;
                    *tally.entry(word(&entry).to_string()).or_default() += 1;
                    match step["id"].as_str() {
                        Some(id) => open.entry(id.to_string()).or_default().push(entry),
                        None => table.exit(&entry, at, Outcome::Ok).unwrap(),
                    }
                }
                let got = if repeat == 1 {
                    Value::from(tally.keys().next().unwrap().clone())
                } else {
                    serde_json::to_value(&tally).unwrap()
                };
                if got != step["expect"] {
                    return Err(fail(format!("expected {}, got {got}", step["expect"])));
                }
            }
            "exit" => {
                let id = step["id"].as_str().ok_or_else(|| fail("no id".into()))?;
                let outcome = match step["outcome"].as_str().unwrap_or("ok") {
                    "error" => Outcome::Error,
                    _ => Outcome::Ok,
                };
                for entry in open
                    .remove(id)
                    .ok_or_else(|| fail(format!("no open group {id}")))?
                {
                    table.exit(&entry, at, outcome).unwrap();
                }
            }
            "set_strategy" => {
                let got = set_strategy(&table, &point, &step["strategy"]).err();
                let want = step["error"].as_str();
                if got != want {
                    return Err(fail(format!("expected error {want:?}, got {got:?}")));
                }
            }
            "stats" => {
                let stats = table.stats(point.as_bytes(), at).unwrap();
                subset(&step["expect"], &stats_json(&stats), "stats").map_err(fail)?;
            }
            other => return Err(fail(format!("unknown op {other:?}"))),
        }
    }
    Ok(())
}

#[test]
fn every_scenario_passes() {
    let files = scenario_files();
    assert!(files.len() >= 3, "scenarios are missing");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| run(f).err().map(|e| format!("{}: {e}", f.display())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    println!("{} scenarios passed", files.len());
}
