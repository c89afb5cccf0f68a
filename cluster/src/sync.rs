//! [`Syncer`]: one period of the sync, and the state it keeps between
//! periods (the role, the connection and its backoff, what was pushed).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use redis::Cmd;
use sds_core::{Points, SecondCounts, SECOND_MS, WINDOW_SECONDS};

use crate::keys::{expires_at_ms, own_fields, second_key, FIELDS};
use crate::link::{Batch, Link};
use crate::pushed::{Counts, Delta, Pushed, KINDS};
use crate::{Config, Error, Status, SyncTable};

/// One point's answers: per second read back, the four fields.
type Answer = Result<Vec<Vec<Option<u64>>>, String>;

/// A cluster point as the syncer tracks it.
struct Tracked {
    name: Vec<u8>,
    pushed: Pushed,
}

/// What one period did.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Pushed and read back.
    Synced,
    /// Another process of the host holds the syncer role.
    NotSyncer,
    /// Waiting before the next connection attempt.
    BackingOff,
    /// The connection or the round trip failed.
    Failed(String),
}

pub(crate) struct Syncer {
    table: Arc<dyn SyncTable>,
    config: Config,
    points: Vec<Tracked>,
    role: Option<Box<dyn Send>>,
    link: Option<Link>,
    next_connect_ms: u64,
    backoff_ms: u64,
    status: Arc<Mutex<Status>>,
    /// This syncer's hash fields (`v:<random id>` ...).
    mine: [String; KINDS],
}

/// A random id per syncer: its fields in Redis are its own.
fn instance_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

/// The seconds read back at `now_s`: the window, and the next second for
/// instances whose clocks run a little ahead.
fn read_seconds(now_s: u64) -> std::ops::RangeInclusive<u64> {
    now_s.saturating_sub(WINDOW_SECONDS - 1)..=now_s + 1
}

impl Syncer {
    pub(crate) fn new(
        table: Arc<dyn SyncTable>,
        config: Config,
        status: Arc<Mutex<Status>>,
    ) -> Syncer {
        let points = config
            .points
            .iter()
            .map(|name| Tracked {
                name: name.as_bytes().to_vec(),
                pushed: Pushed::new(),
            })
            .collect();
        Syncer {
            table,
            backoff_ms: config.sync_ms,
            config,
            points,
            role: None,
            link: None,
            next_connect_ms: 0,
            status,
            mine: own_fields(&instance_id()),
        }
    }

    /// Makes every configured point a cluster point of the table.
    pub(crate) fn mark_points(&self) -> Result<(), Error> {
        let mut result = Ok(());
        self.table.with_points(&mut |points: &dyn Points| {
            for t in &self.points {
                match points.insert(&t.name) {
                    Ok(id) => match points.point(id) {
                        Ok(point) => point.set_cluster(true),
                        Err(e) => result = Err(Error::Table(e.code(), e.to_string())),
                    },
                    Err(e) => {
                        result = Err(Error::Table(
                            e.code(),
                            format!("point {:?}: {e}", String::from_utf8_lossy(&t.name)),
                        ))
                    }
                }
            }
        })?;
        result
    }

    /// One period at `now_ms`. `force`: connect now even while backing off.
    pub(crate) fn step(&mut self, now_ms: u64, force: bool) -> Outcome {
        let now_s = now_ms / SECOND_MS;
        if self.role.is_none() && !self.take_role(now_s) {
            self.update(|s| s.syncing = false);
            return Outcome::NotSyncer;
        }
        let deltas = match self.collect(now_s) {
            Ok(deltas) => deltas,
            Err(e) => return self.failed(now_ms, e.to_string()),
        };
        if self.link.is_none() {
            if !force && now_ms < self.next_connect_ms {
                self.publish(now_s);
                return Outcome::BackingOff;
            }
            match Link::connect(&self.config) {
                Ok(link) => self.link = Some(link),
                Err(e) => {
                    self.publish(now_s);
                    return self.failed(now_ms, format!("connect: {e}"));
                }
            }
        }
        let batches = self.batches(&deltas, now_s);
        let started = Instant::now();
        let sent = match self.link.as_mut() {
            Some(link) => link.run_each::<Vec<Option<u64>>>(&batches),
            None => return Outcome::Failed("no connection".into()),
        };
        let rtt_us = started.elapsed().as_micros() as u64;
        self.update(|s| {
            s.round_trips += sent.round_trips as u64;
            s.commands += sent.commands as u64;
        });
        let answers = sent.answers;
        let failing: Vec<String> = self
            .points
            .iter()
            .zip(&answers)
            .filter_map(|(t, answer)| {
                let e = answer.as_ref().err()?;
                Some(format!("{}: {e}", String::from_utf8_lossy(&t.name)))
            })
            .collect();
        self.absorb(&deltas, &answers, now_s);
        if !failing.is_empty() {
            // A fresh connection next period, at once: the `redis` crate
            // keeps a Cluster node's broken socket, so a restarted master
            // is only found again by a new connection (which also reads
            // the slot map again).
            self.link = None;
            self.next_connect_ms = 0;
            let all = failing.len() == self.points.len();
            self.update(|s| s.points_failing = failing.len());
            let message = format!("sync: {}", failing.join("; "));
            if all {
                return self.failed(now_ms, message);
            }
            self.update(|s| {
                s.failures += 1;
                s.last_error = Some(message.clone());
            });
        }
        self.backoff_ms = self.config.sync_ms;
        self.update(|s| {
            s.connected = true;
            s.last_sync_ms = now_ms;
            s.rtt_us = rtt_us;
            s.syncs += 1;
            if failing.is_empty() {
                s.last_error = None;
                s.points_failing = 0;
            }
        });
        Outcome::Synced
    }

    /// Takes the host's syncer role if it is free (see `step`).
    pub(crate) fn try_role(&mut self, now_ms: u64) {
        if self.role.is_none() {
            self.take_role(now_ms / SECOND_MS);
        }
    }

    fn take_role(&mut self, now_s: u64) -> bool {
        match self.table.take_syncer_role() {
            Ok(Some(hold)) => {
                self.role = Some(hold);
                // Marked again: the points may have been created since, and
                // counted before now is counted as pushed (a dead syncer of
                // a shared table pushed it, or nobody needs it).
                let _ = self.mark_points();
                let points = &mut self.points;
                let _ = self.table.with_points(&mut |table: &dyn Points| {
                    for t in points.iter_mut() {
                        if let Ok(Some(id)) = table.lookup(&t.name) {
                            if let Ok(point) = table.point(id) {
                                t.pushed.baseline(point, now_s);
                            }
                        }
                    }
                });
                self.update(|s| s.syncing = true);
                true
            }
            _ => false,
        }
    }

    /// Every point's deltas, in the order of `self.points`.
    fn collect(&mut self, now_s: u64) -> Result<Vec<Vec<Delta>>, Error> {
        let mut all = Vec::with_capacity(self.points.len());
        let points = &mut self.points;
        self.table.with_points(&mut |table: &dyn Points| {
            for t in points.iter_mut() {
                let deltas = match table.lookup(&t.name) {
                    Ok(Some(id)) => match table.point(id) {
                        Ok(point) => t.pushed.deltas(point, now_s),
                        Err(_) => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                all.push(deltas);
            }
        })?;
        Ok(all)
    }

    /// Per point, one batch (on the slot of its hash tag): the deltas (HINCRBY, then PEXPIREAT on each
    /// key written) and one HMGET per second read back, in this order, so
    /// the totals include this sync's own deltas.
    fn batches(&self, deltas: &[Vec<Delta>], now_s: u64) -> Vec<Batch> {
        let prefix = &self.config.key_prefix;
        let mut batches = Vec::with_capacity(self.points.len());
        for (t, deltas) in self.points.iter().zip(deltas) {
            let mut batch = Batch::new(&second_key(prefix, &t.name, now_s));
            for d in deltas {
                let key = second_key(prefix, &t.name, d.second);
                for ((field, mine), n) in FIELDS.iter().zip(&self.mine).zip(d.counts) {
                    if n > 0 {
                        for f in [*field, mine.as_str()] {
                            let mut cmd = Cmd::new();
                            cmd.arg("HINCRBY").arg(&key).arg(f).arg(n);
                            batch.push(cmd, false);
                        }
                    }
                }
                let mut cmd = Cmd::new();
                cmd.arg("PEXPIREAT").arg(&key).arg(expires_at_ms(d.second));
                batch.push(cmd, false);
            }
            for s in read_seconds(now_s) {
                let mut cmd = Cmd::new();
                cmd.arg("HMGET")
                    .arg(second_key(prefix, &t.name, s))
                    .arg(&FIELDS[..])
                    .arg(&self.mine[..]);
                batch.push(cmd, true);
            }
            batches.push(batch);
        }
        batches
    }

    /// For each point whose batch succeeded: records the pushed deltas and
    /// stores the others' counts (the totals minus this table's own share).
    /// Every point is published; a failed point's deltas are pushed again
    /// by the next sync.
    fn absorb(&mut self, deltas: &[Vec<Delta>], answers: &[Answer], now_s: u64) {
        let seconds: Vec<u64> = read_seconds(now_s).collect();
        let points = &mut self.points;
        let _ = self.table.with_points(&mut |table: &dyn Points| {
            for ((t, deltas), answer) in points.iter_mut().zip(deltas).zip(answers) {
                let point = match table.lookup(&t.name) {
                    Ok(Some(id)) => match table.point(id) {
                        Ok(point) => point,
                        Err(_) => continue,
                    },
                    _ => continue,
                };
                let Ok(totals) = answer else {
                    point.publish_remote(now_s);
                    continue;
                };
                t.pushed.confirm(deltas);
                for (j, &s) in seconds.iter().enumerate() {
                    let field = |k: usize| {
                        totals
                            .get(j)
                            .and_then(|v| v.get(k).copied().flatten())
                            .unwrap_or(0)
                    };
                    let mine: Counts = std::array::from_fn(|k| field(KINDS + k));
                    if s <= now_s {
                        // (The next second's slot holds the ring's oldest.)
                        t.pushed.settle(s, mine);
                    }
                    let base = t.pushed.base(s);
                    let others: Counts =
                        std::array::from_fn(|k| field(k).saturating_sub(mine[k] + base[k]));
                    let counts = SecondCounts {
                        visit: others[0],
                        downgrade: others[1],
                        exception: others[2],
                        timeout: others[3],
                    };
                    point.store_remote(now_s, s, &counts);
                }
                point.publish_remote(now_s);
            }
        });
    }

    /// Publishes the remote counts for `now_s` without new ones, so that
    /// decisions keep their fast read and stale counts leave the window.
    fn publish(&self, now_s: u64) {
        let _ = self.table.with_points(&mut |table: &dyn Points| {
            for t in &self.points {
                if let Ok(Some(id)) = table.lookup(&t.name) {
                    if let Ok(point) = table.point(id) {
                        point.publish_remote(now_s);
                    }
                }
            }
        });
    }

    fn failed(&mut self, now_ms: u64, message: String) -> Outcome {
        self.next_connect_ms = now_ms + self.backoff_ms;
        self.backoff_ms = (self.backoff_ms * 2).min(self.config.max_backoff_ms.max(1));
        self.update(|s| {
            s.connected = false;
            s.failures += 1;
            s.last_error = Some(message.clone());
            s.points_failing = s.points;
        });
        Outcome::Failed(message)
    }

    fn update(&self, f: impl FnOnce(&mut Status)) {
        if let Ok(mut status) = self.status.lock() {
            f(&mut status);
        }
    }
}
