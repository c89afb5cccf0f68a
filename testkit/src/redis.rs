//! A real `redis-server` of the test's own: on a free loopback port with a
//! temporary directory, no persistence, stopped on drop (also when a test
//! fails). Installed by `make servers`.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::TempDir;

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
    tls: Option<Tls>,
    child: Option<Child>,
}

/// PEM files of a TLS server: its certificate and key, and the CA that
/// `cli` trusts (also the CA for client certificates, not required).
#[derive(Clone, Debug)]
pub struct Tls {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: PathBuf,
}

impl Redis {
    pub fn start() -> Redis {
        Redis::start_with(free_port(), &[])
    }

    /// A server on `port` with extra `--option value` arguments.
    pub fn start_with(port: u16, extra: &[&str]) -> Redis {
        Redis::start_full(port, extra, None)
    }

    /// A server that speaks only TLS on a free port (`--port 0`): `url`
    /// is `rediss://`, `cli` trusts `tls.ca`.
    pub fn start_tls(tls: Tls) -> Redis {
        Redis::start_full(free_port(), &[], Some(tls))
    }

    fn start_full(port: u16, extra: &[&str], tls: Option<Tls>) -> Redis {
        let mut redis = Redis {
            port,
            dir: TempDir::new("redis"),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            tls,
            child: None,
        };
        redis.run();
        redis
    }

    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again), waiting until it answers PING.
    pub fn run(&mut self) {
        assert!(self.child.is_none());
        let mut command = Command::new("redis-server");
        match &self.tls {
            None => command.args(["--port", &self.port.to_string()]),
            Some(tls) => command
                .args(["--port", "0", "--tls-port", &self.port.to_string()])
                .arg("--tls-cert-file")
                .arg(&tls.cert)
                .arg("--tls-key-file")
                .arg(&tls.key)
                .arg("--tls-ca-cert-file")
                .arg(&tls.ca)
                .args(["--tls-auth-clients", "no"]),
        };
        let child = command
            .args(["--bind", "127.0.0.1"])
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
        let mut command = Command::new("redis-cli");
        command.args(["-h", "127.0.0.1", "-p", &self.port.to_string()]);
        if let Some(tls) = &self.tls {
            command.arg("--tls").arg("--cacert").arg(&tls.ca);
        }
        let out = command.args(args).stderr(Stdio::null()).output().ok()?;
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
