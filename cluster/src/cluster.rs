//! [`Cluster`]: the handle of one table's syncer thread.

use std::sync::{
    Arc, Condvar, Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard, TryLockError,
};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sds_core::MAX_NAME_LEN;
use sds_shm::AnyTable;

use crate::conn::{interrupt, Interrupt};
use crate::exact::Exact;
use crate::sync::{Outcome, Syncer};
use crate::{Config, Decision, Error, Status, SyncTable};

/// A wall clock in ms, as the syncer reads it.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The stop flag and the condition the thread sleeps on between periods.
#[derive(Default)]
struct Stop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

/// One table's cluster points and the thread that syncs them. Its methods
/// may be called from any thread; dropping it stops the thread
/// ([`Cluster::stop`]).
pub struct Cluster {
    syncer: Arc<Mutex<Syncer>>,
    status: Arc<Mutex<Status>>,
    stop: Arc<Stop>,
    /// The syncer thread, `None` once stopped. The calls that go to Redis
    /// hold it read ([`Cluster::calls`]); the stop takes it to write, so
    /// the calls in flight end first and none starts after it.
    thread: RwLock<Option<JoinHandle<()>>>,
    /// The status as of the stop.
    last: OnceLock<Status>,
    clock: Clock,
    table: Arc<dyn SyncTable>,
    config: Config,
    exact: Exact,
    /// The sockets of the syncer and of exact calls, shut down by a stop.
    interrupts: [Interrupt; 2],
}

impl Cluster {
    /// Marks `config.points` as cluster points of `table` and starts the
    /// syncer thread, reading the wall clock (`sds_clock::now_ms`). Never
    /// waits for Redis: an unreachable server shows in [`Cluster::status`].
    pub fn start(table: Arc<AnyTable>, config: Config) -> Result<Cluster, Error> {
        Cluster::start_with(table, config, Arc::new(sds_clock::now_ms))
    }

    /// [`Cluster::start`] over any [`SyncTable`], reading `clock` (tests
    /// inject time here).
    pub fn start_with(
        table: Arc<dyn SyncTable>,
        config: Config,
        clock: Clock,
    ) -> Result<Cluster, Error> {
        validate(&config)?;
        let status = Arc::new(Mutex::new(Status {
            points: config.points.len(),
            ..Status::default()
        }));
        let period = Duration::from_millis(config.sync_ms);
        let timeout = Duration::from_millis(config.timeout_ms);
        let interrupts = [Interrupt::default(), Interrupt::default()];
        let exact = Exact::new(&config, interrupts[1].clone());
        let mut syncer = Syncer::new(
            table.clone(),
            config.clone(),
            status.clone(),
            interrupts[0].clone(),
        );
        syncer.mark_points()?;
        // The role and the baseline now, not in the thread: what is counted
        // once `start` returns is pushed.
        syncer.try_role(clock());
        let syncer = Arc::new(Mutex::new(syncer));
        let stop = Arc::new(Stop::default());
        let thread = {
            let (syncer, stop, clock) = (syncer.clone(), stop.clone(), clock.clone());
            std::thread::Builder::new()
                .name("sds-cluster".into())
                .spawn(move || run(&syncer, &stop, &*clock, period, timeout))
                .map_err(|e| Error::Thread(e.to_string()))?
        };
        Ok(Cluster {
            syncer,
            status,
            stop,
            thread: RwLock::new(Some(thread)),
            last: OnceLock::new(),
            clock,
            table,
            config,
            exact,
            interrupts,
        })
    }

    /// Exact mode: decides one request on the cluster point `name` at
    /// `now_ms` in Redis, by one Lua script that checks the point's
    /// `visitThreshold` (the cluster's 10 s window) and token bucket (the
    /// cluster's current second), read from the point's strategy in the
    /// table, and counts the request, atomically. Blocks the caller for one
    /// round trip (callers of one `Cluster` queue on its connection); no
    /// `exit` follows. When Redis cannot be reached the decision is the
    /// core's local one (`Decision::exact` false; an enter and exit at
    /// once, counted in the table and pushed by the syncer after recovery),
    /// with no new attempt before a backoff.
    ///
    /// Fails when `name` is not one of `Config::points`, and with
    /// [`Error::Closed`] after [`Cluster::stop`].
    pub fn enter_exact(&self, name: &str, now_ms: u64) -> Result<Decision, Error> {
        let _running = self.calls()?;
        if !self.config.points.iter().any(|p| p == name) {
            return Err(Error::Table(
                sds_core::ErrorCode::InvalidArgument,
                format!("point {name:?} is not a cluster point of this cluster"),
            ));
        }
        let mut decision = Err(Error::Table(
            sds_core::ErrorCode::InvalidArgument,
            format!("point {name:?} is not in the table"),
        ));
        self.table
            .with_points(&mut |points: &dyn sds_core::Points| {
                if let Ok(Some(id)) = points.lookup(name.as_bytes()) {
                    if let Ok(point) = points.point(id) {
                        decision =
                            Ok(self
                                .exact
                                .decide(&self.config, name.as_bytes(), point, now_ms));
                    }
                }
            })?;
        decision
    }

    /// The syncer's state now; after [`Cluster::stop`], the state as of
    /// the stop, `lag_ms` included: it no longer grows (nothing is synced
    /// any more, and the remote counts leave the window within 10 s).
    pub fn status(&self) -> Status {
        if let Some(last) = self.last.get() {
            return last.clone();
        }
        let mut status = self.status.lock().map(|s| s.clone()).unwrap_or_default();
        if status.last_sync_ms > 0 {
            status.lag_ms = (self.clock)().saturating_sub(status.last_sync_ms);
        }
        status
    }

    /// Runs one sync now in the calling thread (after the thread's sync in
    /// progress, if any), connecting at once if there is no connection;
    /// all within one `timeout_ms` (to one server), the wait for the
    /// thread's sync included. `Ok` also when another process of the host
    /// holds the syncer role. [`Error::Closed`] after [`Cluster::stop`].
    pub fn sync_now(&self) -> Result<(), Error> {
        let _running = self.calls()?;
        let deadline = Instant::now() + Duration::from_millis(self.config.timeout_ms);
        let mut syncer = loop {
            match self.syncer.try_lock() {
                Ok(syncer) => break syncer,
                Err(TryLockError::Poisoned(_)) => {
                    return Err(Error::Thread("the syncer panicked".into()))
                }
                Err(TryLockError::WouldBlock) if Instant::now() >= deadline => {
                    return Err(Error::Redis(
                        "timed out: the sync in progress did not end within timeout_ms".into(),
                    ))
                }
                // The thread's sync ends within its own deadline.
                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(1)),
            }
        };
        match syncer.step((self.clock)(), true, deadline) {
            Outcome::Synced | Outcome::NotSyncer | Outcome::BackingOff => Ok(()),
            Outcome::Failed(message) => Err(Error::Redis(message)),
            Outcome::Stopped => Err(Error::Closed),
        }
    }

    /// Stops the thread and waits for it: a round trip in progress to one
    /// server, the thread's or an exact call's, is cut short (its socket
    /// shut down; the exact call decides locally), a connect in progress
    /// ends within `timeout_ms` (on a Redis Cluster: the crate's timeouts),
    /// and the calls in flight end before the join. Later calls fail with
    /// [`Error::Closed`], as does a `sync_now` cut short. The points stay
    /// cluster points; their remote counts age out of the window within
    /// 10 s. Returns the last state, as of the join (a round trip cut short
    /// is recorded as nothing: the last sync's state), which
    /// [`Cluster::status`] keeps giving. Idempotent.
    pub fn stop(&self) -> Status {
        if let Ok(mut stopped) = self.stop.stopped.lock() {
            *stopped = true;
        }
        self.stop.wake.notify_all();
        for slot in &self.interrupts {
            interrupt(slot);
        }
        let mut thread = self.thread.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(thread) = thread.take() {
            let _ = thread.join();
            let _ = self.last.set(self.status());
        }
        drop(thread);
        self.status()
    }

    /// Whether [`Cluster::stop`] has not been called yet.
    pub fn is_running(&self) -> bool {
        !*self
            .stop
            .stopped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// What a call to Redis holds while it runs: [`Error::Closed`] once
    /// stopped.
    fn calls(&self) -> Result<RwLockReadGuard<'_, Option<JoinHandle<()>>>, Error> {
        let thread = self.thread.read().unwrap_or_else(PoisonError::into_inner);
        match *thread {
            Some(_) => Ok(thread),
            None => Err(Error::Closed),
        }
    }
}

sds_settings::service!(Cluster, Status);

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(
    syncer: &Mutex<Syncer>,
    stop: &Stop,
    clock: &(dyn Fn() -> u64 + Send + Sync),
    period: Duration,
    timeout: Duration,
) {
    loop {
        if let Ok(mut syncer) = syncer.lock() {
            syncer.step(clock(), false, Instant::now() + timeout);
        }
        let Ok(stopped) = stop.stopped.lock() else {
            return;
        };
        let Ok((stopped, _)) = stop.wake.wait_timeout_while(stopped, period, |s| !*s) else {
            return;
        };
        if *stopped {
            return;
        }
    }
}

fn validate(config: &Config) -> Result<(), Error> {
    let bad = |m: String| Err(Error::InvalidConfig(m));
    if config.urls.is_empty() {
        return bad("urls: at least one Redis URL is needed".into());
    }
    for (i, url) in config.urls.iter().enumerate() {
        // The crate's reason only: a URL may carry a password.
        if let Err(e) = redis::IntoConnectionInfo::into_connection_info(url.as_str()) {
            return bad(format!("urls[{i}] is not a Redis URL: {e}"));
        }
    }
    crate::tls::validate(config)?;
    if config.sync_ms == 0 || config.timeout_ms == 0 {
        return bad("sync_ms and timeout_ms must be at least 1".into());
    }
    if config.key_prefix.contains(['{', '}']) {
        return bad(format!(
            "key_prefix {:?} holds a brace, which would break the hash tag",
            config.key_prefix
        ));
    }
    for (i, name) in config.points.iter().enumerate() {
        if name.is_empty() || name.len() > MAX_NAME_LEN {
            return bad(format!(
                "point name {name:?} must be 1 to {MAX_NAME_LEN} bytes"
            ));
        }
        // Twice, its counts would be pushed twice each sync.
        if let Some(first) = config.points[..i].iter().position(|p| p == name) {
            return bad(format!(
                "points[{i}] {name:?} is listed twice (also points[{first}])"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_urls(urls: &[&str]) -> Config {
        let mut config = Config::new("");
        config.urls = urls.iter().map(|u| u.to_string()).collect();
        config
    }

    #[test]
    fn a_url_that_is_no_redis_url_is_refused_without_its_password() {
        let refused = validate(&with_urls(&["redis://127.0.0.1:1", "http://u:secret@host"]));
        let Err(Error::InvalidConfig(message)) = refused else {
            panic!("accepted: {refused:?}");
        };
        assert!(
            message.starts_with("urls[1] is not a Redis URL: "),
            "{message}"
        );
        assert!(!message.contains("secret"), "{message}");
        assert!(validate(&with_urls(&["redis://u:p@127.0.0.1:1/2"])).is_ok());
    }

    #[test]
    fn a_point_listed_twice_is_refused() {
        let mut config = with_urls(&["redis://127.0.0.1:1"]);
        config.points = vec!["pay".into(), "search".into(), "pay".into()];
        let refused = validate(&config);
        let Err(Error::InvalidConfig(message)) = refused else {
            panic!("accepted: {refused:?}");
        };
        assert_eq!(
            message,
            r#"points[2] "pay" is listed twice (also points[0])"#
        );
        config.points.pop();
        assert!(validate(&config).is_ok());
    }
}
