//! Runs every scenario of `conformance/scenarios` through `PointTable`, and
//! every case of `conformance/strategies.json` through `Strategy::from_json`
//! (form "text") and `StrategyBuilder` fed from serde_json values (form
//! "native", as a binding feeds it from its dicts or objects). And every
//! case of `conformance/windows.json` through `SlidingWindow::with_storage`.

use sds_conformance as driver;

use driver::{stats_json, StrategyInput, Surface, WindowSurface};
use sds_core::{
    Bucket, CycleStats, Entry, Field, Flags, Outcome, PointTable, SlidingWindow, Slot, Stats,
    Strategy, StrategyBuilder, StrategyError,
};
use serde_json::Value;

struct Core(PointTable<Vec<Slot>>);

/// A serde_json value as the core's strategy input value.
fn input_value(v: &Value) -> sds_core::Value {
    match v {
        Value::Null => sds_core::Value::Null,
        Value::Bool(b) => sds_core::Value::from(*b),
        Value::String(_) => sds_core::Value::Text,
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => sds_core::Value::from(i),
            (None, Some(u), _) => sds_core::Value::from(u),
            (None, None, Some(f)) => sds_core::Value::from_f64(f),
            (None, None, None) => sds_core::Value::OutOfRange,
        },
        Value::Array(_) | Value::Object(_) => sds_core::Value::NotAnInteger,
    }
}

/// A strategy from a JSON object, through the builder.
fn from_object(map: &serde_json::Map<String, Value>) -> Result<Strategy, StrategyError> {
    let mut builder = StrategyBuilder::new();
    for (key, value) in map {
        builder.set(key, input_value(value))?;
    }
    builder.build()
}

fn strategy_json(s: &Strategy) -> Value {
    Field::ALL
        .iter()
        .map(|f| (f.json_name().to_string(), Value::from(s.get(*f))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn verdict(r: Result<Strategy, StrategyError>) -> Result<Value, (String, String)> {
    r.map(|s| strategy_json(&s))
        .map_err(|e| (e.code().as_str().to_string(), e.to_string()))
}

impl StrategyInput for Core {
    fn strategy_from_text(&self, json: &str) -> Result<Value, (String, String)> {
        verdict(Strategy::from_json(json))
    }

    fn strategy_from_native(&self, value: &Value) -> Option<Result<Value, (String, String)>> {
        let map = value.as_object().expect("native cases are objects");
        Some(verdict(from_object(map)))
    }
}

impl Surface for Core {
    type Entry = Entry;

    fn set_strategy(&self, point: &str, strategy: &Value) -> Result<(), String> {
        let code = |e: sds_core::Error| e.as_str().to_string();
        match strategy {
            Value::Null => self.0.remove_strategy(point.as_bytes()).map_err(code),
            Value::Object(map) => {
                let s = from_object(map).map_err(|e| e.code().as_str().to_string())?;
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

    fn wait_ms(&self, entry: &Entry) -> u64 {
        entry.wait_ms()
    }

    fn stats(&self, point: &str, at: u64) -> Result<Value, String> {
        let s = self
            .0
            .stats(point.as_bytes(), at)
            .map_err(|e| e.to_string())?;
        Ok(stats_json(s.fields(), s.last_cycle.fields()))
    }
}

#[test]
fn every_scenario_passes() {
    let passed =
        driver::run_all(|| Core(PointTable::new((0..16).map(|_| Slot::new()).collect()).unwrap()));
    println!("{passed} scenarios passed");
}

#[test]
fn every_strategy_case_passes() {
    let core = Core(PointTable::new(vec![Slot::new()]).unwrap());
    let passed = driver::run_strategy_cases(&core, &strategy_json(&Strategy::DEFAULT));
    assert!(passed >= 50, "only {passed} strategy checks ran");
    println!("{passed} strategy checks passed");
}

#[test]
fn the_driver_names_stats_as_the_core_does() {
    let names = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let json = stats_json(Stats::default().fields(), CycleStats::default().fields());
    let mut want: Vec<String> = Stats::NAMES.iter().map(|s| s.to_string()).collect();
    want.push(Stats::LAST_CYCLE.to_string());
    want.sort();
    assert_eq!(names(&json), want);
    let mut cycle: Vec<String> = CycleStats::NAMES.iter().map(|s| s.to_string()).collect();
    cycle.sort();
    assert_eq!(names(&json[Stats::LAST_CYCLE]), cycle);
}

/// The core's window has every operation of `windows.json`.
struct Window(SlidingWindow<Vec<Bucket>>);

impl WindowSurface for Window {
    fn add(&self, at: u64, n: u64) -> Option<(u64, u64)> {
        let t = self.0.add(at, n);
        Some((t.bucket, t.total))
    }

    fn add_at(&self, at: u64, now: u64, n: u64) -> Option<(u64, u64)> {
        let bucket = self.0.add_at(at, now, n);
        Some((bucket, self.0.sum(now)))
    }

    fn sum(&self, at: u64) -> u64 {
        self.0.sum(at)
    }

    fn bucket(&self, at: u64) -> u64 {
        self.0.bucket(at)
    }

    fn last_whole_cycle(&self, at: u64) -> u64 {
        self.0.last_whole_cycle(at)
    }

    fn set(&self, at: u64, value: u64) -> Option<()> {
        self.0.set(at, value);
        Some(())
    }

    fn fetch_max(&self, at: u64, value: u64) -> Option<u64> {
        Some(self.0.fetch_max(at, value))
    }

    fn clear_next_cycle(&self, at: u64) -> Option<()> {
        self.0.clear_next_cycle(at);
        Some(())
    }
}

#[test]
fn every_window_case_passes() {
    let run = driver::run_window_cases(|bucket_ms, buckets, ring| {
        let storage = (0..ring).map(|_| Bucket::new()).collect();
        Window(SlidingWindow::with_storage(bucket_ms, buckets, storage).unwrap())
    });
    assert_eq!(
        run.skipped,
        Vec::<String>::new(),
        "the core has every operation"
    );
    assert!(run.steps >= 100, "only {} window steps ran", run.steps);
    println!("{} window steps passed", run.steps);
}
