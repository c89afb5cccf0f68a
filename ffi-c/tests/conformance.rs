//! Runs every scenario of `conformance/scenarios` through the exported
//! `extern "C"` functions, exactly as a C caller would: a table from
//! `sds_table_new`, strategies as JSON text, entries in `sds_entry`.

use std::collections::HashMap;
use std::os::raw::c_char;
use std::path::{Path, PathBuf};

use sds::*;
use sds_core::ErrorCode;
use serde_json::Value;

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

/// A table owned by the test, freed through the ABI.
struct Table(*mut sds_table);

impl Drop for Table {
    fn drop(&mut self) {
        unsafe { sds_table_free(self.0) }
    }
}

fn ptr(s: &str) -> *const c_char {
    s.as_ptr().cast()
}

/// The name of a failing result, as the scenarios spell it.
fn code_name(r: sds_result) -> Result<(), String> {
    match r {
        sds_result::Ok => Ok(()),
        other => Err(ErrorCode::from_u32(other as u32)
            .map_or("?", |c| c.as_str())
            .to_string()),
    }
}

fn set_strategy(t: &Table, point: &str, value: &Value) -> Result<(), String> {
    let r = match value {
        Value::Null => unsafe { sds_table_remove_strategy(t.0, ptr(point), point.len()) },
        Value::Object(_) => {
            let json = value.to_string();
            unsafe {
                sds_table_set_strategy_json(t.0, ptr(point), point.len(), ptr(&json), json.len())
            }
        }
        _ => panic!("strategy must be an object or null"),
    };
    code_name(r)
}

fn word(entry: &sds_entry) -> String {
    let reason = unsafe { sds_entry_reason(entry) };
    if reason == sds_reason::None {
        return "pass".into();
    }
    let mut buf = [0 as c_char; 32];
    let mut len = 0usize;
    let r = unsafe { sds_reason_name(reason as u32, buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!(r, sds_result::Ok);
    let bytes: Vec<u8> = buf[..len].iter().map(|&c| c as u8).collect();
    String::from_utf8(bytes).unwrap()
}

fn stats_json(s: &sds_stats) -> Value {
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

fn enter(t: &Table, point: &str, at: u64, flags: u32) -> Result<sds_entry, String> {
    let mut entry = sds_entry::default();
    code_name(unsafe { sds_enter(t.0, ptr(point), point.len(), at, flags, &mut entry) })?;
    Ok(entry)
}

fn exit(t: &Table, entry: &sds_entry, at: u64, outcome: sds_outcome) -> Result<(), String> {
    code_name(unsafe { sds_exit(t.0, entry, at, outcome as u32) })
}

fn run(file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let scenario: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut raw = std::ptr::null_mut();
    assert_eq!(unsafe { sds_table_new(16, &mut raw) }, sds_result::Ok);
    let table = Table(raw);
    let default_point = scenario["point"].as_str().unwrap_or("p").to_string();
    if let Some(s) = scenario.get("strategy") {
        set_strategy(&table, &default_point, s).map_err(|e| format!("initial strategy: {e}"))?;
    }
    let mut open: HashMap<String, Vec<sds_entry>> = HashMap::new();
    let steps = scenario["steps"].as_array().ok_or("no steps")?;
    for (i, step) in steps.iter().enumerate() {
        let fail = |msg: String| format!("step {i} ({step}): {msg}");
        let at = step["at"].as_u64().ok_or_else(|| fail("no at".into()))?;
        let point = step["point"].as_str().unwrap_or(&default_point).to_string();
        match step["op"].as_str().unwrap_or("") {
            "enter" => {
                let repeat = step["repeat"].as_u64().unwrap_or(1);
                let flags = if step["pressure_test"].as_bool().unwrap_or(false) {
                    sds_flag::PressureTest as u32
                } else {
                    sds_flag::None as u32
                };
                let mut tally: HashMap<String, u64> = HashMap::new();
                for _ in 0..repeat {
                    let entry = enter(&table, &point, at, flags).map_err(fail)?;
                    *tally.entry(word(&entry)).or_default() += 1;
                    match step["id"].as_str() {
                        Some(id) => open.entry(id.to_string()).or_default().push(entry),
                        None => exit(&table, &entry, at, sds_outcome::Ok).map_err(fail)?,
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
                    "error" => sds_outcome::Error,
                    _ => sds_outcome::Ok,
                };
                for entry in open
                    .remove(id)
                    .ok_or_else(|| fail(format!("no open group {id}")))?
                {
                    exit(&table, &entry, at, outcome).map_err(fail)?;
                }
            }
            "set_strategy" => {
                let got = set_strategy(&table, &point, &step["strategy"]).err();
                let want = step["error"].as_str().map(str::to_string);
                if got != want {
                    return Err(fail(format!("expected error {want:?}, got {got:?}")));
                }
            }
            "stats" => {
                let mut stats = sds_stats::default();
                let r = unsafe { sds_stats_get(table.0, ptr(&point), point.len(), at, &mut stats) };
                code_name(r).map_err(fail)?;
                subset(&step["expect"], &stats_json(&stats), "stats").map_err(fail)?;
            }
            other => return Err(fail(format!("unknown op {other:?}"))),
        }
    }
    Ok(())
}

#[test]
fn every_scenario_passes_through_the_c_abi() {
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
    println!("{} scenarios passed through the C ABI", files.len());
}
