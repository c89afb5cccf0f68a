//! Runs every scenario of `conformance/scenarios` through `PointTable`.

#[path = "../../conformance/driver.rs"]
mod driver;

use driver::{stats_json, Surface};
use sds_core::{Entry, Flags, Outcome, PointTable, Slot, Strategy};
use serde_json::Value;

struct Core(PointTable<Vec<Slot>>);

impl Surface for Core {
    type Entry = Entry;

    fn set_strategy(&self, point: &str, strategy: &Value) -> Result<(), String> {
        let code = |e: sds_core::Error| e.as_str().to_string();
        match strategy {
            Value::Null => self.0.remove_strategy(point.as_bytes()).map_err(code),
            Value::Object(map) => {
                let mut s = Strategy::DEFAULT;
                for (key, value) in map {
                    let n = value.as_i64().ok_or("SDS_INVALID_STRATEGY")?;
                    s.set_key(key, n)
                        .map_err(|e| e.code().as_str().to_string())?;
                }
                self.0
                    .set_strategy(point.as_bytes(), &s)
                    .map(|_| ())
                    .map_err(code)
            }
            _ => panic!("strategy must be an object or null"),
        }
    }

    fn enter(&self, point: &str, at: u64, pressure_test: bool) -> Result<(Entry, String), String> {
        let flags = if pressure_test {
            Flags::PRESSURE_TEST
        } else {
            Flags::NONE
        };
        let entry = self
            .0
            .enter(point.as_bytes(), at, flags)
            .map_err(|e| e.to_string())?;
        let word = entry.reason().map_or("pass", |r| r.as_str()).to_string();
        Ok((entry, word))
    }

    fn exit(&self, entry: &Entry, at: u64, error: bool) -> Result<(), String> {
        let outcome = if error { Outcome::Error } else { Outcome::Ok };
        self.0.exit(entry, at, outcome).map_err(|e| e.to_string())
    }

    fn stats(&self, point: &str, at: u64) -> Result<Value, String> {
        let s = self
            .0
            .stats(point.as_bytes(), at)
            .map_err(|e| e.to_string())?;
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
fn every_scenario_passes() {
    let passed =
        driver::run_all(|| Core(PointTable::new((0..16).map(|_| Slot::new()).collect()).unwrap()));
    println!("{passed} scenarios passed");
}
