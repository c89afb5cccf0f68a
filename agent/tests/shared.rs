//! Four worker processes on one shared table, each running an agent: all
//! pull, exactly one uploads per cycle, and after `kill -9` of that one
//! another takes over within two cycles. The processes run a clock 10 times
//! faster than the wall clock from a common origin, so a 10 s cycle takes 1 s.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::{wait_until, FakeConsole, Kid, TempDir, ROLE};
use sds_agent::testing::ScaledClock;
use sds_agent::{Agent, AgentConfig, Clock};
use sds_core::{Flags, Outcome};
use sds_shm::{AnyTable, Options};
use serde_json::json;

const FACTOR: u64 = 10;
const CYCLE: u64 = 10_000;
const WORKERS: usize = 4;

/// A worker: the shared table, its agent, and steady traffic on "w".
#[test]
fn child_main() {
    if std::env::var(ROLE).is_err() {
        return;
    }
    let var = |key: &str| std::env::var(key).unwrap();
    let table = Arc::new(AnyTable::shared(var("TABLE"), 64, &Options::new()).unwrap());
    let clock = Arc::new(ScaledClock::new(var("ORIGIN").parse().unwrap(), FACTOR));
    let mut config = AgentConfig::new(var("URL"), "group", "app");
    config.ip = Some("10.9.9.9".into());
    config.hostname = Some("host".into());
    config.pull_interval_ms = 1_000;
    config.timeout_ms = 300;
    config.clock = clock.clone();
    let agent = Agent::start(table.clone(), config).unwrap();
    let mut reported = false;
    loop {
        let now = clock.now_ms();
        table
            .with_points(|t| {
                let point = t.point(t.insert(b"w").unwrap()).unwrap();
                let entry = point.enter(now, Flags::NONE);
                point.exit(&entry, now, Outcome::Ok);
            })
            .unwrap();
        if !reported && agent.status().is_reporter {
            println!("@@reporter");
            reported = true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Uploads per statisticsCycleTime.
fn uploads_per_cycle(fake: &FakeConsole) -> BTreeMap<u64, usize> {
    let mut cycles = BTreeMap::new();
    for upload in fake.uploads() {
        // Every upload carries "w", with zeros for a cycle before its traffic.
        assert!(upload["pointInfoMap"]["w"]["visitNum"].as_u64().is_some());
        *cycles
            .entry(upload["statisticsCycleTime"].as_u64().unwrap())
            .or_insert(0) += 1;
    }
    cycles
}

/// The workers that reported taking the role since the last call.
fn new_reporters(kids: &[Kid]) -> Vec<usize> {
    (0..kids.len())
        .filter(|&i| kids[i].try_report().as_deref() == Some("reporter"))
        .collect()
}

#[test]
fn one_process_per_host_uploads_and_a_survivor_takes_over_after_kill_9() {
    let fake = FakeConsole::start();
    fake.set_app(
        "group",
        "app",
        json!([{"point": "w", "visitThreshold": 1000000}]),
    );
    let dir = TempDir::new("shared");
    let origin = sds_clock::now_ms();
    let clock = ScaledClock::new(origin, FACTOR);
    let env = [
        ("TABLE", dir.join("table").display().to_string()),
        ("ORIGIN", origin.to_string()),
        ("URL", fake.url()),
    ];
    let mut kids: Vec<Kid> = (0..WORKERS).map(|_| Kid::spawn("worker", &env)).collect();

    // Every worker pulls; four cycles are uploaded, each once.
    wait_until(Duration::from_secs(30), "4 uploads", || {
        uploads_per_cycle(&fake).len() >= 4
    });
    assert!(fake.pulls().len() >= WORKERS);
    let reporters = new_reporters(&kids);
    assert_eq!(reporters.len(), 1, "one reporter: {reporters:?}");
    let victim = reporters[0];

    // Kill it between two uploads (second 7 to 9 of a cycle).
    wait_until(Duration::from_secs(5), "second 7 of a cycle", || {
        (7_000..9_000).contains(&(clock.now_ms() % CYCLE))
    });
    kids[victim].kill();
    let killed_cycle = clock.now_ms() / CYCLE * CYCLE;
    assert!(uploads_per_cycle(&fake).contains_key(&killed_cycle));

    // A survivor uploads the next cycles: the first within two cycles.
    wait_until(
        Duration::from_secs(30),
        "the uploads after the kill",
        || uploads_per_cycle(&fake).range(killed_cycle + 1..).count() >= 3,
    );
    let cycles = uploads_per_cycle(&fake);
    let first_after = *cycles.range(killed_cycle + 1..).next().unwrap().0;
    assert!(
        first_after <= killed_cycle + 2 * CYCLE,
        "first upload after the kill for cycle {first_after}, killed in {killed_cycle}"
    );
    assert!(
        cycles.values().all(|&n| n == 1),
        "exactly one upload per cycle: {cycles:?}"
    );
    let taken = new_reporters(&kids);
    assert_eq!(taken.len(), 1, "one new reporter: {taken:?}");
    assert_ne!(taken[0], victim);
    fake.assert_no_violation();
}
