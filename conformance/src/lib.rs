//! The scenario driver shared by the Rust runners (the core's and the C
//! ABI's tests use it as a dev-dependency): it reads the files and walks the
//! steps; each runner only says how its surface enters, exits, sets a
//! strategy and reads stats. Other languages have their own drivers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod keyed;
pub use keyed::{
    answer_json, counts_json, decision_json, key_stats_json, keyed_files, run_keyed, run_keyed_all,
    CountCall, KeySurface, KeyedRun, RuleFailure,
};
mod settings;
pub use settings::{run_config_cases, run_settings_cases, settings_cases, spelled, SettingsCase};

/// What a runner's surface does for the driver. Errors are code names.
pub trait Surface {
    type Entry;
    fn set_strategy(&self, point: &str, strategy: &Value) -> Result<(), String>;
    /// The entry and its word: "pass" or the reason's name.
    fn enter(
        &self,
        point: &str,
        at: u64,
        pressure_test: bool,
    ) -> Result<(Self::Entry, String), String>;
    fn exit(&self, entry: &Self::Entry, at: u64, error: bool) -> Result<(), String>;
    /// The ms a paced entry waits before it runs (0 for most entries).
    fn wait_ms(&self, entry: &Self::Entry) -> u64;
    /// The stats in the scenario format (`visit`, ..., `lastCycle`).
    fn stats(&self, point: &str, at: u64) -> Result<Value, String>;
}

/// The file `name` of conformance/.
fn conformance_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The JSON of the file `name` of conformance/.
fn read_json(name: &str) -> Value {
    let text = std::fs::read_to_string(conformance_file(name))
        .unwrap_or_else(|e| panic!("conformance/{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("conformance/{name} is not JSON: {e}"))
}

/// Panics listing the `failures` of `total` checks of `what`, if any.
fn assert_none_failed(failures: &[String], total: usize, what: &str) {
    assert!(
        failures.is_empty(),
        "{} of {total} {what} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every scenario file, sorted.
pub fn scenario_files() -> Vec<PathBuf> {
    json_files("scenarios")
}

/// The JSON files of the folder `dir` of conformance/, sorted.
fn json_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(conformance_file(dir))
        .unwrap_or_else(|e| panic!("conformance/{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Stats in the scenario format, from the core's named fields
/// (`Stats::fields`, `CycleStats::fields`).
pub fn stats_json<'a>(
    now: impl IntoIterator<Item = (&'a str, u64)>,
    last_cycle: impl IntoIterator<Item = (&'a str, u64)>,
) -> Value {
    let object =
        |pairs: &mut dyn Iterator<Item = (&'a str, u64)>| -> serde_json::Map<String, Value> {
            pairs
                .map(|(k, v)| (k.to_string(), Value::from(v)))
                .collect()
        };
    let mut stats = object(&mut now.into_iter());
    stats.insert(
        "lastCycle".to_string(),
        Value::Object(object(&mut last_cycle.into_iter())),
    );
    Value::Object(stats)
}

/// Checks that every key of `expected` has the same value in `actual`.
fn subset(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().try_for_each(|(k, v)| {
            let got = a
                .get(k)
                .ok_or_else(|| format!("{path}.{k}: no such field"))?;
            subset(v, got, &format!("{path}.{k}"))
        }),
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

/// Runs one scenario file on a fresh surface.
pub fn run<S: Surface>(file: &Path, surface: &S) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let scenario: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let default_point = scenario["point"].as_str().unwrap_or("p").to_string();
    if let Some(s) = scenario.get("strategy") {
        surface
            .set_strategy(&default_point, s)
            .map_err(|e| format!("initial strategy: {e}"))?;
    }
    let mut open: HashMap<String, Vec<S::Entry>> = HashMap::new();
    let steps = scenario["steps"].as_array().ok_or("no steps")?;
    for (i, step) in steps.iter().enumerate() {
        let fail = |msg: String| format!("step {i} ({step}): {msg}");
        let at = step["at"].as_u64().ok_or_else(|| fail("no at".into()))?;
        let point = step["point"].as_str().unwrap_or(&default_point).to_string();
        match step["op"].as_str().unwrap_or("") {
            "enter" => {
                let repeat = step["repeat"].as_u64().unwrap_or(1);
                let pressure = step["pressure_test"].as_bool().unwrap_or(false);
                let mut tally: HashMap<String, u64> = HashMap::new();
                let mut waits = Vec::new();
                for _ in 0..repeat {
                    let (entry, word) = surface.enter(&point, at, pressure).map_err(fail)?;
                    *tally.entry(word).or_default() += 1;
                    waits.push(surface.wait_ms(&entry));
                    match step["id"].as_str() {
                        Some(id) => open.entry(id.to_string()).or_default().push(entry),
                        None => surface.exit(&entry, at, false).map_err(fail)?,
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
                check_waits(&step["waitMs"], &waits).map_err(fail)?;
            }
            "exit" => {
                let id = step["id"].as_str().ok_or_else(|| fail("no id".into()))?;
                let error = step["outcome"].as_str() == Some("error");
                for entry in open
                    .remove(id)
                    .ok_or_else(|| fail(format!("no open group {id}")))?
                {
                    surface.exit(&entry, at, error).map_err(fail)?;
                }
            }
            "set_strategy" => {
                let got = surface.set_strategy(&point, &step["strategy"]).err();
                let want = step["error"].as_str().map(str::to_string);
                if got != want {
                    return Err(fail(format!("expected error {want:?}, got {got:?}")));
                }
            }
            "stats" => {
                let stats = surface.stats(&point, at).map_err(fail)?;
                subset(&step["expect"], &stats, "stats").map_err(fail)?;
            }
            other => return Err(fail(format!("unknown op {other:?}"))),
        }
    }
    Ok(())
}

/// Checks the waits of an enter step: `waitMs` is absent, one number
/// (`repeat` 1) or one number per entry.
fn check_waits(want: &Value, got: &[u64]) -> Result<(), String> {
    let ok = match want {
        Value::Null => true,
        Value::Number(n) => got.len() == 1 && n.as_u64() == Some(got[0]),
        Value::Array(list) => {
            list.len() == got.len() && list.iter().zip(got).all(|(w, g)| w.as_u64() == Some(*g))
        }
        _ => return Err(format!("waitMs must be a number or a list, got {want}")),
    };
    match ok {
        true => Ok(()),
        false => Err(format!("waitMs: expected {want}, got {got:?}")),
    }
}

/// Runs every scenario, each on a surface from `fresh`; panics listing the
/// failures. Returns how many passed.
pub fn run_all<S: Surface>(fresh: impl Fn() -> S) -> usize {
    let files = scenario_files();
    assert!(files.len() >= 40, "scenarios are missing");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| {
            run(f, &fresh())
                .err()
                .map(|e| format!("{}: {e}", f.display()))
        })
        .collect();
    assert_none_failed(&failures, files.len(), "scenarios");
    files.len()
}

/// How a runner turns strategy input into a strategy, for
/// `conformance/strategies.json`: `Ok` holds every field under its SDS JSON
/// name, `Err` the code name and the message.
pub trait StrategyInput {
    /// The JSON text as it is (form "text").
    fn strategy_from_text(&self, json: &str) -> Result<Value, (String, String)>;
    /// The value the runner's own JSON reader made of the text (form
    /// "native"); `None` when the surface has no such form.
    fn strategy_from_native(&self, value: &Value) -> Option<Result<Value, (String, String)>>;
}

/// Runs every case of `conformance/strategies.json` in every form the
/// surface has; panics listing the failures. Returns how many checks passed.
pub fn run_strategy_cases<S: StrategyInput>(surface: &S, defaults: &Value) -> usize {
    let doc = read_json("strategies.json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 10, "strategy cases are missing");
    let mut failures = Vec::new();
    let mut passed = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let json = case["json"].as_str().expect("every case has json text");
        let forms: Vec<&str> = match case.get("forms") {
            Some(f) => f
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect(),
            None => vec!["text", "native"],
        };
        let want = match (case.get("expect"), case.get("error")) {
            (Some(fields), None) => {
                let mut all = defaults.clone();
                for (k, v) in fields.as_object().expect("expect is an object") {
                    all[k] = v.clone();
                }
                Ok(all)
            }
            (None, Some(code)) => Err((
                code.as_str().unwrap().to_string(),
                case["message"].as_str().unwrap().to_string(),
            )),
            _ => panic!("{name}: a case has either expect or error"),
        };
        for form in forms {
            let got = match form {
                "text" => Some(surface.strategy_from_text(json)),
                "native" => surface.strategy_from_native(&serde_json::from_str(json).unwrap()),
                other => panic!("{name}: unknown form {other}"),
            };
            match got {
                None => {}
                Some(got) if got == want => passed += 1,
                Some(got) => {
                    failures.push(format!("{name} ({form}): expected {want:?}, got {got:?}"))
                }
            }
        }
    }
    assert_none_failed(&failures, passed + failures.len(), "strategy checks");
    passed
}

/// What a runner's window surface does for `conformance/windows.json`. An
/// operation the surface does not expose returns `None`: the driver then
/// skips the rest of that case (a skipped write would change what the later
/// steps read) and reports it.
pub trait WindowSurface {
    /// `add(at, n)`: the bucket's value and the sliding sum after the write.
    fn add(&self, at: u64, n: u64) -> Option<(u64, u64)>;
    /// `add_at(at, now, n)`: the value of the bucket written and the sliding
    /// sum at `now`.
    fn add_at(&self, at: u64, now: u64, n: u64) -> Option<(u64, u64)>;
    fn sum(&self, at: u64) -> u64;
    fn bucket(&self, at: u64) -> u64;
    fn last_whole_cycle(&self, at: u64) -> u64;
    fn set(&self, at: u64, value: u64) -> Option<()>;
    fn fetch_max(&self, at: u64, value: u64) -> Option<u64>;
    fn clear_next_cycle(&self, at: u64) -> Option<()>;
}

/// What a run of `windows.json` did: steps checked, and the cases cut short
/// where the surface lacks an operation.
#[derive(Debug, Default)]
pub struct WindowRun {
    pub steps: usize,
    pub skipped: Vec<String>,
}

/// Largest integer every JSON reader holds exactly: bigger ones are strings.
const MAX_JSON_NUMBER: u64 = 1 << 53;

/// An integer of `windows.json`: a JSON number up to 2^53 or decimal text.
pub fn window_int(v: &Value, what: &str) -> Result<u64, String> {
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(x) if x <= MAX_JSON_NUMBER => Ok(x),
            _ => Err(format!(
                "{what}: {n} is no integer of 0..=2^53 (write larger ones as strings)"
            )),
        },
        Value::String(s) => s
            .parse::<u64>()
            .map_err(|_| format!("{what}: {s:?} is no integer of 0..2^64")),
        other => Err(format!("{what}: {other} is no integer")),
    }
}

fn window_step<W: WindowSurface>(w: &W, step: &Value) -> Result<bool, String> {
    let int = |key: &str| window_int(&step[key], key);
    let check = |key: &str, got: u64| -> Result<(), String> {
        let want = window_int(&step["expect"][key], &format!("expect.{key}"))?;
        if want == got {
            Ok(())
        } else {
            Err(format!("{key}: expected {want}, got {got}"))
        }
    };
    let value = |got: u64| -> Result<bool, String> {
        let want = window_int(&step["expect"], "expect")?;
        if want == got {
            Ok(true)
        } else {
            Err(format!("expected {want}, got {got}"))
        }
    };
    let tally = |got: Option<(u64, u64)>| -> Result<bool, String> {
        let Some((bucket, total)) = got else {
            return Ok(false);
        };
        check("bucket", bucket)?;
        check("total", total)?;
        Ok(true)
    };
    let at = int("at")?;
    match step["op"].as_str().unwrap_or("") {
        "add" => tally(w.add(at, int("n")?)),
        "add_at" => tally(w.add_at(at, int("now")?, int("n")?)),
        "sum" => value(w.sum(at)),
        "bucket" => value(w.bucket(at)),
        "last_whole_cycle" => value(w.last_whole_cycle(at)),
        "set" => Ok(w.set(at, int("value")?).is_some()),
        "fetch_max" => match w.fetch_max(at, int("value")?) {
            Some(got) => value(got),
            None => Ok(false),
        },
        "clear_next_cycle" => Ok(w.clear_next_cycle(at).is_some()),
        other => Err(format!("unknown op {other:?}")),
    }
}

/// Runs every case of `conformance/windows.json` on a window from
/// `fresh(bucket_ms, buckets, ring)`; panics listing the failures, each with
/// the file, the case, the step and both values.
pub fn run_window_cases<W: WindowSurface>(fresh: impl Fn(u64, usize, usize) -> W) -> WindowRun {
    let doc = read_json("windows.json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 10, "window cases are missing");
    let mut run = WindowRun::default();
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let shape = &case["window"];
        let param = |key: &str| window_int(&shape[key], key).expect("window parameters");
        let w = fresh(
            param("bucket_ms"),
            param("buckets") as usize,
            param("ring") as usize,
        );
        let steps = case["steps"].as_array().expect("steps");
        for (i, step) in steps.iter().enumerate() {
            match window_step(&w, step) {
                Ok(true) => run.steps += 1,
                Ok(false) => {
                    run.skipped.push(format!(
                        "{name}: steps {i}.. (no {})",
                        step["op"].as_str().unwrap_or("?")
                    ));
                    break;
                }
                Err(e) => {
                    failures.push(format!("windows.json: {name}: step {i} ({step}): {e}"));
                    break;
                }
            }
        }
    }
    assert_none_failed(&failures, cases.len(), "window cases");
    run
}
