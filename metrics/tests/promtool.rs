//! The Prometheus text passes `promtool check metrics` (Prometheus' own
//! linter: names, types, help, units), with a table, keyed limits, an agent
//! and a cluster sync all showing. (promtool reads the 0.0.4 text only: the
//! OpenMetrics text is checked by prometheus_client's OpenMetrics parser in
//! py/tests and by a Prometheus server scraping it.)

use std::sync::Arc;

use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
use sds_core::{Flags, Outcome, Strategy, Value};
use sds_metrics::{exposition, register_keyed, Exporter, Format, ServiceState, Sources};
use sds_shm::{AnyKeys, AnyTable};
use sds_testkit::promtool;

#[test]
fn promtool_finds_nothing_to_say_of_any_family() {
    let table = AnyTable::private(8).unwrap();
    table
        .with_points(|points| {
            let strategy = Strategy::from_json(r#"{"visitThreshold":1}"#).unwrap();
            points.set_strategy(b"orders", &strategy).unwrap();
            let point = points.point(points.insert(b"orders").unwrap()).unwrap();
            for i in 0..3 {
                let entry = point.enter(1_000 + i, Flags::NONE);
                point.exit(&entry, 1_001 + i, Outcome::Error);
            }
        })
        .unwrap();
    let mut rule = KeyRuleBuilder::new(KeyRuleKind::Rate);
    rule.set("limit", Value::Integer(5)).unwrap();
    rule.set("periodMs", Value::Integer(1000)).unwrap();
    let keys = Arc::new(AnyKeys::private(rule.build().unwrap(), 16).unwrap());
    register_keyed(&keys, "per-user".into());
    keys.decide(b"u1", 1_000, 1).unwrap();
    let sources = Sources {
        table: Some(&table),
        agent: Some(ServiceState {
            status: sds_agent::Status::default(),
            running: true,
        }),
        cluster: Some(ServiceState {
            status: sds_cluster::Status::default(),
            running: false,
        }),
    };
    let exporter = Exporter::new();
    for format in [Format::Prometheus, Format::OpenMetrics] {
        let text = exposition(&exporter, &sources, 2_000, format);
        for family in [
            "sds_point_downgrades",
            "sds_keyed_decisions",
            "sds_agent_up",
            "sds_cluster_lag_seconds",
        ] {
            assert!(
                text.contains(&format!("# TYPE {family}")),
                "{format:?} lacks {family}"
            );
        }
        if format == Format::Prometheus {
            assert_eq!(promtool(&text), "", "promtool's findings on\n{text}");
        }
    }
    // A broken exposition is caught: the check can fail.
    assert_ne!(promtool("# TYPE sds_x counter\nsds_x{a=\"1\"} one\n"), "");
}
