//! Helpers for the agent's tests: the fake console (tools/fake-sds-admin.py)
//! as a subprocess; waiting, temporary directories and child processes come
//! from the workspace's `testkit/`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sds_agent::testing::ManualClock;
use sds_agent::{Agent, AgentConfig, Level, Status};
use sds_core::{Flags, Outcome, Strategy};
use sds_shm::AnyTable;
use serde_json::{json, Value};
use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};

// Not every test file uses every helper.
#[allow(unused_imports)]
pub use sds_testkit::{wait_until, Kid, TempDir, Tls, ROLE};

/// How long a test waits for what the agent's thread does.
pub const SECONDS: Duration = Duration::from_secs(10);

/// The strategy of `name` in `table`, if it has one.
pub fn strategy(table: &AnyTable, name: &str) -> Option<Strategy> {
    table
        .with_points(|t| {
            let id = t.lookup(name.as_bytes()).unwrap()?;
            t.point(id).unwrap().strategy()
        })
        .unwrap()
}

/// Enters and exits `name` at `now` with `outcome`; whether it was downgraded.
pub fn visit(table: &AnyTable, name: &str, now: u64, took_ms: u64, outcome: Outcome) -> bool {
    table
        .with_points(|t| {
            let id = t.insert(name.as_bytes()).unwrap();
            let point = t.point(id).unwrap();
            let entry = point.enter(now, Flags::NONE);
            point.exit(&entry, now + took_ms, outcome);
            entry.downgraded()
        })
        .unwrap()
}

/// The agent's status once `check` holds (within [`SECONDS`]).
pub fn status_until(agent: &Agent, what: &str, check: impl Fn(&Status) -> bool) -> Status {
    wait_until(SECONDS, what, || check(&agent.status()));
    agent.status()
}

/// The app the tests' agents and consoles are about.
pub const GROUP: &str = "group";
pub const APP: &str = "app";
/// A cycle start, so test times read as offsets into cycles.
pub const C0: u64 = 1_700_000_000_000;

/// The tests' config for [`GROUP`]/[`APP`] on `servers`: an ip and a
/// hostname, a pull every 100 ms, requests cut after 300 ms.
pub fn config(servers: impl Into<String>) -> AgentConfig {
    let mut config = AgentConfig::new(servers, GROUP, APP);
    config.ip = Some("10.1.2.3".into());
    config.hostname = Some("test-host".into());
    config.pull_interval_ms = 100;
    config.timeout_ms = 300;
    config
}

/// What an agent logged, in order.
pub type Lines = Arc<Mutex<Vec<(Level, String)>>>;

/// Collects what the agent of `config` logs.
pub fn log_lines(config: &mut AgentConfig) -> Lines {
    let lines: Lines = Arc::default();
    let sink = lines.clone();
    config.log = Some(Arc::new(move |level, line: &str| {
        sink.lock().unwrap().push((level, line.to_string()))
    }));
    lines
}

/// The logged lines at `level` that contain `text`.
pub fn logged(lines: &Lines, level: Option<Level>, text: &str) -> Vec<String> {
    lines
        .lock()
        .unwrap()
        .iter()
        .filter(|(l, line)| level.is_none_or(|level| *l == level) && line.contains(text))
        .map(|(_, line)| line.clone())
        .collect()
}

/// Puts the agent of `config` on a clock that stands at `now_ms` until the
/// test moves it.
pub fn manual_clock(config: &mut AgentConfig, now_ms: u64) -> Arc<ManualClock> {
    let clock = Arc::new(ManualClock::new(now_ms));
    config.clock = clock.clone();
    clock
}

/// A private table of 16 points and the agent of `config` on it.
pub fn start(config: AgentConfig) -> (Arc<AnyTable>, Agent) {
    let table = Arc::new(AnyTable::private(16).unwrap());
    let agent = Agent::start(table.clone(), config).unwrap();
    (table, agent)
}

/// A console serving `strategies`, and an agent of the tests' config on it
/// once it applied them (version 1).
pub fn applied(strategies: Value) -> (FakeConsole, Arc<AnyTable>, Agent) {
    let fake = FakeConsole::serving(strategies);
    let (table, agent) = start(config(fake.url()));
    status_until(&agent, "version 1", |s| s.version == 1);
    (fake, table, agent)
}

/// Why [`Agent::start`] refuses `config` (on a table of 4 points).
pub fn start_error(config: AgentConfig) -> String {
    let table = Arc::new(AnyTable::private(4).unwrap());
    Agent::start(table, config).unwrap_err().to_string()
}

/// Stops `agent`; the console saw no protocol violation.
pub fn stop_clean(agent: Agent, fake: &FakeConsole) {
    agent.stop();
    fake.assert_no_violation();
}

/// The one upload `fake` got, once the status of `agent` counts it as a
/// success: it carries the cycle that started at `cycle_ms`.
pub fn the_upload(agent: &Agent, fake: &FakeConsole, cycle_ms: u64) -> Value {
    let status = status_until(agent, "an upload", |s| s.uploads == 1);
    assert!(status.last_upload_ok, "{status:?}");
    let uploads = fake.uploads();
    assert_eq!(uploads.len(), 1);
    assert_eq!(uploads[0]["statisticsCycleTime"], json!(cycle_ms));
    uploads[0].clone()
}

/// The visitThreshold of `name` in `table`, if it has a strategy.
pub fn threshold(table: &AnyTable, name: &str) -> Option<i64> {
    strategy(table, name).map(|s| s.visit_threshold)
}

/// The fake console, killed on drop.
pub struct FakeConsole {
    child: Child,
    _stdin: ChildStdin,
    pub port: u16,
    scheme: &'static str,
    http: ureq::Agent,
}

impl FakeConsole {
    /// A console on plain HTTP.
    pub fn start() -> FakeConsole {
        FakeConsole::spawn(None, 0, false)
    }

    /// [`FakeConsole::start`] with `strategies` for [`GROUP`]/[`APP`].
    pub fn serving(strategies: Value) -> FakeConsole {
        let fake = FakeConsole::start();
        fake.set_app(GROUP, APP, strategies);
        fake
    }

    /// [`FakeConsole::start`] on a given port (one a console just left).
    pub fn start_on(port: u16) -> FakeConsole {
        FakeConsole::spawn(None, port, false)
    }

    /// A console on HTTPS with the server certificate of `tls` (for
    /// 127.0.0.1); the test's own control requests trust `tls.ca`.
    pub fn start_tls(tls: &Tls) -> FakeConsole {
        FakeConsole::spawn(Some(tls), 0, false)
    }

    /// [`FakeConsole::start_tls`] on a given port (one a console just left).
    pub fn start_tls_on(tls: &Tls, port: u16) -> FakeConsole {
        FakeConsole::spawn(Some(tls), port, false)
    }

    /// [`FakeConsole::start_tls`] that also requires a client certificate
    /// signed by `tls.ca` (mutual TLS); the test's control requests show
    /// `tls.client_cert`.
    pub fn start_mtls(tls: &Tls) -> FakeConsole {
        FakeConsole::spawn(Some(tls), 0, true)
    }

    fn spawn(tls: Option<&Tls>, port: u16, mutual: bool) -> FakeConsole {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/fake-sds-admin.py");
        let mut command = Command::new("python3");
        command.arg(script).arg("--port").arg(port.to_string());
        let mut tls_config = TlsConfig::builder();
        if let Some(tls) = tls {
            command
                .arg("--tls-cert")
                .arg(&tls.cert)
                .arg("--tls-key")
                .arg(&tls.key);
            sds_tls::install_provider();
            let roots = sds_tls::ca_certificates("ca", &tls.ca).unwrap();
            let roots = roots
                .iter()
                .map(|der| Certificate::from_der(der).to_owned());
            tls_config = tls_config.root_certs(RootCerts::from(roots));
            if mutual {
                command.arg("--tls-client-ca").arg(&tls.ca);
                let pem = std::fs::read(&tls.client_cert).unwrap();
                let chain: Vec<Certificate<'static>> = ureq::tls::parse_pem(&pem)
                    .filter_map(|item| match item.unwrap() {
                        ureq::tls::PemItem::Certificate(c) => Some(c),
                        _ => None,
                    })
                    .collect();
                let key = PrivateKey::from_pem(&std::fs::read(&tls.client_key).unwrap()).unwrap();
                tls_config = tls_config.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
            }
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the fake console");
        let stdin = child.stdin.take().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .expect("the fake console prints its port");
        FakeConsole {
            child,
            _stdin: stdin,
            port,
            scheme: if tls.is_some() { "https" } else { "http" },
            http: ureq::Agent::config_builder()
                .tls_config(tls_config.build())
                .http_status_as_error(false)
                .build()
                .into(),
        }
    }

    pub fn url(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.port)
    }

    fn control(&self, path: &str, body: Value) -> Value {
        let mut response = self
            .http
            .post(format!("{}/_fake/{path}", self.url()))
            .send(body.to_string())
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "control {path}");
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// Replaces the app's strategies; returns the new version.
    pub fn set_app(&self, group: &str, app: &str, strategies: Value) -> i64 {
        self.control(
            "app",
            json!({"appGroupName": group, "appName": app, "strategies": strategies}),
        )["version"]
            .as_i64()
            .unwrap()
    }

    /// Replaces the app's strategies with `json`, a JSON list sent verbatim;
    /// returns the new version.
    pub fn set_app_json(&self, group: &str, app: &str, json: &str) -> i64 {
        self.control(
            "app",
            json!({"appGroupName": group, "appName": app, "strategiesJson": json}),
        )["version"]
            .as_i64()
            .unwrap()
    }

    /// Replaces the app's strategies and makes its version null for good
    /// (the shipped console on H2).
    pub fn set_app_null_version(&self, group: &str, app: &str, strategies: Value) {
        let answer = self.control(
            "app",
            json!({"appGroupName": group, "appName": app, "strategies": strategies,
                   "nullVersion": true}),
        );
        assert_eq!(answer["version"], Value::Null);
    }

    /// The rows the console stored from uploads, in order.
    pub fn stored(&self) -> Vec<Value> {
        self.requests()["stored"].as_array().unwrap().clone()
    }

    /// The app's point list (the monitor page's), sorted.
    pub fn point_list(&self, group: &str, app: &str) -> Vec<String> {
        let points = self.requests()["points"][format!("{group}/{app}")].clone();
        serde_json::from_value(points).unwrap_or_default()
    }

    /// Freezes the console (SIGSTOP): connections are still accepted by the
    /// kernel, nothing is answered until [`FakeConsole::thaw`].
    pub fn freeze(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets a frozen console go on (SIGCONT): it processes what queued up.
    pub fn thaw(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        let rc = unsafe { libc::kill(self.child.id() as i32, signal) };
        assert_eq!(rc, 0, "kill({signal})");
    }

    pub fn mode(&self, pull: &str, add: &str) {
        self.control("mode", json!({"pull": pull, "add": add}));
    }

    pub fn reset(&self) {
        self.control("reset", json!({}));
    }

    pub fn requests(&self) -> Value {
        let mut response = self
            .http
            .get(format!("{}/_fake/requests", self.url()))
            .call()
            .unwrap();
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// The recorded pull requests' JSON.
    pub fn pulls(&self) -> Vec<Value> {
        self.recorded("pulls")
    }

    /// The recorded upload requests' JSON.
    pub fn uploads(&self) -> Vec<Value> {
        self.recorded("uploads")
    }

    fn recorded(&self, kind: &str) -> Vec<Value> {
        self.requests()[kind]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["request"].clone())
            .collect()
    }

    /// Fails the test on any protocol violation the fake recorded.
    pub fn assert_no_violation(&self) {
        let violations = self.requests()["violations"].clone();
        assert_eq!(violations, json!([]), "protocol violations");
    }
}

impl Drop for FakeConsole {
    fn drop(&mut self) {
        // A frozen child still dies of SIGKILL.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
