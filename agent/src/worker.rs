//! The agent's thread: pulls on its interval, uploads at second 5 of each
//! cycle when this process is the host's reporter, and sleeps in between
//! until the next of the two is due or `stop` wakes it.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use sds_core::Points;
use sds_shm::{AnyTable, Role, RoleHold};

use crate::apply::apply;
use crate::config::{Clock, Level, LogFn};
use crate::http::Servers;
use crate::protocol::{
    cycle_start, CycleInfo, Identity, PullRequest, PullResponse, UploadRequest, CYCLE_MS,
    PULL_PATH, UPLOAD_OFFSET_MS, UPLOAD_PATH,
};
use crate::status::Status;

/// How long after a failed upload it is tried again (within its cycle).
const UPLOAD_RETRY_MS: u64 = 1_000;

/// What the agent's thread and its handle share.
pub struct Shared {
    pub stop: Mutex<bool>,
    pub wake: Condvar,
    pub status: Mutex<Status>,
    pub return_values: Mutex<Arc<HashMap<String, String>>>,
}

/// Locks `mutex`, also after a panic elsewhere (the data is plain values).
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Worker {
    pub table: Arc<AnyTable>,
    pub shared: Arc<Shared>,
    pub servers: Servers,
    pub identity: Identity,
    pub pull_interval_ms: u64,
    pub clock: Arc<dyn Clock>,
    pub log: Option<LogFn>,
    pub version: i64,
    pub role: Option<RoleHold>,
}

/// The first upload time at or after `now_ms`: second 5 of its cycle, or of
/// the next one when that has passed.
fn next_upload_after(now_ms: u64) -> u64 {
    let due = cycle_start(now_ms) + UPLOAD_OFFSET_MS;
    if now_ms <= due {
        due
    } else {
        due + CYCLE_MS
    }
}

impl Worker {
    pub fn run(mut self) {
        let start = self.clock.now_ms();
        let mut next_pull = start;
        let mut next_upload = next_upload_after(start);
        while !self.stopped() {
            let now = self.clock.now_ms();
            // A wall clock stepped back must not postpone the work.
            if next_pull > now + self.pull_interval_ms {
                next_pull = now;
            }
            if next_upload > next_upload_after(now) + CYCLE_MS {
                next_upload = next_upload_after(now);
            }
            if now >= next_pull {
                self.pull(now);
                next_pull = self.clock.now_ms() + self.pull_interval_ms;
            } else if now >= next_upload {
                next_upload = self.upload(now);
            } else {
                self.sleep(next_pull.min(next_upload) - now);
            }
        }
    }

    fn stopped(&self) -> bool {
        *lock(&self.shared.stop)
    }

    fn sleep(&self, clock_ms: u64) {
        let stop = lock(&self.shared.stop);
        if !*stop {
            let wait = self.clock.real_wait(clock_ms);
            drop(self.shared.wake.wait_timeout(stop, wait));
        }
    }

    fn log(&self, level: Level, message: &str) {
        if level >= Level::Warn {
            lock(&self.shared.status).last_error = message.to_string();
        }
        if let Some(log) = &self.log {
            log(level, message);
        }
    }

    fn status(&self, update: impl FnOnce(&mut Status)) {
        let mut status = lock(&self.shared.status);
        update(&mut status);
        status.server = self.servers.current().to_string();
    }

    fn point_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        let _ = self.table.with_points(|t| {
            t.for_each_point(&mut |_, name, _| {
                names.push(String::from_utf8_lossy(name).into_owned())
            })
        });
        names
    }

    fn pull(&mut self, now: u64) {
        // Tried on every tick, so the role is known from the start and a dead
        // reporter's role is taken at once; the upload keeps its own
        // schedule, so a cycle is still uploaded once.
        self.take_role();
        let request = PullRequest {
            identity: &self.identity,
            version: self.version,
            point_list: self.point_names(),
        };
        let json = serde_json::to_string(&request).expect("the request serialises");
        let outcome = self
            .servers
            .post(PULL_PATH, &json, pull_answer)
            .and_then(|response| self.take_response(response));
        let ok = match outcome {
            Ok(()) => true,
            Err(e) => {
                self.log(Level::Warn, &format!("SDS strategy pull failed: {e}"));
                false
            }
        };
        let version = self.version;
        self.status(|s| {
            s.last_pull_ms = now;
            s.last_pull_ok = ok;
            s.version = version;
            s.pull_failures += u64::from(!ok);
        });
    }

    /// Applies a pull's response; `Err` for a response that is refused
    /// whole (the strategies in force stay).
    fn take_response(&mut self, response: PullResponse) -> Result<(), String> {
        if response.changed != Some(true) {
            return Ok(());
        }
        let version = response
            .version
            .ok_or("malformed response: \"changed\" without a \"version\"")?;
        let strategies = response
            .strategies
            .ok_or("malformed response: \"changed\" without \"strategies\"")?;
        let old = lock(&self.shared.return_values).clone();
        let applied = self
            .table
            .with_points(|t| apply(t, &strategies, &old))
            .map_err(|e| format!("cannot apply the strategies: {e}"))?;
        for reason in &applied.refused {
            self.log(Level::Warn, &format!("SDS strategy refused: {reason}"));
        }
        *lock(&self.shared.return_values) = Arc::new(applied.return_values);
        if applied.retry {
            return Err(format!(
                "version {version} applied in part; it is pulled again"
            ));
        }
        self.version = version;
        self.log(
            Level::Info,
            &format!(
                "SDS strategies version {version}: {} in force, {} removed, {} refused",
                applied.set,
                applied.removed,
                applied.refused.len()
            ),
        );
        Ok(())
    }

    /// Uploads the last whole cycle if this process is the reporter;
    /// returns when to come back.
    fn upload(&mut self, now: u64) -> u64 {
        let next = cycle_start(now) + CYCLE_MS + UPLOAD_OFFSET_MS;
        if !self.take_role() {
            return next;
        }
        let points = self.cycle_infos(now);
        if points.is_empty() {
            // Nothing had traffic: the console would drop every point of the
            // app from its list, so nothing is sent.
            return next;
        }
        let request = UploadRequest {
            identity: &self.identity,
            statistics_cycle_time: cycle_start(now),
            point_info_map: points,
        };
        let json = serde_json::to_string(&request).expect("the request serialises");
        let outcome = self.servers.post(UPLOAD_PATH, &json, upload_answer);
        let ok = outcome.is_ok();
        if let Err(e) = outcome {
            self.log(Level::Warn, &format!("SDS statistics upload failed: {e}"));
        }
        self.status(|s| {
            s.last_upload_ms = now;
            s.last_upload_ok = ok;
            s.uploads += u64::from(ok);
            s.upload_failures += u64::from(!ok);
        });
        let retry = self.clock.now_ms() + UPLOAD_RETRY_MS;
        if ok || retry >= cycle_start(now) + CYCLE_MS {
            next
        } else {
            retry
        }
    }

    /// Holds or takes the host's reporter role.
    fn take_role(&mut self) -> bool {
        if self.role.is_none() {
            match self.table.try_take_role(Role::Reporter) {
                Ok(Some(hold)) => {
                    self.role = Some(hold);
                    self.status(|s| s.is_reporter = true);
                    self.log(
                        Level::Info,
                        "this process reports the host's SDS statistics",
                    );
                }
                Ok(None) => {}
                Err(e) => self.log(Level::Warn, &format!("cannot take the reporter role: {e}")),
            }
        }
        self.role.is_some()
    }

    /// The points with visits in the last whole cycle before `now`.
    fn cycle_infos(&self, now: u64) -> BTreeMap<String, CycleInfo> {
        let mut points = BTreeMap::new();
        let read = self.table.with_points(|t: &dyn Points| {
            t.for_each_point(&mut |_, name, point| {
                let cycle = point.stats(now).last_cycle;
                if cycle.visit_num > 0 {
                    let name = String::from_utf8_lossy(name).into_owned();
                    points.insert(
                        name.clone(),
                        CycleInfo {
                            point: name,
                            visit_num: cycle.visit_num,
                            exception_num: cycle.exception_num,
                            timeout_num: cycle.timeout_num,
                            downgrade_num: cycle.downgrade_num,
                            concurrent_num: cycle.concurrent_num,
                        },
                    );
                }
            })
        });
        if let Err(e) = read {
            self.log(Level::Warn, &format!("cannot read the table: {e}"));
        }
        points
    }
}

/// The pull's answer, unless it names an error.
fn pull_answer(body: &str) -> Result<PullResponse, String> {
    let response: PullResponse =
        serde_json::from_str(body).map_err(|e| format!("malformed response: {e}"))?;
    match response.error_msg.as_deref().filter(|m| !m.is_empty()) {
        Some(message) => Err(format!("the console answered: {message}")),
        None => Ok(response),
    }
}

/// The upload's answer: a JSON object whose `errorMsg`, if any, is null
/// or empty. Anything else (a proxy's page, an error) fails the upload.
fn upload_answer(body: &str) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("malformed response: {e}"))?;
    let object = value
        .as_object()
        .ok_or("malformed response: not a JSON object")?;
    match object.get("errorMsg") {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(serde_json::Value::String(m)) if m.is_empty() => Ok(()),
        Some(serde_json::Value::String(m)) => Err(format!("the console answered: {m}")),
        Some(_) => Err("malformed response: \"errorMsg\" is not a string".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_at_second_five_of_each_cycle() {
        assert_eq!(next_upload_after(20_000), 25_000);
        assert_eq!(next_upload_after(25_000), 25_000);
        assert_eq!(next_upload_after(25_001), 35_000);
        assert_eq!(next_upload_after(29_999), 35_000);
    }
}
