//! Runs every scenario of `conformance/scenarios` through the exported
//! `extern "C"` functions, exactly as a C caller would: a table from
//! `sds_table_new`, strategies as JSON text, entries in `sds_entry`. And
//! every case of `conformance/strategies.json` in its JSON-text form through
//! `sds_strategy_from_json`, with the code and the last error's message.
//! And every case of `conformance/windows.json` through `sds_window_*`,
//! every step of it.

use sds_conformance as driver;

use std::os::raw::c_char;

use driver::{stats_json, StrategyInput, Surface, WindowSurface};
use sds::*;
use sds_core::{EntryParts, Field, Outcome, Stats, Strategy, Tally};
use serde_json::Value;

mod common;
use common::{last_error, text};

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
    r.code()
        .map_or(Ok(()), |code| Err(code.as_str().to_string()))
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

fn word(entry: &EntryParts) -> String {
    let reason = unsafe { sds_entry_reason(entry) };
    if reason == sds_reason::None {
        return "pass".into();
    }
    let mut buf = [0 as c_char; 32];
    let mut len = 0usize;
    let r = unsafe { sds_reason_name(reason.0.into(), buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!(r, sds_result::Ok);
    text(&buf[..len])
}

/// Every field under its SDS JSON name, as `strategies.json` expects it.
fn strategy_json(s: &Strategy) -> Value {
    let fields = Field::ALL
        .iter()
        .map(|f| (f.json_name().into(), s.get(*f).into()));
    Value::Object(fields.collect())
}

/// The C ABI has one form of strategy input that a case can use: JSON text.
/// (An `sds_strategy` holds only integers, set field by field: no key to
/// misspell or repeat, no value of another type.)
struct JsonText;

impl StrategyInput for JsonText {
    fn strategy_from_text(&self, json: &str) -> Result<Value, (String, String)> {
        let mut out = sds_strategy_default();
        match unsafe { sds_strategy_from_json(ptr(json), json.len(), &mut out) } {
            sds_result::Ok => Ok(strategy_json(&out)),
            failed => {
                assert_eq!(out, sds_strategy_default(), "output untouched");
                let code = code_name(failed).unwrap_err();
                let message = last_error();
                let detail = message
                    .strip_prefix(&format!("{code}: "))
                    .unwrap_or_else(|| panic!("{message:?} starts with {code}"));
                Err((code, detail.to_string()))
            }
        }
    }

    fn strategy_from_native(&self, _: &Value) -> Option<Result<Value, (String, String)>> {
        None
    }
}

impl Surface for Table {
    type Entry = EntryParts;

    fn set_strategy(&self, point: &str, strategy: &Value) -> Result<(), String> {
        set_strategy(self, point, strategy)
    }

    fn enter(
        &self,
        point: &str,
        at: u64,
        pressure_test: bool,
    ) -> Result<(EntryParts, String), String> {
        let flags = if pressure_test {
            sds_flag::PressureTest
        } else {
            sds_flag::None
        } as u32;
        let mut entry = EntryParts::default();
        code_name(unsafe { sds_enter(self.0, ptr(point), point.len(), at, flags, &mut entry) })?;
        let word = word(&entry);
        Ok((entry, word))
    }

    fn exit(&self, entry: &EntryParts, at: u64, error: bool) -> Result<(), String> {
        let outcome = if error { Outcome::Error } else { Outcome::Ok };
        code_name(unsafe { sds_exit(self.0, entry, at, outcome as u32) })
    }

    fn wait_ms(&self, entry: &EntryParts) -> u64 {
        entry.wait_ms as u64
    }

    fn stats(&self, point: &str, at: u64) -> Result<Value, String> {
        let mut s = Stats::default();
        code_name(unsafe { sds_stats_get(self.0, ptr(point), point.len(), at, &mut s) })?;
        Ok(stats_json(s.fields(), s.last_cycle.fields()))
    }
}

#[test]
fn every_scenario_passes_through_the_c_abi() {
    let passed = driver::run_all(|| {
        let mut raw = std::ptr::null_mut();
        assert_eq!(unsafe { sds_table_new(16, &mut raw) }, sds_result::Ok);
        Table(raw)
    });
    println!("{passed} scenarios passed through the C ABI");
}

#[test]
fn every_strategy_case_passes_as_json_text() {
    let passed = driver::run_strategy_cases(&JsonText, &strategy_json(&Strategy::DEFAULT));
    assert!(passed >= 25, "only {passed} strategy checks ran");
    println!("{passed} strategy checks passed through sds_strategy_from_json");
}

/// A window owned by the test, freed through the ABI.
struct Window(*mut sds_window);

impl Drop for Window {
    fn drop(&mut self) {
        unsafe { sds_window_free(self.0) }
    }
}

impl Window {
    /// A read through one of the `sds_window_*` getters.
    fn read(
        &self,
        at: u64,
        f: unsafe extern "C" fn(*const sds_window, u64, *mut u64) -> sds_result,
    ) -> u64 {
        let mut out = u64::MAX;
        assert_eq!(unsafe { f(self.0, at, &mut out) }, sds_result::Ok);
        out
    }
}

impl WindowSurface for Window {
    fn add(&self, at: u64, n: u64) -> Option<(u64, u64)> {
        let mut t = Tally::default();
        assert_eq!(
            unsafe { sds_window_add(self.0, at, n, &mut t) },
            sds_result::Ok
        );
        Some((t.bucket, t.total))
    }

    fn add_at(&self, at: u64, now: u64, n: u64) -> Option<(u64, u64)> {
        let mut bucket = u64::MAX;
        let r = unsafe { sds_window_add_at(self.0, at, now, n, &mut bucket) };
        assert_eq!(r, sds_result::Ok);
        Some((bucket, self.read(now, sds_window_sum)))
    }

    fn sum(&self, at: u64) -> u64 {
        self.read(at, sds_window_sum)
    }

    fn bucket(&self, at: u64) -> u64 {
        self.read(at, sds_window_bucket)
    }

    fn last_whole_cycle(&self, at: u64) -> u64 {
        self.read(at, sds_window_last_whole_cycle)
    }

    fn set(&self, at: u64, value: u64) -> Option<()> {
        assert_eq!(unsafe { sds_window_set(self.0, at, value) }, sds_result::Ok);
        Some(())
    }

    fn fetch_max(&self, at: u64, value: u64) -> Option<u64> {
        let mut out = u64::MAX;
        let r = unsafe { sds_window_fetch_max(self.0, at, value, &mut out) };
        assert_eq!(r, sds_result::Ok);
        Some(out)
    }

    fn clear_next_cycle(&self, at: u64) -> Option<()> {
        let r = unsafe { sds_window_clear_next_cycle(self.0, at) };
        assert_eq!(r, sds_result::Ok);
        Some(())
    }
}

#[test]
fn every_window_case_passes_through_the_c_abi() {
    let run = driver::run_window_cases(|bucket_ms, buckets, ring| {
        let mut raw = std::ptr::null_mut();
        let r = unsafe { sds_window_new(bucket_ms, buckets, ring, &mut raw) };
        assert_eq!(r, sds_result::Ok);
        Window(raw)
    });
    assert!(run.skipped.is_empty(), "{:?}", run.skipped);
    assert!(run.steps >= 125, "only {} window steps ran", run.steps);
    println!("{} window steps passed through sds_window_*", run.steps);
}
