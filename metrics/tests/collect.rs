//! What a collection shows of a point table and the process's keyed limits,
//! driven at explicit times.

use std::sync::Arc;

use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
use sds_core::{Flags, Outcome, Points, Strategy, Value};
use sds_metrics::{exposition, register_keyed, Collected, Exporter, Format, Sources};
use sds_shm::{AnyKeys, AnyTable, Options};
use sds_testkit::TempDir;

const T0: u64 = 1_700_000_000_000;

fn value(families: &[Collected], name: &str, labels: &[&str]) -> Option<f64> {
    let family = families.iter().find(|c| c.family.name == name)?;
    family
        .samples
        .iter()
        .find(|s| {
            s.labels
                .iter()
                .map(String::as_str)
                .eq(labels.iter().copied())
        })
        .map(|s| s.value)
}

/// What a collection reads: the point table `table`, nothing else.
fn table_only(table: &AnyTable) -> Sources<'_> {
    Sources {
        table: Some(table),
        ..Sources::default()
    }
}

/// `n` requests a second for `seconds` seconds at `name` (visitThreshold
/// 5 in 10 s), every third one failing: returns (visits, downgrades, exceptions).
fn drive(points: &dyn Points, name: &[u8], seconds: u64, n: u64) -> (u64, u64, u64) {
    let (mut downgrades, mut exceptions) = (0, 0);
    let id = points.insert(name).unwrap();
    let point = points.point(id).unwrap();
    for s in 0..seconds {
        for i in 0..n {
            let now = T0 + s * 1000 + i;
            let entry = point.enter(now, Flags::NONE);
            if entry.downgraded() {
                downgrades += 1;
            }
            let failed = i % 3 == 0;
            exceptions += u64::from(failed);
            let outcome = if failed { Outcome::Error } else { Outcome::Ok };
            point.exit(&entry, now + 1, outcome);
        }
    }
    (seconds * n, downgrades, exceptions)
}

#[test]
fn point_counters_hold_every_request_across_many_laps_of_the_window() {
    let table = AnyTable::private(8).unwrap();
    let strategy = Strategy::from_json(r#"{"visitThreshold":5}"#).unwrap();
    let (visits, downgrades, exceptions) = table
        .with_points(|points| {
            points.set_strategy(b"api", &strategy).unwrap();
            drive(points, b"api", 95, 4)
        })
        .unwrap();
    assert_eq!(visits, 380);
    assert!(downgrades > 0 && downgrades < visits);
    let exporter = Exporter::new();
    let sources = table_only(&table);
    let got = exporter.collect(&sources, T0 + 95_000);
    let api = ["private", "api"];
    assert_eq!(value(&got, "sds_point_requests", &api), Some(visits as f64));
    assert_eq!(
        value(&got, "sds_point_downgrades", &["private", "api", "VISIT"]),
        Some(downgrades as f64)
    );
    assert_eq!(
        value(
            &got,
            "sds_point_downgrades",
            &["private", "api", "CONCURRENT"]
        ),
        Some(0.0)
    );
    assert_eq!(
        value(&got, "sds_point_exceptions", &api),
        Some(exceptions as f64)
    );
    assert_eq!(value(&got, "sds_point_timeouts", &api), Some(0.0));
    assert_eq!(value(&got, "sds_point_in_flight", &api), Some(0.0));
    assert_eq!(value(&got, "sds_table_points", &["private"]), Some(1.0));
    assert_eq!(
        value(&got, "sds_table_points_capacity", &["private"]),
        Some(8.0)
    );
    // No agent or cluster was given: their families show nothing.
    assert!(got
        .iter()
        .filter(
            |c| c.family.name.starts_with("sds_agent") || c.family.name.starts_with("sds_cluster")
        )
        .all(|c| c.samples.is_empty()));
}

#[test]
fn in_flight_and_its_cycle_maximum_are_gauges() {
    let table = AnyTable::private(4).unwrap();
    let entries = table
        .with_points(|points| {
            let point = points.point(points.insert(b"db").unwrap()).unwrap();
            let entries: Vec<_> = (0..3).map(|_| point.enter(T0, Flags::NONE)).collect();
            point.exit(&entries[0], T0 + 10_000, Outcome::Ok);
            entries
        })
        .unwrap();
    let sources = table_only(&table);
    let got = Exporter::new().collect(&sources, T0 + 10_000);
    // Cycles are aligned to 10 s: T0 (…000 000 ms) starts one.
    let db = ["private", "db"];
    assert_eq!(value(&got, "sds_point_in_flight", &db), Some(2.0));
    assert_eq!(value(&got, "sds_point_in_flight_max", &db), Some(3.0));
    drop(entries);
}

#[test]
fn an_adaptive_point_shows_its_limit_and_others_show_none() {
    let table = AnyTable::private(4).unwrap();
    table
        .with_points(|points| {
            let point = points.point(points.insert(b"api").unwrap()).unwrap();
            let mut s = Strategy::DEFAULT;
            s.adaptive_concurrency = 1; // AIMD, initial limit 20
            point.set_strategy(Some(&s)).unwrap();
            let entries: Vec<_> = (0..20).map(|_| point.enter(T0, Flags::NONE)).collect();
            for e in &entries {
                point.exit(e, T0 + 5, Outcome::Ok);
            }
            points.insert(b"plain").unwrap();
        })
        .unwrap();
    let sources = table_only(&table);
    let got = Exporter::new().collect(&sources, T0 + 10);
    // 20 in flight ending one by one grow AIMD's 20 by 7 (adaptive README).
    let limit = |point| value(&got, "sds_point_adaptive_limit", &["private", point]);
    assert_eq!(limit("api"), Some(27.0));
    assert_eq!(limit("plain"), None);
}

#[test]
fn a_shared_table_shows_the_counts_of_every_handle_once() {
    let dir = TempDir::new("metrics-shared");
    let one = AnyTable::shared(dir.join("host"), 16, &Options::new()).unwrap();
    let two = AnyTable::shared(dir.join("host"), 16, &Options::new()).unwrap();
    for table in [&one, &two] {
        table
            .with_points(|points| drive(points, b"pay", 3, 2))
            .unwrap();
    }
    let sources = Sources {
        table: Some(&two),
        ..Sources::default()
    };
    let got = Exporter::new().collect(&sources, T0 + 5_000);
    assert_eq!(
        value(&got, "sds_point_requests", &["host", "pay"]),
        Some(12.0)
    );
    let text = exposition(&Exporter::new(), &sources, T0 + 5_000, Format::Prometheus);
    assert!(
        text.contains("sds_point_requests_total{table=\"host\",point=\"pay\"} 12\n"),
        "{text}"
    );
}

#[test]
fn keyed_limits_listed_by_the_process_show_their_decisions() {
    let mut builder = KeyRuleBuilder::new(KeyRuleKind::FixedWindow);
    builder.set("limit", Value::Integer(2)).unwrap();
    builder.set("periodMs", Value::Integer(1000)).unwrap();
    let rule = builder.build().unwrap();
    let keys = Arc::new(AnyKeys::private(rule, 64).unwrap());
    register_keyed(&keys, "login-metrics-test".to_string());
    for i in 0..5u64 {
        keys.decide(b"alice", T0 + i, 1).unwrap();
    }
    keys.decide(b"bob", T0, 1).unwrap();
    let got = Exporter::new().collect(&Sources::default(), T0);
    let limit = "login-metrics-test";
    assert_eq!(
        value(&got, "sds_keyed_decisions", &[limit, "admitted"]),
        Some(3.0)
    );
    assert_eq!(
        value(&got, "sds_keyed_decisions", &[limit, "refused"]),
        Some(3.0)
    );
    assert_eq!(value(&got, "sds_keyed_keys", &[limit]), Some(2.0));
    assert_eq!(value(&got, "sds_keyed_keys_capacity", &[limit]), Some(64.0));
    assert_eq!(value(&got, "sds_keyed_evictions", &[limit]), Some(0.0));
    drop(keys);
    let got = Exporter::new().collect(&Sources::default(), T0);
    assert_eq!(
        value(&got, "sds_keyed_keys", &[limit]),
        None,
        "a dropped limit leaves"
    );
}

#[test]
fn the_text_formats_name_counters_as_each_expects() {
    let table = AnyTable::private(4).unwrap();
    table
        .with_points(|points| drive(points, "say \"hi\"\\\n".as_bytes(), 1, 1))
        .unwrap();
    let sources = table_only(&table);
    let exporter = Exporter::new();
    let prom = exposition(&exporter, &sources, T0, Format::Prometheus);
    assert!(
        prom.contains("# TYPE sds_point_requests_total counter\n"),
        "{prom}"
    );
    assert!(prom.contains("# TYPE sds_point_in_flight gauge\n"));
    assert!(
        prom.contains(r#"sds_point_requests_total{table="private",point="say \"hi\"\\\n"} 1"#),
        "{prom}"
    );
    assert!(!prom.contains("# EOF"));
    let om = exposition(&exporter, &sources, T0, Format::OpenMetrics);
    assert!(om.contains("# TYPE sds_point_requests counter\n"));
    assert!(om.contains("\nsds_point_requests_total{"));
    assert!(om.ends_with("# EOF\n"));
    // Every sample line is `name{labels} value` or `name value`.
    for line in prom.lines().filter(|l| !l.starts_with('#')) {
        let (_, v) = line.rsplit_once(' ').unwrap();
        v.parse::<f64>().unwrap();
    }
}
