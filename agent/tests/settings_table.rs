//! conformance/settings.json, the agent's cases: the verdict of
//! `AgentConfig::from_settings` and `Agent::start`, as every binding must
//! give it.

use std::path::PathBuf;
use std::sync::Arc;

use sds_agent::{Agent, AgentConfig};
use sds_conformance::run_config_cases;
use sds_shm::AnyTable;
use serde_json::{json, Value};

fn fields(config: &AgentConfig) -> Value {
    let path = |p: &Option<PathBuf>| json!(p.as_ref().map(|p| p.display().to_string()));
    json!({
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
    })
}

#[test]
fn every_agent_case_gets_its_verdict() {
    // Each case starts (and stops) its agent on a table of its own.
    let ran = run_config_cases("agent", AgentConfig::from_settings, fields, |config| {
        Agent::start(Arc::new(AnyTable::private(16).unwrap()), config).map(|agent| agent.stop())
    });
    assert!(ran >= 20, "{ran} cases");
}
