//! Helpers for the agent's tests: the fake console (tools/fake-sds-admin.py)
//! as a subprocess, waiting for a condition, and child processes that are
//! this test binary run again with a role in its environment.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The fake console, killed on drop.
pub struct FakeConsole {
    child: Child,
    _stdin: ChildStdin,
    pub port: u16,
    http: ureq::Agent,
}

impl FakeConsole {
    pub fn start() -> FakeConsole {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/fake-sds-admin.py");
        let mut child = Command::new("python3")
            .arg(script)
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
            http: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into(),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
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
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `condition` every 5 ms until it holds; panics after `timeout`.
pub fn wait_until(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The environment variable that names a child's role.
pub const ROLE: &str = "SDS_AGENT_TEST_ROLE";

/// A child process running `child_main` of this test binary; killed and
/// reaped on drop. Its lines starting with "@@" are its reports.
pub struct Kid {
    child: Child,
    lines: Receiver<String>,
}

impl Kid {
    pub fn spawn(role: &str, env: &[(&str, String)]) -> Kid {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "child_main", "--nocapture", "--test-threads=1"])
            .env(ROLE, role)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find("@@") {
                    if send.send(line[at + 2..].to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Kid { child, lines }
    }

    /// A report if one is waiting.
    pub fn try_report(&self) -> Option<String> {
        self.lines.try_recv().ok()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, then reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A fresh directory under the system's temp dir, removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "sds-agent-{name}-{}-{}",
            std::process::id(),
            sds_clock::now_ms()
        ));
        std::fs::create_dir(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
