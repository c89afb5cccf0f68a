//! A real `redis-server` of the test's own: on a free loopback port with a
//! temporary directory, no persistence, stopped on drop (also when a test
//! fails). Installed by `make servers`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
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

/// PEM files of a throwaway PKI made by `tools/test-pki.sh`: a CA, a
/// server certificate for 127.0.0.1 and a client certificate, both signed
/// by that CA.
#[derive(Clone, Debug)]
pub struct Tls {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// The server asks for a client certificate signed by `ca` (mutual TLS).
    pub require_client_cert: bool,
}

impl Tls {
    /// A fresh PKI in `dir` (its CA's name is new each time, so two PKIs
    /// never trust each other's certificates).
    pub fn generate(dir: &Path) -> Tls {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/test-pki.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg(dir)
            .output()
            .expect("bash runs tools/test-pki.sh");
        assert!(
            out.status.success(),
            "test-pki.sh failed (openssl comes with make servers): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tls {
            ca: dir.join("ca.pem"),
            cert: dir.join("server-cert.pem"),
            key: dir.join("server-key.pem"),
            client_cert: dir.join("client-cert.pem"),
            client_key: dir.join("client-key.pem"),
            require_client_cert: false,
        }
    }

    /// The same PKI with the server asking for client certificates.
    pub fn mutual(self) -> Tls {
        Tls {
            require_client_cert: true,
            ..self
        }
    }
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
    /// is `rediss://`, `cli` trusts `tls.ca` and shows the client
    /// certificate.
    pub fn start_tls(tls: Tls) -> Redis {
        Redis::start_full(free_port(), &[], Some(tls))
    }

    /// A server on `port`, TLS-only when `tls` is given, with extra
    /// `--option value` arguments.
    pub fn start_full(port: u16, extra: &[&str], tls: Option<Tls>) -> Redis {
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
                // The server's own outgoing connections (the cluster bus)
                // show the client certificate: the server's is for serving.
                .arg("--tls-client-cert-file")
                .arg(&tls.client_cert)
                .arg("--tls-client-key-file")
                .arg(&tls.client_key)
                .args([
                    "--tls-auth-clients",
                    if tls.require_client_cert { "yes" } else { "no" },
                ]),
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

    /// Sends `signal` (`"STOP"`, `"CONT"`) to the server: paused with
    /// SIGSTOP, it still accepts connections (the kernel's backlog) and
    /// never answers.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("the server runs").id();
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal} {pid}");
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
            command.arg("--cert").arg(&tls.client_cert);
            command.arg("--key").arg(&tls.client_key);
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
