//! The agent's thread: pulls on its interval, uploads at second 5 of each
//! cycle when this process is the host's reporter, and sleeps in between
//! until the next of the two is due or `stop` wakes it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use sds_core::Points;
use sds_shm::{AnyTable, Role, RoleHold};
use serde_json::value::RawValue;

use crate::apply::{apply, read_set, retry_waiting, Entry, CONSOLE_SHARE_DIVISOR};
use crate::config::{Clock, Level, LogFn};
use crate::http::Servers;
use crate::protocol::{
    cycle_start, CycleInfo, Identity, PullRequest, PullResponse, UploadRequest, CYCLE_MS,
    PULL_PATH, UPLOAD_OFFSET_MS, UPLOAD_PATH,
};
use crate::status::Status;

/// How long after an upload that was never sent it is tried again (within
/// its cycle).
const UPLOAD_RETRY_MS: u64 = 1_000;
/// The version held and sent while the console's version is null: any
/// number differs from null, so the console answers every pull with the
/// whole set (a client that sent null back would never see an edit).
pub const NULL_VERSION: i64 = -1;
/// The console's `heartbeat.point` column is VARCHAR(164): one longer name
/// fails the whole upload's insert, silently. Counted in UTF-16 units, as
/// Java counts a string's length.
pub const MAX_CONSOLE_NAME_CHARS: usize = 164;

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
    /// The JSON text of the set in force, to tell an edit on a console
    /// whose version stays null.
    pub set_text: Option<String>,
    /// Strategies of the set in force waiting for room in the table.
    pub waiting: Vec<Entry>,
    /// Names left out of uploads, each logged once.
    pub left_out: BTreeSet<String>,
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
            if next_pull > now.saturating_add(self.pull_interval_ms) {
                next_pull = now;
            }
            if next_upload > next_upload_after(now) + CYCLE_MS {
                next_upload = next_upload_after(now);
            }
            if now >= next_pull {
                self.pull(now);
                // Saturated: a huge interval means no pull before the end
                // of time, not an overflow into the past (a busy loop).
                next_pull = self.clock.now_ms().saturating_add(self.pull_interval_ms);
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
        // No line once stop was asked: a stop from the callback itself
        // returns before the thread ends, and its caller may free what
        // the callback uses.
        if let Some(log) = self.log.as_ref().filter(|_| !self.stopped()) {
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
            .map_err(|e| e.message)
            .and_then(|response| self.take_response(response, now));
        let ok = match outcome {
            Ok(()) => true,
            Err(e) => {
                self.log(Level::Warn, &format!("SDS strategy pull failed: {e}"));
                false
            }
        };
        self.retry_waiting();
        let version = self.version;
        let waiting = self.waiting.len() as u64;
        self.status(|s| {
            s.last_pull_ms = now;
            s.last_pull_ok = ok;
            s.version = version;
            s.pull_failures += u64::from(!ok);
            s.strategies_waiting = waiting;
        });
    }

    /// Applies the strategies that waited for room, if there is room now
    /// (or their point was created by the application meanwhile).
    fn retry_waiting(&mut self) {
        if self.waiting.is_empty() {
            return;
        }
        let capacity = self.table.capacity();
        let mut values = (**lock(&self.shared.return_values)).clone();
        let waiting = &mut self.waiting;
        let applied = self
            .table
            .with_points(|t| retry_waiting(t, capacity, waiting, &mut values))
            .unwrap_or(0);
        if applied > 0 {
            *lock(&self.shared.return_values) = Arc::new(values);
            self.log(
                Level::Info,
                &format!(
                    "SDS strategies: {applied} that waited for room applied, {} still wait",
                    self.waiting.len()
                ),
            );
        }
    }

    /// Applies a pull's response; `Err` for a response that is refused
    /// whole (the strategies in force stay).
    fn take_response(&mut self, response: PullResponse, now: u64) -> Result<(), String> {
        if response.changed != Some(true) {
            return Ok(());
        }
        let text = response
            .strategies
            .as_ref()
            .map(|raw| raw.get().to_string());
        // A console whose version is null answers every pull with the whole
        // set: only a set that differs from the one in force is applied.
        if response.version.is_none() && self.version == NULL_VERSION && text == self.set_text {
            return Ok(());
        }
        // Null strategies: the scheme has no enabled strategy, the empty set.
        let raws: Vec<Box<RawValue>> = match &text {
            None => Vec::new(),
            Some(text) => serde_json::from_str(text)
                .map_err(|e| format!("malformed response: \"strategies\" is not a list: {e}"))?,
        };
        let read = read_set(&raws);
        let old = lock(&self.shared.return_values).clone();
        let capacity = self.table.capacity();
        let applied = self
            .table
            .with_points(|t| apply(t, capacity, read, &old))
            .map_err(|e| format!("cannot apply the strategies: {e}"))?;
        for warning in &applied.warnings {
            self.log(Level::Warn, &format!("SDS strategy {warning}"));
        }
        if !applied.waiting.is_empty() {
            self.log(
                Level::Warn,
                &format!(
                    "SDS strategies: {} wait for room: their points are not in the table and the \
                     console may create points only while the table holds at most {} of its {capacity}",
                    applied.waiting.len(),
                    capacity / CONSOLE_SHARE_DIVISOR
                ),
            );
        }
        *lock(&self.shared.return_values) = Arc::new(applied.return_values);
        self.version = response.version.unwrap_or(NULL_VERSION);
        self.set_text = text;
        self.waiting = applied.waiting;
        // The pull's outcome recorded with the new set, at once (the end of
        // the pull writes the same again): a reader who sees the version
        // sees the set in force and the pull that brought it.
        let (held, waiting) = (self.version, self.waiting.len() as u64);
        self.status(|s| {
            s.version = held;
            s.last_pull_ms = now;
            s.last_pull_ok = true;
            s.strategies_waiting = waiting;
        });
        let version = match response.version {
            Some(v) => v.to_string(),
            None => "null".into(),
        };
        self.log(
            Level::Info,
            &format!(
                "SDS strategies version {version}: {} in force, {} removed, {} waiting, {} warnings",
                applied.set,
                applied.removed,
                self.waiting.len(),
                applied.warnings.len()
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
            // No point at all: nothing to report (the console would store
            // nothing of an empty map).
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
        // The console stores every request it processes: one that may have
        // reached it (a timeout, an answer it gave) is never sent again, so
        // a cycle is stored at most once; one never sent is retried.
        let retry_allowed = match &outcome {
            Ok(()) => false,
            Err(e) if e.maybe_sent => {
                self.log(
                    Level::Warn,
                    &format!(
                        "SDS statistics upload failed: {e} (the console may have received it: not sent again)"
                    ),
                );
                false
            }
            Err(e) => {
                self.log(Level::Warn, &format!("SDS statistics upload failed: {e}"));
                true
            }
        };
        self.status(|s| {
            s.last_upload_ms = now;
            s.last_upload_ok = ok;
            s.uploads += u64::from(ok);
            s.upload_failures += u64::from(!ok);
        });
        let retry = self.clock.now_ms().saturating_add(UPLOAD_RETRY_MS);
        if !retry_allowed || retry >= cycle_start(now) + CYCLE_MS {
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

    /// Every point of the table with its last whole cycle before `now`,
    /// zero-visit ones too (the console deletes a point missing from an
    /// upload from the app's point list), except names the console cannot
    /// store: one would cost every point its cycle.
    fn cycle_infos(&mut self, now: u64) -> BTreeMap<String, CycleInfo> {
        let mut points = BTreeMap::new();
        let mut too_long = BTreeSet::new();
        let read = self.table.with_points(|t: &dyn Points| {
            t.for_each_point(&mut |_, name, point| {
                let name = String::from_utf8_lossy(name).into_owned();
                if name.encode_utf16().count() > MAX_CONSOLE_NAME_CHARS {
                    too_long.insert(name);
                    return;
                }
                let cycle = point.stats(now).last_cycle;
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
            })
        });
        if let Err(e) = read {
            self.log(Level::Warn, &format!("cannot read the table: {e}"));
        }
        for name in too_long.difference(&self.left_out) {
            self.log(
                Level::Warn,
                &format!(
                    "SDS statistics leave out point \"{name}\": the console stores names of at most \
                     {MAX_CONSOLE_NAME_CHARS} characters (its forms manage letters, digits and '-')"
                ),
            );
        }
        let count = too_long.len() as u64;
        self.left_out = too_long;
        self.status(|s| s.points_left_out = count);
        points
    }
}

/// The pull's answer, unless it names an error. Only a JSON object: serde's
/// derive would take an array's elements as the fields in order (`[]` a
/// pull with nothing changed, `[true, 5, []]` an empty set applied).
fn pull_answer(body: &str) -> Result<PullResponse, String> {
    if !body.trim_start().starts_with('{') {
        return Err("malformed response: not a JSON object".into());
    }
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

    /// Found by tests/console_props.rs (`spoiled_answers_apply_nothing`,
    /// minimal input `[]`): an array was read as the response's fields in
    /// order.
    #[test]
    fn a_pull_answer_is_an_object_only() {
        for text in [
            "[]",
            r#"[true, 5, [{"point": "a"}]]"#,
            " [null]",
            "5",
            "\"x\"",
        ] {
            let e = pull_answer(text).unwrap_err();
            assert_eq!(e, "malformed response: not a JSON object", "{text}");
        }
        assert!(pull_answer(r#" {"changed": false}"#).is_ok());
    }

    #[test]
    fn uploads_at_second_five_of_each_cycle() {
        assert_eq!(next_upload_after(20_000), 25_000);
        assert_eq!(next_upload_after(25_000), 25_000);
        assert_eq!(next_upload_after(25_001), 35_000);
        assert_eq!(next_upload_after(29_999), 35_000);
    }
}
