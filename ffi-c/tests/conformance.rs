//! Runs every scenario of `conformance/scenarios` through the exported
//! `extern "C"` functions, exactly as a C caller would: a table from
//! `sds_table_new`, strategies as JSON text, entries in `sds_entry`.

#[path = "../../conformance/driver.rs"]
mod driver;

use std::os::raw::c_char;

use driver::{stats_json, Surface};
use sds::*;
use sds_core::ErrorCode;
use serde_json::Value;

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

impl Surface for Table {
    type Entry = sds_entry;

    fn set_strategy(&self, point: &str, strategy: &Value) -> Result<(), String> {
        set_strategy(self, point, strategy)
    }

    fn enter(
        &self,
        point: &str,
        at: u64,
        pressure_test: bool,
    ) -> Result<(sds_entry, String), String> {
        let flags = if pressure_test {
            sds_flag::PressureTest
        } else {
            sds_flag::None
        } as u32;
        let mut entry = sds_entry::default();
        code_name(unsafe { sds_enter(self.0, ptr(point), point.len(), at, flags, &mut entry) })?;
        let word = word(&entry);
        Ok((entry, word))
    }

    fn exit(&self, entry: &sds_entry, at: u64, error: bool) -> Result<(), String> {
        let outcome = if error {
            sds_outcome::Error
        } else {
            sds_outcome::Ok
        };
        code_name(unsafe { sds_exit(self.0, entry, at, outcome as u32) })
    }

    fn stats(&self, point: &str, at: u64) -> Result<Value, String> {
        let mut s = sds_stats::default();
        code_name(unsafe { sds_stats_get(self.0, ptr(point), point.len(), at, &mut s) })?;
        let c = s.last_cycle;
        Ok(stats_json(
            [s.visit, s.exception, s.timeout, s.downgrade, s.concurrent],
            [
                c.visit_num,
                c.exception_num,
                c.timeout_num,
                c.downgrade_num,
                c.concurrent_num,
            ],
        ))
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
