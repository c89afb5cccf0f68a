//! The agent against the fake console on HTTPS (tools/fake-sds-admin.py
//! --tls-cert/--tls-key, certificates from tools/test-pki.sh): trusted
//! through `tls_ca_file`, a certificate of another CA as a failure like a
//! console down, failover from it to a plain HTTP server, bad files refused
//! at start.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{
    manual_clock, start, start_error, status_until, stop_clean, the_upload,
    threshold as visit_threshold, visit, FakeConsole, TempDir, Tls, APP, C0, GROUP,
};
use sds_agent::{Agent, AgentConfig};
use sds_core::Outcome;
use sds_shm::AnyTable;
use serde_json::json;

/// The tests' config on `servers` with a timeout of 1 s, trusting the CA
/// of `ca` if given.
fn config(servers: String, ca: Option<&Tls>) -> AgentConfig {
    let mut config = common::config(servers);
    config.tls_ca_file = ca.map(|tls| tls.ca.clone());
    config.timeout_ms = 1_000;
    config
}

/// A fresh PKI in a directory of its own.
fn pki() -> (TempDir, Tls) {
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    (dir, tls)
}

/// Two PKIs that do not trust each other: ours and theirs.
fn two_pkis() -> (TempDir, Tls, Tls) {
    let dir = TempDir::new("agent-tls");
    let ours = Tls::generate(&dir.path().join("ours"));
    let theirs = Tls::generate(&dir.path().join("theirs"));
    (dir, ours, theirs)
}

#[test]
fn over_https_with_the_ca_file_strategies_are_pulled_and_statistics_uploaded() {
    let (_dir, tls) = pki();
    let fake = FakeConsole::start_tls(&tls);
    assert!(fake.url().starts_with("https://127.0.0.1:"));
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 2}]));
    let mut config = config(fake.url(), Some(&tls));
    let clock = manual_clock(&mut config, C0 + 1_000);
    let (table, agent) = start(config);
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
    let upload = the_upload(&agent, &fake, C0 + 10_000);
    assert_eq!(
        upload["pointInfoMap"],
        json!({"api": {"point": "api", "visitNum": 3, "exceptionNum": 0, "timeoutNum": 0,
                       "downgradeNum": 1, "concurrentNum": 1}})
    );
    stop_clean(agent, &fake);
}

#[test]
fn a_console_certificate_of_another_ca_fails_like_a_console_down() {
    let (_dir, ours, theirs) = two_pkis();
    let fake = FakeConsole::start_tls(&ours);
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 1}]));
    let (table, agent) = start(config(fake.url(), Some(&ours)));
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
    let (_dir, tls) = pki();
    let fake = FakeConsole::start_tls(&tls);
    fake.set_app(GROUP, APP, json!([{"point": "api", "visitThreshold": 1}]));
    let (table, agent) = start(config(fake.url(), None));
    let status = status_until(&agent, "a failed pull", |s| s.pull_failures >= 1);
    assert!(status.last_error.contains("UnknownIssuer"), "{status:?}");
    assert_eq!(status.version, 0);
    assert_eq!(visit_threshold(&table, "api"), None);
    agent.stop();
    assert_eq!(fake.pulls().len(), 0);
}

#[test]
fn fails_over_from_an_https_server_of_another_ca_to_a_plain_http_one() {
    let (_dir, ours, theirs) = two_pkis();
    let bad = FakeConsole::start_tls(&theirs);
    let good = FakeConsole::serving(json!([{"point": "a", "visitThreshold": 2}]));
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
    let https = "https://127.0.0.1:1".to_string();

    let mut missing = config(https.clone(), None);
    missing.tls_ca_file = Some(PathBuf::from("/nonexistent/sds-ca.pem"));
    let message = start_error(missing);
    assert!(
        message.starts_with(
            "cannot start the SDS agent: tls_ca_file /nonexistent/sds-ca.pem: No such file"
        ),
        "{message}"
    );

    let (_dir, tls) = pki();
    let mut a_key = config(https.clone(), None);
    a_key.tls_ca_file = Some(tls.key.clone());
    assert_eq!(
        start_error(a_key),
        format!(
            "cannot start the SDS agent: tls_ca_file {}: holds no PEM certificate",
            tls.key.display()
        )
    );

    let no_https = config("http://127.0.0.1:1".into(), Some(&tls));
    assert_eq!(
        start_error(no_https),
        "cannot start the SDS agent: tls_ca_file is given but no server is an https:// URL \
         (the CA file only verifies HTTPS servers)"
    );
    assert_eq!(
        start_error(config("https://".into(), None)),
        "cannot start the SDS agent: server \"https://\" names no host"
    );

    // Mixed lists are fine.
    let mixed = config(format!("http://127.0.0.1:1,{https}"), Some(&tls));
    start(mixed).1.stop();
}

#[test]
fn mutual_tls_shows_the_client_certificate_and_a_console_requiring_one_refuses_an_agent_without() {
    let (_dir, tls) = pki();
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
    stop_clean(agent, &fake);
}

#[test]
fn bad_client_certificate_settings_are_refused_at_start() {
    let (_dir, tls) = pki();
    let https = || config("https://127.0.0.1:1".into(), Some(&tls));

    let mut alone = https();
    alone.tls_cert_file = Some(tls.client_cert.clone());
    assert_eq!(
        start_error(alone),
        "cannot start the SDS agent: tls_cert_file and tls_key_file go together (mutual TLS)"
    );

    // Why the agent of `config` with this client certificate and key does
    // not start.
    let client = |mut config: AgentConfig, cert: &PathBuf, key: &PathBuf| {
        config.tls_cert_file = Some(cert.clone());
        config.tls_key_file = Some(key.clone());
        start_error(config)
    };
    assert_eq!(
        client(
            config("http://127.0.0.1:1".into(), None),
            &tls.client_cert,
            &tls.client_key
        ),
        "cannot start the SDS agent: tls_cert_file is given but no server is an https:// URL \
         (the client certificate is only shown to HTTPS servers)"
    );

    let message = client(https(), &tls.client_cert, &tls.key);
    assert!(
        message.starts_with(&format!(
            "cannot start the SDS agent: tls_cert_file {} and tls_key_file {}: ",
            tls.client_cert.display(),
            tls.key.display()
        )),
        "{message}"
    );

    let message = client(https(), &tls.client_cert, &tls.client_cert);
    assert!(
        message.starts_with(&format!(
            "cannot start the SDS agent: tls_key_file {}: holds no PEM private key",
            tls.client_cert.display()
        )),
        "{message}"
    );

    assert_eq!(
        client(https(), &tls.client_key, &tls.client_key),
        format!(
            "cannot start the SDS agent: tls_cert_file {}: holds no PEM certificate",
            tls.client_key.display()
        )
    );
}

#[test]
fn files_that_are_not_regular_or_too_long_are_refused_without_blocking() {
    let (dir, tls) = pki();
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
    let too_long = "1048577 bytes, more than the 1048576 a configuration file may hold";
    let device = "not a regular file (a character device)";
    for (field, path, why) in [
        ("tls_ca_file", fifo.clone(), "not a regular file (a FIFO)"),
        ("tls_ca_file", PathBuf::from("/dev/zero"), device),
        ("tls_ca_file", long.clone(), too_long),
        ("tls_cert_file", fifo.clone(), "not a regular file (a FIFO)"),
        ("tls_cert_file", long.clone(), too_long),
        ("tls_key_file", PathBuf::from("/dev/zero"), device),
        ("tls_key_file", long.clone(), too_long),
    ] {
        let mut config = config("https://127.0.0.1:1".into(), Some(&tls));
        config.tls_cert_file = Some(tls.client_cert.clone());
        config.tls_key_file = Some(tls.client_key.clone());
        match field {
            "tls_ca_file" => config.tls_ca_file = Some(path.clone()),
            "tls_cert_file" => config.tls_cert_file = Some(path.clone()),
            _ => config.tls_key_file = Some(path.clone()),
        }
        assert_eq!(
            start_error(config),
            format!(
                "cannot start the SDS agent: {field} {}: {why}",
                path.display()
            )
        );
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
