//! conformance/settings.json, the cluster's cases: the verdict of
//! `Config::from_settings` and `Cluster::start`, as every binding must give
//! it.

use std::sync::Arc;

use sds_cluster::{Cluster, Config};
use sds_conformance::run_config_cases;
use sds_shm::AnyTable;
use serde_json::{json, Value};

fn fields(config: &Config) -> Value {
    json!({
        "urls": config.urls,
        "points": config.points,
        "redis_cluster": config.redis_cluster,
        "sync_ms": config.sync_ms,
        "timeout_ms": config.timeout_ms,
        "max_backoff_ms": config.max_backoff_ms,
        "key_prefix": config.key_prefix,
        "tls_ca_file": config.tls_ca_file.as_ref().map(|p| p.display().to_string()),
    })
}

#[test]
fn every_cluster_case_gets_its_verdict() {
    // Each case starts (and stops) its sync on a table of its own.
    let ran = run_config_cases("cluster", Config::from_settings, fields, |config| {
        Cluster::start(Arc::new(AnyTable::private(16).unwrap()), config)
            .map(|sync| drop(sync.stop()))
    });
    assert!(ran >= 10, "{ran} cases");
}
