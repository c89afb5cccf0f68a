//! Helpers for the agent's tests: the fake console (tools/fake-sds-admin.py)
//! as a subprocess; waiting, temporary directories and child processes come
//! from the workspace's `testkit/`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};

use serde_json::{json, Value};

// Not every test file uses every helper.
#[allow(unused_imports)]
pub use sds_testkit::{wait_until, Kid, TempDir, ROLE};

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
