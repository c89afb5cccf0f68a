//! The agent against what the console as it ships does (SDS-ADMIN.md, "What
//! the shipped console does (measured)"), reproduced by the fake: a null
//! version, null strategies, uploads stored once per request, the point
//! list, the 164-character column; and the console's sets read by the
//! core's one strategy path, within the console's share of the table.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{
    applied, config, log_lines, logged, manual_clock, start, status_until, stop_clean, strategy,
    threshold, visit, wait_until, FakeConsole, Lines, APP, C0, GROUP, SECONDS,
};
use sds_agent::testing::ManualClock;
use sds_agent::{Agent, AgentConfig, Level};
use sds_core::{Outcome, Strategy};
use sds_shm::AnyTable;
use serde_json::{json, Value};

/// The tests' config on `fake`, its log collected.
fn logging(fake: &FakeConsole) -> (AgentConfig, Lines) {
    let mut config = config(fake.url());
    let lines = log_lines(&mut config);
    (config, lines)
}

/// The tests' config on `url`, on a manual clock at one second into cycle
/// C0 and pulling once a minute: these tests move the clock to the uploads.
fn by_the_minute(url: String) -> (AgentConfig, Arc<ManualClock>) {
    let mut config = config(url);
    let clock = manual_clock(&mut config, C0 + 1_000);
    config.pull_interval_ms = 60_000;
    (config, clock)
}

/// Checks that `n` of the logged lines contain `text`.
fn assert_logged(lines: &Lines, text: &str, n: usize) {
    let all = lines.lock().unwrap().clone();
    assert_eq!(logged(lines, None, text).len(), n, "{text}: {all:?}");
}

/// The stored rows of cycle `cycle`, as (point, visitNum).
fn stored_rows(fake: &FakeConsole, cycle: u64) -> Vec<(String, u64)> {
    fake.stored()
        .iter()
        .filter(|row| row["statisticsCycleTime"] == json!(cycle))
        .map(|row| {
            (
                row["point"].as_str().unwrap().to_string(),
                row["visitNum"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_null_version_applies_the_set_and_every_edit_within_one_pull_interval() {
    let fake = FakeConsole::start();
    fake.set_app_null_version(GROUP, APP, json!([{"point": "a", "visitThreshold": 3}]));
    let (config, lines) = logging(&fake);
    let (table, agent) = start(config);
    wait_until(SECONDS, "a in force", || threshold(&table, "a") == Some(3));
    let status = agent.status();
    assert_eq!(status.version, -1, "{status:?}");
    assert!(
        status.last_pull_ok && status.last_error.is_empty(),
        "{status:?}"
    );

    // The console's version stays null through the edit.
    fake.set_app_null_version(GROUP, APP, json!([{"point": "a", "visitThreshold": 7}]));
    let edited = Instant::now();
    wait_until(SECONDS, "the edit", || threshold(&table, "a") == Some(7));
    assert!(edited.elapsed() < Duration::from_millis(100 + 300 + 200));
    // Pulls go on with -1 (any number differs from null) and the same set
    // is not applied again: one line per set.
    std::thread::sleep(Duration::from_millis(500));
    let pulls = fake.pulls();
    assert!(pulls.len() >= 6, "{}", pulls.len());
    assert_eq!(pulls.last().unwrap()["version"], json!(-1));
    assert_logged(&lines, "SDS strategies version null", 2);
    stop_clean(agent, &fake);
}

#[test]
fn null_strategies_are_the_empty_set() {
    let (fake, table, agent) = applied(json!([
        {"point": "a", "visitThreshold": 3, "returnValueStr": "x"}
    ]));
    assert_eq!(threshold(&table, "a"), Some(3));

    // The last strategy deleted: the console answers "strategies": null.
    fake.set_app(GROUP, APP, json!([]));
    let status = status_until(&agent, "version 2", |s| s.version == 2);
    assert!(
        status.last_pull_ok && status.last_error.is_empty(),
        "{status:?}"
    );
    assert_eq!(threshold(&table, "a"), None);
    assert_eq!(agent.return_value("a"), None);
    stop_clean(agent, &fake);
}

#[test]
fn an_upload_that_timed_out_on_a_frozen_console_is_stored_once() {
    let fake = FakeConsole::serving(json!([{"point": "api", "visitThreshold": 100}]));
    let (config, clock) = by_the_minute(fake.url());
    let (table, agent) = start(config);
    status_until(&agent, "the first pull", |s| s.last_pull_ok);
    visit(&table, "api", C0 + 2_000, 0, Outcome::Ok);

    fake.freeze();
    clock.set(C0 + 15_000);
    let status = status_until(&agent, "a timed-out upload", |s| s.upload_failures == 1);
    // Later in the same cycle: still not sent again.
    for at in [16_500, 18_000, 19_500] {
        clock.set(C0 + at);
        std::thread::sleep(Duration::from_millis(400));
    }
    fake.thaw();
    wait_until(SECONDS, "the queued upload processed", || {
        !stored_rows(&fake, C0 + 10_000).is_empty()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(stored_rows(&fake, C0 + 10_000), [("api".to_string(), 1)]);
    assert_eq!(fake.uploads().len(), 1);
    assert_eq!(agent.status().upload_failures, 1);
    assert!(
        status
            .last_error
            .ends_with("(the console may have received it: not sent again)"),
        "{status:?}"
    );
    stop_clean(agent, &fake);
}

#[test]
fn an_upload_refused_before_it_was_sent_is_retried_within_its_cycle() {
    let gone = FakeConsole::start();
    let port = gone.port;
    let url = gone.url();
    drop(gone);
    let (config, clock) = by_the_minute(url);
    let (table, agent) = start(config);
    visit(&table, "api", C0 + 2_000, 0, Outcome::Ok);
    clock.set(C0 + 15_000);
    let status = status_until(&agent, "a refused upload", |s| s.upload_failures == 1);
    assert!(!status.last_error.contains("not sent again"), "{status:?}");

    let fake = FakeConsole::start_on(port);
    fake.set_app(GROUP, APP, json!([]));
    clock.set(C0 + 16_500);
    status_until(&agent, "the retry", |s| s.uploads == 1);
    assert_eq!(stored_rows(&fake, C0 + 10_000), [("api".to_string(), 1)]);
    stop_clean(agent, &fake);
}

/// An agent by the minute whose first upload (cycle C0) listed the points
/// "a" and "b" on its console.
fn a_and_b_listed() -> (FakeConsole, Arc<ManualClock>, Arc<AnyTable>, Agent) {
    let fake = FakeConsole::serving(json!([]));
    let (config, clock) = by_the_minute(fake.url());
    let (table, agent) = start(config);
    visit(&table, "a", C0 + 2_000, 0, Outcome::Ok);
    visit(&table, "b", C0 + 2_000, 0, Outcome::Ok);
    clock.set(C0 + 15_000);
    status_until(&agent, "upload 1", |s| s.uploads == 1);
    assert_eq!(fake.point_list(GROUP, APP), ["a", "b"]);
    (fake, clock, table, agent)
}

#[test]
fn points_without_visits_are_uploaded_with_zeros_and_stay_in_the_point_list() {
    let (fake, clock, table, agent) = a_and_b_listed();

    // Next cycle only "a" is visited: "b" goes with zeros and stays listed.
    visit(&table, "a", C0 + 16_000, 0, Outcome::Ok);
    clock.set(C0 + 25_000);
    status_until(&agent, "upload 2", |s| s.uploads == 2);
    let uploads = fake.uploads();
    assert_eq!(
        uploads[1]["pointInfoMap"]["b"],
        json!({"point": "b", "visitNum": 0, "exceptionNum": 0, "timeoutNum": 0,
               "downgradeNum": 0, "concurrentNum": 0})
    );
    assert_eq!(fake.point_list(GROUP, APP), ["a", "b"]);
    assert_eq!(stored_rows(&fake, C0 + 20_000), [("a".to_string(), 1)]);
    stop_clean(agent, &fake);
}

#[test]
fn a_point_the_console_dropped_from_its_list_is_not_listed_again() {
    // The console asks a filter of the names it has seen since it started
    // before it lists one (PointDictServiceImpl.checkExist), and deleting a
    // name does not take it out of the filter: two instances of one app with
    // different points delete each other's names for good (measured on the
    // shipped console; the rows are stored all the same).
    let (fake, clock, table, agent) = a_and_b_listed();
    let (other_config, other_clock) = by_the_minute(fake.url());
    let (other_table, other) = start(other_config);

    visit(&other_table, "a", C0 + 2_000, 0, Outcome::Ok);
    other_clock.set(C0 + 15_000);
    status_until(&other, "the other's upload", |s| s.uploads == 1);
    assert_eq!(fake.point_list(GROUP, APP), ["a"]);

    visit(&table, "b", C0 + 16_000, 0, Outcome::Ok);
    clock.set(C0 + 25_000);
    status_until(&agent, "upload 2", |s| s.uploads == 2);
    assert_eq!(stored_rows(&fake, C0 + 20_000), [("b".to_string(), 1)]);
    assert_eq!(fake.point_list(GROUP, APP), ["a"]);
    stop_clean(other, &fake);
    stop_clean(agent, &fake);
}

#[test]
fn a_name_the_console_cannot_store_is_left_out_and_named_once() {
    let fake = FakeConsole::serving(json!([]));
    let (mut config, clock) = by_the_minute(fake.url());
    let lines = log_lines(&mut config);
    let (table, agent) = start(config);
    let longest = "m".repeat(164);
    let too_long = "x".repeat(165);
    for name in ["orders-create", longest.as_str(), too_long.as_str()] {
        visit(&table, name, C0 + 2_000, 0, Outcome::Ok);
    }
    clock.set(C0 + 15_000);
    let status = status_until(&agent, "upload 1", |s| s.uploads == 1);
    assert_eq!(status.points_left_out, 1);
    let warning = format!(
        "SDS statistics leave out point \"{too_long}\": the console stores names of at most 164 \
         characters (its forms manage letters, digits and '-')"
    );
    assert_eq!(status.last_error, warning);
    let mut rows = stored_rows(&fake, C0 + 10_000);
    rows.sort();
    assert_eq!(
        rows,
        [(longest.clone(), 1), ("orders-create".to_string(), 1)]
    );

    visit(&table, too_long.as_str(), C0 + 12_000, 0, Outcome::Ok);
    clock.set(C0 + 25_000);
    status_until(&agent, "upload 2", |s| s.uploads == 2);
    assert_logged(&lines, "leave out point", 1);
    assert!(fake.uploads()[1]["pointInfoMap"].get(&too_long).is_none());
    stop_clean(agent, &fake);
}

/// Each object of `list` alone, as `Strategy::from_json` judges it.
fn verdicts(objects: &[&str]) -> Vec<Result<Strategy, String>> {
    objects
        .iter()
        .map(|text| Strategy::from_json(text).map_err(|e| e.to_string()))
        .collect()
}

#[test]
fn console_strategies_get_the_cores_verdict_one_by_one() {
    let objects = [
        r#"{"point": "big", "visitThreshold": 1e400}"#,
        r#"{"point": "tiny", "visitThreshold": 1e-400}"#,
        r#"{"point": "long", "visitThreshold": 1.0000000000000000001}"#,
        r#"{"point": "low", "visitThreshold": -9223372036854775809}"#,
        r#"{"point": "dup", "visitThreshold": 1, "visitThreshold": 2}"#,
        r#"{"point": "whole", "visitThreshold": 1e3}"#,
        r#"{"point": "lone\ud800", "visitThreshold": 3}"#,
        r#"{"point": "good", "visitThreshold": 4, "exceptionThreshold": null}"#,
    ];
    let names = ["big", "tiny", "long", "low", "dup", "whole"];
    let fake = FakeConsole::start();
    fake.set_app_json(GROUP, APP, &format!("[{}]", objects.join(", ")));
    let (config, lines) = logging(&fake);
    let (table, agent) = start(config);
    let status = status_until(&agent, "version 1", |s| s.version == 1);
    assert!(status.last_pull_ok, "{status:?}");
    assert_eq!(threshold(&table, "good"), Some(4));
    let expected = verdicts(&objects);
    for (name, verdict) in names.iter().zip(&expected) {
        assert_eq!(
            strategy(&table, name),
            verdict.clone().ok(),
            "{name}: {verdict:?}"
        );
        if let Err(message) = verdict {
            let line = format!("SDS strategy refused: point \"{name}\": {message}");
            assert_logged(&lines, &line, 1);
        }
    }
    assert_eq!(threshold(&table, "whole"), Some(1000));
    // The lone surrogate's strategy is refused alone, with the core's word.
    let lone = expected[6].clone().unwrap_err();
    assert_logged(&lines, &format!("SDS strategy refused: {lone}"), 1);
    stop_clean(agent, &fake);
}

#[test]
fn a_point_named_three_times_takes_its_last_valid_entry_whole() {
    let (fake, table, agent) = applied(json!([
        {"point": "d", "visitThreshold": 9, "returnValueStr": "zero"}
    ]));
    fake.set_app(
        GROUP,
        APP,
        json!([
            {"point": "d", "visitThreshold": 1, "returnValueStr": "one"},
            {"point": "d", "visitThreshold": 2, "returnValueStr": "two"},
            {"point": "d", "visitThreshold": "3", "returnValueStr": "three"},
        ]),
    );
    let status = status_until(&agent, "version 2", |s| s.version == 2);
    assert_eq!(threshold(&table, "d"), Some(2));
    assert_eq!(agent.return_value("d").as_deref(), Some("two"));
    assert_eq!(
        status.last_error,
        "SDS strategy refused: point \"d\": invalid strategy: visitThreshold must be an integer"
    );

    // Only invalid entries: the point keeps what it had, both together.
    fake.set_app(
        GROUP,
        APP,
        json!([{"point": "d", "visitThreshold": "x", "returnValueStr": "four"}]),
    );
    status_until(&agent, "version 3", |s| s.version == 3);
    assert_eq!(threshold(&table, "d"), Some(2));
    assert_eq!(agent.return_value("d").as_deref(), Some("two"));
    agent.stop();
}

/// Strategies of visitThreshold 5 for `c0`, `c1`, ... (`n` of them).
fn fives(n: usize) -> Value {
    (0..n)
        .map(|i| json!({"point": format!("c{i}"), "visitThreshold": 5}))
        .collect()
}

#[test]
fn a_console_set_larger_than_its_share_never_takes_the_applications_slots() {
    let fake = FakeConsole::serving(fives(20));
    let (config, lines) = logging(&fake);
    // 16 slots: the console may create points while the table holds 8.
    let table = Arc::new(AnyTable::private(16).unwrap());
    visit(&table, "app-1", C0, 0, Outcome::Ok);
    visit(&table, "c12", C0, 0, Outcome::Ok);
    let agent = Agent::start(table.clone(), config).unwrap();
    let status = status_until(&agent, "version 1", |s| s.version == 1);
    assert_eq!(status.strategies_waiting, 13, "{status:?}");
    assert_eq!(threshold(&table, "c12"), Some(5));
    let created: Vec<String> = (0..20)
        .map(|i| format!("c{i}"))
        .filter(|name| threshold(&table, name).is_some())
        .collect();
    assert_eq!(created, ["c0", "c1", "c2", "c3", "c4", "c5", "c12"]);
    // The application still has the other half of the table.
    for i in 0..8 {
        visit(&table, &format!("app-new-{i}"), C0, 0, Outcome::Ok);
    }
    // One warning for the set, not one per strategy or per pull.
    std::thread::sleep(Duration::from_millis(500));
    assert_logged(&lines, "wait for room", 1);
    assert_eq!(logged(&lines, Some(Level::Warn), "").len(), 1);
    agent.stop();
}

#[test]
fn a_waiting_strategy_applies_once_the_application_creates_its_point() {
    let fake = FakeConsole::serving(fives(6));
    let config = config(fake.url());
    let table = Arc::new(AnyTable::private(8).unwrap());
    let agent = Agent::start(table.clone(), config).unwrap();
    let status = status_until(&agent, "version 1", |s| s.version == 1);
    assert_eq!(status.strategies_waiting, 2);
    assert_eq!(threshold(&table, "c5"), None);
    visit(&table, "c5", C0, 0, Outcome::Ok);
    status_until(&agent, "c5 applied", |s| s.strategies_waiting == 1);
    assert_eq!(threshold(&table, "c5"), Some(5));
    agent.stop();
}

#[test]
fn a_huge_pull_interval_and_timeout_saturate() {
    let fake = FakeConsole::serving(json!([{"point": "a", "visitThreshold": 3}]));
    let mut config = config(fake.url());
    config.pull_interval_ms = u64::MAX;
    config.timeout_ms = u64::MAX;
    let (_table, agent) = start(config);
    status_until(&agent, "version 1", |s| s.version == 1);
    std::thread::sleep(Duration::from_millis(1_000));
    assert_eq!(fake.pulls().len(), 1);
    assert!(agent.is_running());
    agent.stop();
}
