//! Helpers for tests with real processes, shared by the workspace's test
//! suites (dev-dependency only): unique temporary directories, and children
//! that are the very test binary run again with a role in their environment
//! (each test file has a `child_main` test that acts on it and does nothing
//! in the parent run).

mod props;
mod redis;

pub use props::{json_nesting, json_object, json_space, mutate, proptest_config, JSON_PIECES};
pub use redis::{free_port, Redis, Tls};

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The environment variable that names a child's role.
pub const ROLE: &str = "SDS_TEST_ROLE";

/// A fresh directory (0700) under the system's temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "sds-test-{name}-{}-{nanos}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
                // libtest may print "test child_main ... " on the same line.
                if let Some(at) = line.find("@@") {
                    if send.send(line[at + 2..].to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Kid { child, lines }
    }

    /// The next report, within `timeout`.
    pub fn report(&self, timeout: Duration) -> String {
        self.lines
            .recv_timeout(timeout)
            .unwrap_or_else(|e| panic!("no report from child {}: {e}", self.child.id()))
    }

    /// The value of the next report, which must be `key=value`.
    pub fn value(&self, key: &str) -> String {
        let report = self.report(Duration::from_secs(20));
        match report.split_once('=') {
            Some((k, v)) if k == key => v.to_string(),
            _ => panic!("expected {key}=..., got {report}"),
        }
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

    /// Waits (bounded) for the child to exit; true if it exited with 0.
    pub fn wait_success(&mut self, timeout: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.kill();
        panic!("child did not exit within {timeout:?}");
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Prints a report for the parent.
pub fn report(key: &str, value: impl std::fmt::Display) {
    use std::io::Write;
    let mut out = std::io::stdout();
    writeln!(out, "@@{key}={value}").unwrap();
    out.flush().unwrap();
}

/// An environment variable a child needs.
pub fn var(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} not set"))
}

/// Waits (bounded) until `done` holds.
pub fn wait_until(timeout: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `promtool check metrics` (Prometheus' linter of the text format, which
/// `make servers` installs) on `text`: its findings, empty when clean, or
/// the exit status and findings when it fails.
pub fn promtool(text: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool must be installed (make servers)");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let findings = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        findings.trim().to_string()
    } else {
        format!("exit {}: {findings}", out.status)
    }
}
