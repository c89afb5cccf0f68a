//! conformance/settings.json, the cluster's cases: the verdict of
//! `Config::from_settings` and `Cluster::start`, as every binding must give
//! it.

use std::sync::Arc;

use sds_cluster::{Cluster, Config};
use sds_conformance::run_settings_cases;
use sds_shm::AnyTable;
use serde_json::{json, Map, Value};

fn fields(config: &Config) -> Map<String, Value> {
    let Value::Object(map) = json!({
        "urls": config.urls,
        "points": config.points,
        "redis_cluster": config.redis_cluster,
        "sync_ms": config.sync_ms,
        "timeout_ms": config.timeout_ms,
        "max_backoff_ms": config.max_backoff_ms,
        "key_prefix": config.key_prefix,
        "tls_ca_file": config.tls_ca_file.as_ref().map(|p| p.display().to_string()),
    }) else {
        unreachable!()
    };
    map
}

#[test]
fn every_cluster_case_gets_its_verdict() {
    let ran = run_settings_cases("cluster", str::to_string, |pairs| {
        let config = Config::from_settings(pairs.to_vec()).map_err(|e| e.to_string())?;
        let shown = fields(&config);
        let table = Arc::new(AnyTable::private(16).unwrap());
        let cluster = Cluster::start(table, config).map_err(|e| e.to_string())?;
        cluster.stop();
        Ok(shown)
    });
    assert!(ran >= 10, "{ran} cases");
}
