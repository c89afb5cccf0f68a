//! [`Agent`]: the handle of a running agent.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use sds_shm::AnyTable;

use crate::config::{AgentConfig, StartError, MAX_IP_LEN};
use crate::http::Servers;
use crate::identity::{detect_hostname, detect_ip};
use crate::protocol::Identity;
use crate::status::Status;
use crate::tls::tls_files;
use crate::worker::{lock, Shared, Worker};

/// The SDS console protocol running for one table on its own thread. Its
/// methods may be called from any thread; dropping it stops it.
pub struct Agent {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Agent {
    /// Checks `config` and starts the agent's thread, which pulls the
    /// strategies at once and then on its interval, and uploads the last
    /// whole cycle at second 5 of each cycle when this process holds the
    /// host's reporter role. Never blocks on the network.
    pub fn start(table: Arc<AnyTable>, config: AgentConfig) -> Result<Agent, StartError> {
        let urls = server_urls(&config.servers)?;
        let identity = identity(&config)?;
        if config.pull_interval_ms == 0 {
            return Err(StartError("the pull interval must be above 0 ms".into()));
        }
        if config.timeout_ms == 0 {
            return Err(StartError("the timeout must be above 0 ms".into()));
        }
        let tls = tls_files(&urls, &config)?;
        let servers = Servers::new(urls, config.timeout_ms, &tls);
        let shared = Arc::new(Shared {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            status: Mutex::new(Status {
                server: servers.current().to_string(),
                ..Status::default()
            }),
            return_values: Mutex::new(Arc::new(HashMap::new())),
        });
        let worker = Worker {
            table,
            shared: shared.clone(),
            servers,
            identity,
            pull_interval_ms: config.pull_interval_ms,
            clock: config.clock,
            log: config.log,
            version: 0,
            role: None,
            set_text: None,
            waiting: Vec::new(),
            left_out: Default::default(),
        };
        let thread = std::thread::Builder::new()
            .name("sds-agent".into())
            .spawn(move || worker.run())
            .map_err(|e| StartError(format!("no thread: {e}")))?;
        Ok(Agent {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// A snapshot of the agent's state.
    pub fn status(&self) -> Status {
        lock(&self.shared.status).clone()
    }

    /// The console's `returnValueStr` for `point`, from the strategy in
    /// force; `None` when the point has none.
    pub fn return_value(&self, point: &str) -> Option<String> {
        lock(&self.shared.return_values).get(point).cloned()
    }

    /// Stops the agent and joins its thread: at once when it sleeps, within
    /// one request timeout when a request is in flight. The table keeps the
    /// strategies in force; the reporter role is given up. Idempotent, and
    /// safe from any thread: called from the agent's own log callback it
    /// does not join (the thread ends when the callback returns). After
    /// it, [`Agent::status`] keeps giving the last state.
    pub fn stop(&self) {
        *lock(&self.shared.stop) = true;
        self.shared.wake.notify_all();
        let thread = lock(&self.thread).take();
        if let Some(thread) = thread {
            if thread.thread().id() == std::thread::current().id() {
                // Called on the agent's own thread (from its log callback):
                // a join would wait for itself. Detached instead: the thread
                // ends as soon as the callback returns.
                drop(thread);
            } else {
                // A panic on the agent's thread has nothing left to report here.
                let _ = thread.join();
            }
        }
    }

    /// Whether [`Agent::stop`] has not been called yet.
    pub fn is_running(&self) -> bool {
        !*lock(&self.shared.stop)
    }
}

sds_settings::service!(Agent, Status);

impl Drop for Agent {
    fn drop(&mut self) {
        self.stop();
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("status", &self.status())
            .finish()
    }
}

/// The comma-separated base URLs, checked and shuffled.
fn server_urls(servers: &str) -> Result<Vec<String>, StartError> {
    let mut urls = Vec::new();
    for url in servers.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .ok_or_else(|| {
                StartError(format!(
                    "server \"{url}\" is not an http:// or https:// URL"
                ))
            })?;
        if rest.is_empty() || rest.starts_with('/') {
            return Err(StartError(format!("server \"{url}\" names no host")));
        }
        urls.push(url.trim_end_matches('/').to_string());
    }
    if urls.is_empty() {
        return Err(StartError("no server given".into()));
    }
    shuffle(&mut urls);
    Ok(urls)
}

/// Fisher-Yates with the standard library's random hash keys as the seed:
/// enough to spread instances over the servers.
fn shuffle(urls: &mut [String]) {
    let mut state = RandomState::new().build_hasher().finish() | 1;
    for i in (1..urls.len()).rev() {
        // xorshift64
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        urls.swap(i, (state % (i as u64 + 1)) as usize);
    }
}

fn identity(config: &AgentConfig) -> Result<Identity, StartError> {
    let app_group_name = non_blank(&config.app_group, "app group")?;
    let app_name = non_blank(&config.app_name, "app name")?;
    let ip = match &config.ip {
        Some(ip) => non_blank(ip, "ip")?,
        None => detect_ip(),
    };
    if ip.len() > MAX_IP_LEN {
        return Err(StartError(format!(
            "ip \"{ip}\" is longer than {MAX_IP_LEN} characters"
        )));
    }
    let hostname = match &config.hostname {
        Some(name) => non_blank(name, "hostname")?,
        None => detect_hostname(),
    };
    Ok(Identity {
        app_group_name,
        app_name,
        ip,
        hostname,
    })
}

fn non_blank(value: &str, what: &str) -> Result<String, StartError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(StartError(format!("the {what} is blank")));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_checked_trimmed_and_all_kept() {
        let mut urls = server_urls(" http://a:1/ ,http://b:2,, http://c:3").unwrap();
        urls.sort();
        assert_eq!(urls, ["http://a:1", "http://b:2", "http://c:3"]);
        let mut urls = server_urls("https://a:1/,http://b").unwrap();
        urls.sort();
        assert_eq!(urls, ["http://b", "https://a:1"]);
        assert_eq!(
            server_urls("ftp://a").unwrap_err().0,
            "server \"ftp://a\" is not an http:// or https:// URL"
        );
        assert_eq!(
            server_urls("https://").unwrap_err().0,
            "server \"https://\" names no host"
        );
        assert_eq!(server_urls(" , ").unwrap_err().0, "no server given");
        assert_eq!(
            server_urls("http://").unwrap_err().0,
            "server \"http://\" names no host"
        );
    }

    #[test]
    fn identity_refuses_blank_names_and_long_ips() {
        let mut config = AgentConfig::new("http://a", " ", "app");
        assert_eq!(identity(&config).unwrap_err().0, "the app group is blank");
        config.app_group = "g".into();
        config.ip = Some("1234567890.1234567".into());
        assert_eq!(
            identity(&config).unwrap_err().0,
            "ip \"1234567890.1234567\" is longer than 16 characters"
        );
        config.ip = Some("10.0.0.1".into());
        config.hostname = Some("h".into());
        let id = identity(&config).unwrap();
        assert_eq!((id.ip.as_str(), id.hostname.as_str()), ("10.0.0.1", "h"));
    }
}
