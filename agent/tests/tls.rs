//! The agent against the fake console on HTTPS (tools/fake-sds-admin.py
//! --tls-cert/--tls-key, certificates from tools/test-pki.sh): trusted
//! through `tls_ca_file`, a certificate of another CA as a failure like a
//! console down, failover from it to a plain HTTP server, bad files refused
//! at start.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{status_until, strategy, visit, FakeConsole, TempDir, Tls};
use sds_agent::testing::ManualClock;
use sds_agent::{Agent, AgentConfig};
use sds_core::Outcome;
use sds_shm::AnyTable;
use serde_json::json;

const GROUP: &str = "group";
const APP: &str = "app";
/// A cycle start, so test times read as offsets into cycles.
const C0: u64 = 1_700_000_000_000;

fn config(servers: String, ca: Option<&Tls>) -> AgentConfig {
    let mut config = AgentConfig::new(servers, GROUP, APP);
    config.tls_ca_file = ca.map(|tls| tls.ca.clone());
    config.ip = Some("10.1.2.3".into());
    config.hostname = Some("test-host".into());
    config.pull_interval_ms = 100;
    config.timeout_ms = 1_000;
    config
}

fn visit_threshold(table: &AnyTable, name: &str) -> Option<i64> {
    strategy(table, name).map(|s| s.visit_threshold)
}

#[test]
fn over_https_with_the_ca_file_strategies_are_pulled_and_statistics_uploaded() {
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fake = FakeConsole::start_tls(&tls);
    assert!(fake.url().starts_with("https://127.0.0.1:"));
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 2}]));
    let clock = Arc::new(ManualClock::new(C0 + 1_000));
    let mut config = config(fake.url(), Some(&tls));
    config.clock = clock.clone();
    let table = Arc::new(AnyTable::private(16).unwrap());
    let agent = Agent::start(table.clone(), config).unwrap();
    let status = status_until(&agent, "version 1", |s| s.version == 1);
    assert!(
        status.last_pull_ok && status.last_error.is_empty(),
        "{status:?}"
    );
    assert_eq!(status.server, fake.url());
    assert_eq!(visit_threshold(&table, "api"), Some(2));
    let admitted: Vec<bool> = (0..3)
        .map(|i| !visit(&table, "api", C0 + 2_000 + i, 0, Outcome::Ok))
        .collect();
    assert_eq!(admitted, [true, true, false]);

    clock.set(C0 + 15_000);
    let status = status_until(&agent, "an upload", |s| s.uploads == 1);
    assert!(status.last_upload_ok, "{status:?}");
    let uploads = fake.uploads();
    assert_eq!(uploads.len(), 1);
    assert_eq!(uploads[0]["statisticsCycleTime"], json!(C0 + 10_000));
    assert_eq!(
        uploads[0]["pointInfoMap"],
        json!({"api": {"point": "api", "visitNum": 3, "exceptionNum": 0, "timeoutNum": 0,
                       "downgradeNum": 1, "concurrentNum": 1}})
    );
    agent.stop();
    fake.assert_no_violation();
}

#[test]
fn a_console_certificate_of_another_ca_fails_like_a_console_down() {
    let dir = TempDir::new("agent-tls");
    let ours = Tls::generate(&dir.path().join("ours"));
    let theirs = Tls::generate(&dir.path().join("theirs"));
    let fake = FakeConsole::start_tls(&ours);
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 1}]));
    let table = Arc::new(AnyTable::private(16).unwrap());
    let agent = Agent::start(table.clone(), config(fake.url(), Some(&ours))).unwrap();
    status_until(&agent, "version 1", |s| s.version == 1);

    // The same address now shows a certificate of another CA.
    let port = fake.port;
    drop(fake);
    let other = FakeConsole::start_tls_on(&theirs, port);
    other.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 50}]));
    let status = status_until(&agent, "a pull refused by the certificate check", |s| {
        s.last_error.contains("UnknownIssuer")
    });
    assert!(!status.last_pull_ok, "{status:?}");
    assert!(
        status.last_error.starts_with(&format!(
            "SDS strategy pull failed: {}/sds/heartbeat/pullstrategy: ",
            other.url()
        )),
        "{status:?}"
    );
    assert_eq!(status.version, 1);
    assert_eq!(visit_threshold(&table, "api"), Some(1));
    // The refused console never saw a request.
    assert_eq!(other.pulls().len(), 0);
    agent.stop();
}

#[test]
fn without_a_ca_file_the_system_roots_do_not_trust_a_private_ca() {
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fake = FakeConsole::start_tls(&tls);
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 1}]));
    let table = Arc::new(AnyTable::private(16).unwrap());
    let agent = Agent::start(table.clone(), config(fake.url(), None)).unwrap();
    let status = status_until(&agent, "a failed pull", |s| s.pull_failures >= 1);
    assert!(status.last_error.contains("UnknownIssuer"), "{status:?}");
    assert_eq!(status.version, 0);
    assert_eq!(visit_threshold(&table, "api"), None);
    agent.stop();
    assert_eq!(fake.pulls().len(), 0);
}

#[test]
fn fails_over_from_an_https_server_of_another_ca_to_a_plain_http_one() {
    let dir = TempDir::new("agent-tls");
    let ours = Tls::generate(&dir.path().join("ours"));
    let theirs = Tls::generate(&dir.path().join("theirs"));
    let bad = FakeConsole::start_tls(&theirs);
    let good = FakeConsole::start();
    good.set_app(GROUP, APP, json!([{"point": "a", "visitThreshold": 2}]));
    let config = config(format!("{},{}", bad.url(), good.url()), Some(&ours));
    // The list is shuffled: start until the HTTPS server comes first.
    let table = Arc::new(AnyTable::private(16).unwrap());
    let agent = (0..100)
        .map(|_| Agent::start(table.clone(), config.clone()).unwrap())
        .find(|agent| agent.status().server == bad.url())
        .expect("the HTTPS server comes first at least once in 100 shuffles");
    let status = status_until(&agent, "version 1", |s| s.version == 1);
    assert_eq!(status.server, good.url());
    assert_eq!(status.pull_failures, 1);
    assert!(
        status.last_error.contains(&bad.url()) && status.last_error.contains("UnknownIssuer"),
        "{status:?}"
    );
    assert_eq!(visit_threshold(&table, "a"), Some(2));
    agent.stop();
    good.assert_no_violation();
    assert_eq!(bad.pulls().len(), 0);
}

#[test]
fn bad_tls_settings_are_refused_at_start() {
    let table = Arc::new(AnyTable::private(4).unwrap());
    let refusal =
        |config: AgentConfig| Agent::start(table.clone(), config).unwrap_err().to_string();
    let https = "https://127.0.0.1:1".to_string();

    let mut missing = config(https.clone(), None);
    missing.tls_ca_file = Some(PathBuf::from("/nonexistent/sds-ca.pem"));
    let message = refusal(missing);
    assert!(
        message.starts_with(
            "cannot start the SDS agent: tls_ca_file /nonexistent/sds-ca.pem: No such file"
        ),
        "{message}"
    );

    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let mut a_key = config(https.clone(), None);
    a_key.tls_ca_file = Some(tls.key.clone());
    assert_eq!(
        refusal(a_key),
        format!(
            "cannot start the SDS agent: tls_ca_file {}: holds no PEM certificate",
            tls.key.display()
        )
    );

    let no_https = config("http://127.0.0.1:1".into(), Some(&tls));
    assert_eq!(
        refusal(no_https),
        "cannot start the SDS agent: tls_ca_file is given but no server is an https:// URL \
         (the CA file only verifies HTTPS servers)"
    );
    assert_eq!(
        refusal(config("https://".into(), None)),
        "cannot start the SDS agent: server \"https://\" names no host"
    );

    // Mixed lists are fine.
    let mixed = config(format!("http://127.0.0.1:1,{https}"), Some(&tls));
    Agent::start(table.clone(), mixed).unwrap().stop();
}

#[test]
fn mutual_tls_shows_the_client_certificate_and_a_console_requiring_one_refuses_an_agent_without() {
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fake = FakeConsole::start_mtls(&tls);
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 2}]));

    let table = Arc::new(AnyTable::private(16).unwrap());
    let without = Agent::start(table.clone(), config(fake.url(), Some(&tls))).unwrap();
    let status = status_until(&without, "a pull refused at the handshake", |s| {
        s.pull_failures >= 1
    });
    assert_eq!(status.version, 0, "{status:?}");
    without.stop();
    assert_eq!(fake.pulls().len(), 0);

    let mut mutual = config(fake.url(), Some(&tls));
    mutual.tls_cert_file = Some(tls.client_cert.clone());
    mutual.tls_key_file = Some(tls.client_key.clone());
    let agent = Agent::start(table.clone(), mutual).unwrap();
    let status = status_until(&agent, "version 1", |s| s.version == 1);
    assert!(status.last_pull_ok, "{status:?}");
    assert_eq!(visit_threshold(&table, "api"), Some(2));
    agent.stop();
    fake.assert_no_violation();
}

#[test]
fn bad_client_certificate_settings_are_refused_at_start() {
    let table = Arc::new(AnyTable::private(4).unwrap());
    let refusal =
        |config: AgentConfig| Agent::start(table.clone(), config).unwrap_err().to_string();
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let https = || config("https://127.0.0.1:1".into(), Some(&tls));

    let mut alone = https();
    alone.tls_cert_file = Some(tls.client_cert.clone());
    assert_eq!(
        refusal(alone),
        "cannot start the SDS agent: tls_cert_file and tls_key_file go together (mutual TLS)"
    );

    let mut plain = config("http://127.0.0.1:1".into(), None);
    plain.tls_cert_file = Some(tls.client_cert.clone());
    plain.tls_key_file = Some(tls.client_key.clone());
    assert_eq!(
        refusal(plain),
        "cannot start the SDS agent: tls_cert_file is given but no server is an https:// URL \
         (the client certificate is only shown to HTTPS servers)"
    );

    let mut wrong_key = https();
    wrong_key.tls_cert_file = Some(tls.client_cert.clone());
    wrong_key.tls_key_file = Some(tls.key.clone());
    let message = refusal(wrong_key);
    assert!(
        message.starts_with(&format!(
            "cannot start the SDS agent: tls_cert_file {} and tls_key_file {}: ",
            tls.client_cert.display(),
            tls.key.display()
        )),
        "{message}"
    );

    let mut no_key = https();
    no_key.tls_cert_file = Some(tls.client_cert.clone());
    no_key.tls_key_file = Some(tls.client_cert.clone());
    let message = refusal(no_key);
    assert!(
        message.starts_with(&format!(
            "cannot start the SDS agent: tls_key_file {}: holds no PEM private key",
            tls.client_cert.display()
        )),
        "{message}"
    );

    let mut no_cert = https();
    no_cert.tls_cert_file = Some(tls.client_key.clone());
    no_cert.tls_key_file = Some(tls.client_key.clone());
    assert_eq!(
        refusal(no_cert),
        format!(
            "cannot start the SDS agent: tls_cert_file {}: holds no PEM certificate",
            tls.client_key.display()
        )
    );
}

#[test]
fn files_that_are_not_regular_or_too_long_are_refused_without_blocking() {
    let table = Arc::new(AnyTable::private(4).unwrap());
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fifo = dir.path().join("fifo.pem");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path in our temp dir.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let long = dir.path().join("long.pem");
    std::fs::write(
        &long,
        vec![b'\n'; (sds_agent::MAX_CONFIG_FILE_BYTES + 1) as usize],
    )
    .unwrap();

    let started = std::time::Instant::now();
    for (field, path, why) in [
        ("tls_ca_file", fifo.clone(), "not a regular file"),
        (
            "tls_ca_file",
            PathBuf::from("/dev/zero"),
            "not a regular file",
        ),
        ("tls_ca_file", long.clone(), "longer than 4194304 bytes"),
        ("tls_cert_file", fifo.clone(), "not a regular file"),
        (
            "tls_key_file",
            PathBuf::from("/dev/zero"),
            "not a regular file",
        ),
        ("tls_key_file", long.clone(), "longer than 4194304 bytes"),
    ] {
        let mut config = config("https://127.0.0.1:1".into(), Some(&tls));
        config.tls_cert_file = Some(tls.client_cert.clone());
        config.tls_key_file = Some(tls.client_key.clone());
        match field {
            "tls_ca_file" => config.tls_ca_file = Some(path.clone()),
            "tls_cert_file" => config.tls_cert_file = Some(path.clone()),
            _ => config.tls_key_file = Some(path.clone()),
        }
        let message = Agent::start(table.clone(), config).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "cannot start the SDS agent: {field} {}: {why}",
                path.display()
            )
        );
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
