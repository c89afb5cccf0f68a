//! Helpers for the cluster tests: a real `redis-server` on a free loopback
//! port with a temporary directory (stopped on drop, also when a test
//! fails), and children that are this test binary run again with a role in
//! its environment (see `child_main` in each test file).

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The environment variable that names a child's role.
pub const ROLE: &str = "SDS_CLUSTER_TEST_ROLE";

/// A fresh directory under the system's temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "sds-cluster-{name}-{}-{nanos}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `redis-server` of its own on loopback; killed on drop.
pub struct Redis {
    pub port: u16,
    dir: TempDir,
    extra: Vec<String>,
    child: Option<Child>,
}

impl Redis {
    pub fn start() -> Redis {
        Redis::start_with(free_port(), &[])
    }

    /// A server on `port` with extra `--option value` arguments.
    pub fn start_with(port: u16, extra: &[&str]) -> Redis {
        let mut redis = Redis {
            port,
            dir: TempDir::new("redis"),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
        };
        redis.run();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again), waiting until it answers PING.
    pub fn run(&mut self) {
        assert!(self.child.is_none());
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("redis-server must be installed (make servers)");
        self.child = Some(child);
        let start = Instant::now();
        while self.cli(&["PING"]).as_deref() != Some("PONG") {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server on port {} did not start",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server (its data goes with it: no persistence).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `redis-cli -p PORT args...`: its output, trimmed; `None` on failure.
    pub fn cli(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.starts_with("Could not connect"))
    }

    /// A hash field as a number (0 when absent).
    pub fn hget(&self, key: &str, field: &str) -> u64 {
        self.cli(&["HGET", key, field])
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
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
                if let Some(at) = line.find("@@") {
                    if send.send(line[at + 2..].to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Kid { child, lines }
    }

    /// The value of the next report, which must be `key=value`.
    pub fn value(&self, key: &str) -> String {
        let report = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("no report from child {}: {e}", self.child.id()));
        match report.split_once('=') {
            Some((k, v)) if k == key => v.to_string(),
            _ => panic!("expected {key}=..., got {report}"),
        }
    }

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
        std::thread::sleep(Duration::from_millis(5));
    }
}
