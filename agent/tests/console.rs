//! The agent against the fake console (tools/fake-sds-admin.py): strategies
//! pulled and applied, statistics uploaded, every failure mode, failover.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{
    applied, config, log_lines, logged, manual_clock, start, start_error, status_until, stop_clean,
    strategy, the_upload, visit, wait_until, FakeConsole, APP, C0, GROUP, SECONDS,
};
use sds_agent::{Agent, AgentConfig, Level};
use sds_core::{Flags, Outcome};
use sds_shm::AnyTable;
use serde_json::{json, Value};

#[test]
fn pulled_strategies_are_in_force_within_one_interval_and_missing_points_lose_theirs() {
    let (fake, table, agent) = applied(json!([
        {"point": "a", "visitThreshold": 1, "returnValueStr": "busy",
         "concurrentThreshold": null, "downgradeRate": null},
        {"point": "b", "visitThreshold": 5},
    ]));
    assert_eq!(strategy(&table, "a").unwrap().visit_threshold, 1);
    assert_eq!(strategy(&table, "a").unwrap().downgrade_rate, 100);
    assert_eq!(strategy(&table, "b").unwrap().visit_threshold, 5);
    assert_eq!(agent.return_value("a").as_deref(), Some("busy"));
    assert_eq!(agent.return_value("b"), None);
    let now = sds_clock::now_ms();
    assert!(!visit(&table, "a", now, 0, Outcome::Ok));
    assert!(visit(&table, "a", now, 0, Outcome::Ok));

    // Version 2 drops "a" and changes "b".
    fake.set_app(GROUP, APP, json!([{"point": "b", "visitThreshold": 7}]));
    let before = std::time::Instant::now();
    let status = status_until(&agent, "version 2", |s| s.version == 2);
    assert!(before.elapsed() < Duration::from_millis(100 + 300 + 200));
    assert_eq!(strategy(&table, "a"), None);
    assert_eq!(strategy(&table, "b").unwrap().visit_threshold, 7);
    assert_eq!(agent.return_value("a"), None);
    assert!(!visit(&table, "a", now, 0, Outcome::Ok));
    assert!(
        status.last_pull_ok && status.last_error.is_empty(),
        "{status:?}"
    );

    wait_until(SECONDS, "a pull at version 2", || {
        fake.pulls().last().unwrap()["version"] == json!(2)
    });
    let pulls = fake.pulls();
    assert_eq!(
        pulls[0],
        json!({"appGroupName": GROUP, "appName": APP, "ip": "10.1.2.3",
               "hostname": "test-host", "version": 0, "pointList": []})
    );
    let last = pulls.last().unwrap();
    assert_eq!(last["version"], json!(2));
    let mut points: Vec<&str> = last["pointList"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    points.sort();
    assert_eq!(points, ["a", "b"]);
    stop_clean(agent, &fake);
}

#[test]
fn an_invalid_strategy_is_refused_alone_and_its_point_keeps_the_old_one() {
    let fake = FakeConsole::serving(json!([
        {"point": "a", "visitThreshold": 5, "returnValueStr": "old"}
    ]));
    let mut config = config(fake.url());
    let lines = log_lines(&mut config);
    let (table, agent) = start(config);
    status_until(&agent, "version 1", |s| s.version == 1);

    fake.set_app(
        GROUP,
        APP,
        json!([
            {"point": "a", "visitThreshold": 9, "delayTime": 5, "returnValueStr": "new"},
            {"point": "b", "visitThreshold": "10"},
            {"point": "c", "visitThreshold": 3},
            {"visitThreshold": 3},
        ]),
    );
    let status = status_until(&agent, "version 2", |s| s.version == 2);
    // "a": the core refuses a 5 ms delay; the console's strategy applies
    // without it, as the reference client does.
    let a = strategy(&table, "a").unwrap();
    assert_eq!((a.visit_threshold, a.delay_time), (9, -1));
    assert_eq!(agent.return_value("a").as_deref(), Some("new"));
    assert_eq!(strategy(&table, "b"), None);
    assert_eq!(strategy(&table, "c").unwrap().visit_threshold, 3);
    assert!(status.last_pull_ok);
    let warnings = logged(&lines, Some(Level::Warn), "");
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert_eq!(
        warnings[0],
        "SDS strategy of point \"a\" applied without its delay: invalid strategy: \
         delayTime must be >= 10000 ms (or negative: no delay)"
    );
    assert_eq!(
        warnings[1],
        "SDS strategy refused: point \"b\": invalid strategy: visitThreshold must be an integer"
    );
    assert_eq!(
        warnings[2],
        "SDS strategy refused: a strategy without a \"point\" name"
    );
    assert_eq!(status.last_error, warnings[2]);
    // A refused set is not asked for again: the next pull holds version 2.
    wait_until(SECONDS, "a pull at version 2", || {
        fake.pulls().last().unwrap()["version"] == json!(2)
    });
    stop_clean(agent, &fake);
}

/// The numbers of the last whole cycle as the core gives them.
fn cycle_json(table: &AnyTable, name: &str, now: u64) -> Value {
    let cycle = table
        .with_points(|t| {
            let id = t.lookup(name.as_bytes()).unwrap().unwrap();
            t.point(id).unwrap().stats(now).last_cycle
        })
        .unwrap();
    json!({"point": name, "visitNum": cycle.visit_num, "exceptionNum": cycle.exception_num,
           "timeoutNum": cycle.timeout_num, "downgradeNum": cycle.downgrade_num,
           "concurrentNum": cycle.concurrent_num})
}

#[test]
fn the_upload_carries_the_cores_last_whole_cycle_at_second_five() {
    let fake = FakeConsole::serving(json!([
        {"point": "api", "visitThreshold": 4, "timeoutThreshold": 50}
    ]));
    let mut config = config(fake.url());
    // Past second 5 of cycle C0: the first upload is due at C0 + 15 s.
    let clock = manual_clock(&mut config, C0 + 6_000);
    config.pull_interval_ms = 5_000;
    let (table, agent) = start(config);
    status_until(&agent, "version 1", |s| s.version == 1);

    // Cycle C0: "api" 6 visits (2 downgraded), 1 error, 1 slow; 2 in flight
    // at once; "db" 1 visit; "idle" only visits in the cycle before.
    visit(&table, "idle", C0 - 3_000, 0, Outcome::Ok);
    let entries: Vec<bool> = (0..6)
        .map(|i| {
            let outcome = if i == 1 { Outcome::Error } else { Outcome::Ok };
            let took = if i == 2 { 80 } else { 1 };
            visit(&table, "api", C0 + 2_000 + i * 10, took, outcome)
        })
        .collect();
    assert_eq!(entries, [false, false, false, false, true, true]);
    table
        .with_points(|t| {
            let id = t.insert(b"api").unwrap();
            let point = t.point(id).unwrap();
            let one = point.enter(C0 + 3_000, Flags::NONE);
            let two = point.enter(C0 + 3_001, Flags::NONE);
            point.exit(&one, C0 + 3_002, Outcome::Ok);
            point.exit(&two, C0 + 3_002, Outcome::Ok);
        })
        .unwrap();
    visit(&table, "db", C0 + 9_999, 0, Outcome::Ok);

    // Nothing before second 5 of the next cycle.
    clock.set(C0 + 14_999);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(fake.uploads().len(), 0);
    clock.set(C0 + 15_000);
    let status = status_until(&agent, "an upload", |s| s.uploads == 1);
    assert!(status.last_upload_ok && status.is_reporter);
    assert_eq!(status.last_upload_ms, C0 + 15_000);

    let uploads = fake.uploads();
    assert_eq!(uploads.len(), 1);
    let now = C0 + 15_000;
    assert_eq!(
        uploads[0],
        json!({"appGroupName": GROUP, "appName": APP, "ip": "10.1.2.3", "hostname": "test-host",
               "statisticsCycleTime": C0 + 10_000,
               "pointInfoMap": {"api": cycle_json(&table, "api", now),
                                "db": cycle_json(&table, "db", now),
                                "idle": cycle_json(&table, "idle", now)}})
    );
    // Every known point goes in, zero visits too (the console deletes a
    // point missing from an upload from the app's point list).
    assert_eq!(
        cycle_json(&table, "idle", now),
        json!({"point": "idle", "visitNum": 0, "exceptionNum": 0, "timeoutNum": 0,
               "downgradeNum": 0, "concurrentNum": 0})
    );
    assert_eq!(fake.point_list(GROUP, APP), ["api", "db"]);
    // The core's numbers are the traffic above.
    assert_eq!(
        cycle_json(&table, "api", now),
        json!({"point": "api", "visitNum": 8, "exceptionNum": 1, "timeoutNum": 1,
               "downgradeNum": 4, "concurrentNum": 2})
    );
    // One upload per cycle: nothing more until the next second 5.
    clock.set(C0 + 24_000);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(fake.uploads().len(), 1);
    stop_clean(agent, &fake);
}

/// One failure mode of both endpoints: the strategies stay in force, the
/// status says so. The upload reached the console (it may have stored it),
/// so that cycle is not sent again; the next one is delivered.
fn survives(mode: &str, expected_error: &str) {
    let fake = FakeConsole::serving(json!([{"point": "api", "visitThreshold": 1}]));
    let mut config = config(fake.url());
    let clock = manual_clock(&mut config, C0 + 1_000);
    config.pull_interval_ms = 1_000;
    let (table, agent) = start(config);
    status_until(&agent, "version 1", |s| s.version == 1);
    for i in 0..3 {
        visit(&table, "api", C0 + 2_000 + i, 0, Outcome::Ok);
    }

    fake.mode(mode, mode);
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 50}]));
    clock.set(C0 + 15_000);
    let status = status_until(&agent, "a failed pull and upload", |s| {
        s.pull_failures >= 1 && s.upload_failures >= 1
    });
    assert!(!status.last_pull_ok && !status.last_upload_ok, "{status:?}");
    assert_eq!(status.version, 1);
    let url = format!("{}/sds/heartbeat/add: ", fake.url());
    assert!(
        status
            .last_error
            .starts_with(&format!("SDS statistics upload failed: {url}"))
            && status.last_error.contains(expected_error),
        "{mode}: {:?} does not contain {expected_error:?}",
        status.last_error
    );
    // Still deciding with version 1.
    assert!(!visit(&table, "api", C0 + 15_000, 0, Outcome::Ok));
    assert!(visit(&table, "api", C0 + 15_001, 0, Outcome::Ok));

    assert!(
        status
            .last_error
            .ends_with("(the console may have received it: not sent again)"),
        "{status:?}"
    );

    fake.mode("ok", "ok");
    fake.reset();
    clock.set(C0 + 17_000);
    let status = status_until(&agent, "recovery", |s| s.version == 2);
    assert!(status.last_pull_ok, "{status:?}");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(fake.uploads().len(), 0, "the cycle is not sent again");
    clock.set(C0 + 25_000);
    let upload = the_upload(&agent, &fake, C0 + 20_000);
    assert_eq!(
        upload["pointInfoMap"]["api"],
        json!({"point": "api", "visitNum": 2, "exceptionNum": 0, "timeoutNum": 0,
               "downgradeNum": 1, "concurrentNum": 1})
    );
    stop_clean(agent, &fake);
}

/// One test per failure mode of the fake, each with the error it gives.
macro_rules! survives {
    ($($test:ident: $mode:literal, $error:literal;)*) => {
        $(
            #[test]
            fn $test() {
                survives($mode, $error);
            }
        )*
    };
}

survives! {
    survives_an_unknown_app: "unknown_app", "the console answered: app group/app does not exist";
    survives_http_500: "http_500", "HTTP status 500";
    survives_malformed_json: "malformed", "malformed response: EOF while parsing";
    survives_wrong_types: "wrong_types", "malformed response: \"errorMsg\" is not a string";
    survives_a_10_mb_body: "huge", "response body longer than 4194304 bytes";
    survives_a_server_that_never_answers: "hang", "timeout";
    survives_a_closed_connection: "close", "io: ";
}

#[test]
fn fails_over_to_the_next_server() {
    let fake = FakeConsole::serving(json!([{"point": "a", "visitThreshold": 2}]));
    // A listener that never accepts: requests to it time out.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let config = config(format!("{silent_url},{}", fake.url()));
    // The list is shuffled: start until the silent server comes first.
    let table = Arc::new(AnyTable::private(16).unwrap());
    let agent = (0..100)
        .map(|_| Agent::start(table.clone(), config.clone()).unwrap())
        .find(|agent| agent.status().server == silent_url)
        .expect("the silent server comes first at least once in 100 shuffles");
    let status = status_until(&agent, "version 1", |s| s.version == 1);
    assert_eq!(status.server, fake.url());
    assert_eq!(status.pull_failures, 1);
    assert!(status.last_error.contains(&silent_url), "{status:?}");
    assert_eq!(strategy(&table, "a").unwrap().visit_threshold, 2);
    stop_clean(agent, &fake);
}

#[test]
fn start_refuses_a_bad_config() {
    let mut config = AgentConfig::new("http://127.0.0.1:1", "g", "a");
    config.pull_interval_ms = 0;
    assert_eq!(
        start_error(config),
        "cannot start the SDS agent: the pull interval must be above 0 ms"
    );
    assert_eq!(
        start_error(AgentConfig::new("ftp://x", "g", "a")),
        "cannot start the SDS agent: server \"ftp://x\" is not an http:// or https:// URL"
    );
}
