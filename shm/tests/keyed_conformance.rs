//! Runs every keyed scenario of `conformance/keyed` through `AnyKeys`, the
//! key table every binding holds: once on private tables and once on
//! shared files (a fresh file per table), the rule read from the file's
//! JSON object by `sds_settings::key_rule_json` as C reads it.

use std::sync::atomic::{AtomicUsize, Ordering};

use sds_conformance as driver;
use sds_core::keyed::{KeyError, KeyRuleKind};
use sds_settings::key_rule_json;
use sds_shm::{AnyKeys, Options};
use sds_testkit::TempDir;
use serde_json::Value as Json;

use driver::{CountCall, KeySurface, RuleFailure};

struct Keys(AnyKeys);

fn code(e: KeyError) -> String {
    e.code().as_str().to_string()
}

impl KeySurface for Keys {
    fn decide(&self, key: &[u8], at: u64, cost: u32) -> Result<Json, String> {
        self.0
            .decide(key, at, cost)
            .map(driver::decision_json)
            .map_err(code)
    }

    fn peek(&self, key: &[u8], at: u64) -> Result<Json, String> {
        Ok(driver::decision_json(self.0.peek(key, at)))
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
        let delta = match call {
            CountCall::Increment(n) => i64::from(n),
            CountCall::Decrement(n) => -i64::from(n),
            CountCall::Read => 0,
        };
        let c = self.0.count_add(key, at, delta).map_err(code)?;
        Ok(driver::counts_json([c.count, c.previous, c.reset_ms]))
    }

    fn stats(&self) -> Result<Json, String> {
        let s = self.0.stats();
        let counters = [s.capacity, s.resident, s.evictions, s.lossy_evictions];
        Ok(driver::key_stats_json(counters))
    }
}

/// The rule of a scenario's object, or the code name and message of its
/// refusal.
fn rule(object: &Json) -> Result<sds_core::keyed::KeyRule, RuleFailure> {
    key_rule_json(object.to_string().as_bytes())
        .map_err(|e| (e.code().as_str().to_string(), e.to_string()))
}

#[test]
fn every_keyed_scenario_passes_on_private_tables() {
    let run = driver::run_keyed_all(|object, capacity| {
        Ok(Keys(
            AnyKeys::private(rule(object)?, capacity).expect("a valid capacity"),
        ))
    });
    assert!(run.steps >= 300, "only {} keyed steps ran", run.steps);
    println!("{} keyed scenarios, {} steps passed", run.files, run.steps);
}

#[test]
fn every_keyed_scenario_passes_on_shared_files() {
    let dir = TempDir::new("keyed-conformance");
    let files = AtomicUsize::new(0);
    let in_flight = AtomicUsize::new(0);
    let run = driver::run_keyed_all(|object, capacity| {
        let rule = rule(object)?;
        if rule.kind() == KeyRuleKind::InFlight {
            in_flight.fetch_add(1, Ordering::Relaxed);
        }
        let path = dir.join(&format!("t{}", files.fetch_add(1, Ordering::Relaxed)));
        let keys = AnyKeys::shared(&path, capacity, rule, &Options::new()).expect("a table file");
        Ok(Keys(keys))
    });
    let shared = files.load(Ordering::Relaxed);
    assert!(shared >= 25, "only {shared} tables were files");
    assert!(
        in_flight.load(Ordering::Relaxed) >= 3,
        "in-flight scenarios ran on files"
    );
    println!(
        "{} keyed scenarios, {} steps passed; {shared} tables were files, {} of them in flight",
        run.files,
        run.steps,
        in_flight.load(Ordering::Relaxed)
    );
}
