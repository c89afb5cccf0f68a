//! Runs every keyed scenario of `conformance/keyed` through the C ABI: the
//! scenario's rule object goes to `sds_keys_new` as JSON text, every step
//! through `sds_keys_*`, and a refusal comes back as the result's code name
//! and the last error message.

use std::ptr::null_mut;

use sds::{
    sds_keys, sds_keys_count_add, sds_keys_decide, sds_keys_free, sds_keys_new, sds_keys_peek,
    sds_keys_release, sds_keys_reset, sds_keys_reset_all, sds_keys_stats_get,
};
use sds_conformance as driver;
use sds_core::keyed::{KeyCount, KeyDecision, KeyTableStats};
use serde_json::Value as Json;

mod common;
use common::{made, Refusal};

use driver::{CountCall, KeySurface, RuleFailure};

/// A table from `sds_keys_new`, freed on drop.
struct Keys(*mut sds_keys);

impl Drop for Keys {
    fn drop(&mut self) {
        unsafe { sds_keys_free(self.0) };
    }
}

fn code((code, _): Refusal) -> String {
    code.as_str().to_string()
}

/// The core's message of a refusal: C's last error is `CODE: message`.
fn failure((code, message): Refusal) -> RuleFailure {
    let prefix = format!("{}: ", code.as_str());
    let message = message.strip_prefix(&prefix).unwrap_or(&message);
    (code.as_str().to_string(), message.to_string())
}

impl KeySurface for Keys {
    fn decide(&self, key: &[u8], at: u64, cost: u32) -> Result<Json, String> {
        let mut d = KeyDecision::default();
        let (k, len) = (key.as_ptr().cast(), key.len());
        let r = unsafe { sds_keys_decide(self.0, k, len, at, cost, &mut d) };
        made(r, d).map(driver::decision_json).map_err(code)
    }

    fn peek(&self, key: &[u8], at: u64) -> Result<Json, String> {
        let mut d = KeyDecision::default();
        let r = unsafe { sds_keys_peek(self.0, key.as_ptr().cast(), key.len(), at, &mut d) };
        made(r, d).map(driver::decision_json).map_err(code)
    }

    fn release(&self, key: &[u8], units: u32) -> Result<bool, String> {
        let mut held = false;
        let (k, len) = (key.as_ptr().cast(), key.len());
        made(
            unsafe { sds_keys_release(self.0, k, len, units, &mut held) },
            held,
        )
        .map_err(code)
    }

    fn reset(&self, key: &[u8]) -> Result<bool, String> {
        let mut held = false;
        let (k, len) = (key.as_ptr().cast(), key.len());
        made(unsafe { sds_keys_reset(self.0, k, len, &mut held) }, held).map_err(code)
    }

    fn reset_all(&self) -> Result<u64, String> {
        let mut held = 0;
        made(unsafe { sds_keys_reset_all(self.0, &mut held) }, held).map_err(code)
    }

    fn count(&self, key: &[u8], at: u64, call: CountCall) -> Result<Json, String> {
        // C's one count call: the sign of delta says which (0 reads).
        let delta = match call {
            CountCall::Increment(n) => i32::try_from(n).expect("units within i32"),
            CountCall::Decrement(n) => -i32::try_from(n).expect("units within i32"),
            CountCall::Read => 0,
        };
        let mut c = KeyCount::default();
        let (k, len) = (key.as_ptr().cast(), key.len());
        let r = unsafe { sds_keys_count_add(self.0, k, len, at, delta, &mut c) };
        let c = made(r, c).map_err(code)?;
        Ok(driver::counts_json([c.count, c.previous, c.reset_ms]))
    }

    fn stats(&self) -> Result<Json, String> {
        let mut s = KeyTableStats::default();
        let s = made(unsafe { sds_keys_stats_get(self.0, &mut s) }, s).map_err(code)?;
        let counters = [s.capacity, s.resident, s.evictions, s.lossy_evictions];
        Ok(driver::key_stats_json(counters))
    }
}

#[test]
fn every_keyed_scenario_passes_through_the_c_abi() {
    let run = driver::run_keyed_all(|object, capacity| {
        let rule = object.to_string();
        let mut keys = null_mut();
        let r = unsafe { sds_keys_new(rule.as_ptr().cast(), rule.len(), capacity, &mut keys) };
        made(r, keys).map(Keys).map_err(failure)
    });
    assert!(run.steps >= 300, "only {} keyed steps ran", run.steps);
    println!(
        "{} keyed scenarios, {} steps passed through the C ABI",
        run.files, run.steps
    );
}
