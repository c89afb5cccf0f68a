//! conformance/settings.json, the agent's cases: the verdict of
//! `AgentConfig::from_settings` and `Agent::start`, as every binding must
//! give it.

use std::sync::Arc;

use sds_agent::{Agent, AgentConfig};
use sds_conformance::run_settings_cases;
use sds_shm::AnyTable;
use serde_json::{json, Map, Value};

fn fields(config: &AgentConfig) -> Map<String, Value> {
    let path = |p: &Option<std::path::PathBuf>| json!(p.as_ref().map(|p| p.display().to_string()));
    let Value::Object(map) = json!({
        "servers": config.servers,
        "app_group": config.app_group,
        "app_name": config.app_name,
        "ip": config.ip,
        "hostname": config.hostname,
        "pull_interval_ms": config.pull_interval_ms,
        "timeout_ms": config.timeout_ms,
        "tls_ca_file": path(&config.tls_ca_file),
        "tls_cert_file": path(&config.tls_cert_file),
        "tls_key_file": path(&config.tls_key_file),
    }) else {
        unreachable!()
    };
    map
}

#[test]
fn every_agent_case_gets_its_verdict() {
    let ran = run_settings_cases("agent", str::to_string, |pairs| {
        let config = AgentConfig::from_settings(pairs.to_vec()).map_err(|e| e.to_string())?;
        let shown = fields(&config);
        let table = Arc::new(AnyTable::private(16).unwrap());
        let agent = Agent::start(table, config).map_err(|e| e.to_string())?;
        agent.stop();
        Ok(shown)
    });
    assert!(ran >= 20, "{ran} cases");
}
