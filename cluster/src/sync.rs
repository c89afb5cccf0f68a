//! [`Syncer`]: one period of the sync, and the state it keeps between
//! periods (the role, the connection and its backoff, what was pushed).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use redis::Cmd;
use sds_core::{Points, SecondCounts, RING_SECONDS, SECOND_MS, WINDOW_SECONDS};

use crate::conn::{forget, stopped, Interrupt};
use crate::keys::{expires_at_ms, own_fields, second_key, FIELDS};
use crate::link::{Batch, Link};
use crate::pushed::{Counts, Delta, Pushed, KINDS};
use crate::resp::Reply;
use crate::status::cap_message;
use crate::{Config, Error, Status, SyncTable};

/// One point's replies, one per command of its batch.
type Answer = Result<Vec<Reply>, String>;

/// What a command of a point's batch was, to read its reply.
#[derive(Clone, Copy)]
enum Role {
    /// An HINCRBY of `deltas[delta]`'s kind `kind`: of the total field, or
    /// of this syncer's own (`own`).
    Incr {
        delta: usize,
        kind: usize,
        own: bool,
    },
    Expire,
    /// An HMGET of `second`: the totals and the own fields (`totals`), or
    /// the own fields only (an older second, to find what Redis lost).
    Read {
        second: u64,
        totals: bool,
    },
}

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
    /// A stop cut the connection or the round trip short: nothing is
    /// recorded, the status stays the last sync's.
    Stopped,
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
    /// The socket a stop shuts down.
    interrupt: Interrupt,
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
        interrupt: Interrupt,
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
            interrupt,
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
    /// Connecting and the round trip (to one server) end by `deadline`
    /// together.
    pub(crate) fn step(&mut self, now_ms: u64, force: bool, deadline: Instant) -> Outcome {
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
            match Link::connect(&self.config, deadline, Some(&self.interrupt)) {
                Ok(link) => self.link = Some(link),
                Err(e) => {
                    forget(&self.interrupt);
                    self.publish(now_s);
                    if stopped(&self.interrupt) {
                        return Outcome::Stopped;
                    }
                    return self.failed(now_ms, format!("connect: {e}"));
                }
            }
        }
        let (batches, roles) = self.batches(&deltas, now_s);
        let started = Instant::now();
        let sent = match self.link.as_mut() {
            Some(link) => link.run_each(&batches, deadline),
            None => return Outcome::Failed("no connection".into()),
        };
        let rtt_us = started.elapsed().as_micros() as u64;
        // Counted in the same update as the sync's outcome below, so a
        // reader never sees a round trip without the sync it belongs to.
        let (trips, commands) = (sent.round_trips as u64, sent.commands as u64);
        let count = |s: &mut Status| {
            s.round_trips += trips;
            s.commands += commands;
        };
        let answers = sent.answers;
        // A link that failed for a point (down, silent, a protocol error):
        // a fresh connection next period, at once (the `redis` crate keeps
        // a Cluster node's broken socket, so a restarted master is only
        // found again by a new connection, which reads the slot map again).
        let unreachable = answers.iter().filter(|a| a.is_err()).count();
        let failing = self.absorb(&deltas, &roles, &answers, now_s);
        if unreachable > 0 {
            self.link = None;
            forget(&self.interrupt);
            self.next_connect_ms = 0;
            // Its socket shut down by a stop: no failure of the server's.
            if stopped(&self.interrupt) {
                return Outcome::Stopped;
            }
        }
        if !failing.is_empty() {
            // One link that failed for all (one server): said once.
            let message = match answers.first() {
                Some(Err(e))
                    if unreachable == answers.len()
                        && answers.iter().all(|a| a.as_ref().err() == Some(e)) =>
                {
                    format!("sync: {e}")
                }
                _ => format!("sync: {}", failing.join("; ")),
            };
            let message = cap_message(message);
            if unreachable == self.points.len() {
                self.update(count);
                return self.failed(now_ms, message);
            }
            self.update(|s| {
                count(s);
                s.points_failing = failing.len();
                s.failures += 1;
                s.last_error = Some(message.clone());
            });
        }
        self.backoff_ms = self.config.sync_ms;
        self.update(|s| {
            if failing.is_empty() {
                count(s);
            }
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

    /// Per point, one batch (on the slot of its hash tag), and what each
    /// of its commands is: the deltas (HINCRBY of the total and of the own
    /// field, then PEXPIREAT on each key written) and one HMGET per second
    /// read back, in this order, so the totals include this sync's own
    /// deltas; then, for the older seconds of the ring this syncer pushed
    /// to, an HMGET of its own fields (so that a loss of data is found for
    /// the whole ring, not only the window read).
    fn batches(&self, deltas: &[Vec<Delta>], now_s: u64) -> (Vec<Batch>, Vec<Vec<Role>>) {
        let prefix = &self.config.key_prefix;
        let mut batches = Vec::with_capacity(self.points.len());
        let mut all_roles = Vec::with_capacity(self.points.len());
        for (t, deltas) in self.points.iter().zip(deltas) {
            let mut batch = Batch::new(&second_key(prefix, &t.name, now_s));
            let mut roles = Vec::new();
            for (i, d) in deltas.iter().enumerate() {
                let key = second_key(prefix, &t.name, d.second);
                for (kind, ((field, mine), n)) in
                    FIELDS.iter().zip(&self.mine).zip(d.counts).enumerate()
                {
                    if n > 0 {
                        for (f, own) in [(*field, false), (mine.as_str(), true)] {
                            let mut cmd = Cmd::new();
                            cmd.arg("HINCRBY").arg(&key).arg(f).arg(n);
                            batch.push(cmd);
                            roles.push(Role::Incr {
                                delta: i,
                                kind,
                                own,
                            });
                        }
                    }
                }
                let mut cmd = Cmd::new();
                cmd.arg("PEXPIREAT").arg(&key).arg(expires_at_ms(d.second));
                batch.push(cmd);
                roles.push(Role::Expire);
            }
            for s in read_seconds(now_s) {
                let mut cmd = Cmd::new();
                cmd.arg("HMGET")
                    .arg(second_key(prefix, &t.name, s))
                    .arg(&FIELDS[..])
                    .arg(&self.mine[..]);
                batch.push(cmd);
                roles.push(Role::Read {
                    second: s,
                    totals: true,
                });
            }
            let window = *read_seconds(now_s).start();
            for s in now_s.saturating_sub(RING_SECONDS - 1)..window {
                if t.pushed.mine(s) != [0; KINDS] {
                    let mut cmd = Cmd::new();
                    cmd.arg("HMGET")
                        .arg(second_key(prefix, &t.name, s))
                        .arg(&self.mine[..]);
                    batch.push(cmd);
                    roles.push(Role::Read {
                        second: s,
                        totals: false,
                    });
                }
            }
            batches.push(batch);
            all_roles.push(roles);
        }
        (batches, all_roles)
    }

    /// For each point whose batch was sent: records as pushed each delta
    /// that Redis applied (one of its two HINCRBYs succeeded: an applied
    /// increment is never pushed again, one that failed on both fields is),
    /// and stores the others' counts (the totals minus this table's own
    /// share). A command that failed, or a field that holds no count, fails
    /// that command or field only. Every point is published. Returns, per
    /// failing point, why.
    fn absorb(
        &mut self,
        deltas: &[Vec<Delta>],
        roles: &[Vec<Role>],
        answers: &[Answer],
        now_s: u64,
    ) -> Vec<String> {
        let mut failing = Vec::new();
        let points = &mut self.points;
        let prefix = &self.config.key_prefix;
        let _ = self.table.with_points(&mut |table: &dyn Points| {
            for (((t, deltas), roles), answer) in
                points.iter_mut().zip(deltas).zip(roles).zip(answers)
            {
                let name = String::from_utf8_lossy(&t.name).into_owned();
                let replies = match answer {
                    Ok(replies) => replies,
                    Err(e) => {
                        failing.push(format!("{name}: {e}"));
                        if let Some(point) = lookup(table, &t.name) {
                            point.publish_remote(now_s);
                        }
                        continue;
                    }
                };
                let mut errors = Vec::new();
                let mut applied: Vec<[bool; KINDS]> = vec![[false; KINDS]; deltas.len()];
                let mut reads = Vec::new();
                for (role, reply) in roles.iter().zip(replies) {
                    match (*role, reply) {
                        (Role::Incr { delta, kind, own }, reply) => match reply {
                            Reply::Error(e) => {
                                let d = &deltas[delta];
                                let field = if own { "own field" } else { "field" };
                                errors.push(format!(
                                    "HINCRBY {} {field} {}: {e}",
                                    key_text(prefix, &t.name, d.second),
                                    FIELDS[kind]
                                ));
                            }
                            _ => applied[delta][kind] = true,
                        },
                        (Role::Expire, Reply::Error(e)) => errors.push(format!("PEXPIREAT: {e}")),
                        (Role::Expire, _) => {}
                        (Role::Read { second, totals }, reply) => {
                            match read_fields(reply, totals) {
                                Ok(Some(fields)) => reads.push((second, totals, fields)),
                                Ok(None) => {}
                                Err(why) => errors
                                    .push(format!("{}: {why}", key_text(prefix, &t.name, second))),
                            }
                        }
                    }
                }
                let confirmed: Vec<Delta> = deltas
                    .iter()
                    .zip(&applied)
                    .map(|(d, applied)| Delta {
                        second: d.second,
                        counts: std::array::from_fn(|k| if applied[k] { d.counts[k] } else { 0 }),
                    })
                    .collect();
                t.pushed.confirm(&confirmed);
                let point = lookup(table, &t.name);
                for (s, totals, fields) in reads {
                    let (total, mine): ([Option<u64>; KINDS], [Option<u64>; KINDS]) = if totals {
                        (
                            std::array::from_fn(|k| fields[k]),
                            std::array::from_fn(|k| fields[KINDS + k]),
                        )
                    } else {
                        ([None; KINDS], std::array::from_fn(|k| fields[k]))
                    };
                    for (k, f) in FIELDS.iter().enumerate() {
                        if totals && total[k].is_none() {
                            errors.push(format!(
                                "{} field {f} holds no count",
                                key_text(prefix, &t.name, s)
                            ));
                        }
                        if mine[k].is_none() {
                            errors.push(format!(
                                "{} own field {f} holds no count",
                                key_text(prefix, &t.name, s)
                            ));
                        }
                    }
                    if s <= now_s {
                        // (The next second's slot holds the ring's oldest.)
                        t.pushed.settle(s, mine);
                    }
                    if !totals {
                        continue;
                    }
                    let Some(point) = point else { continue };
                    let base = t.pushed.base(s);
                    let own = t.pushed.mine(s);
                    let others: Counts = std::array::from_fn(|k| {
                        let mine = mine[k].unwrap_or(own[k]);
                        total[k].unwrap_or(0).saturating_sub(mine + base[k])
                    });
                    let counts = SecondCounts {
                        visit: others[0],
                        downgrade: others[1],
                        exception: others[2],
                        timeout: others[3],
                    };
                    point.store_remote(now_s, s, &counts);
                }
                if let Some(point) = point {
                    point.publish_remote(now_s);
                }
                if !errors.is_empty() {
                    failing.push(format!("{name}: {}", errors.join(", ")));
                }
            }
        });
        failing
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
        let message = cap_message(message);
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

/// The point `name` of `table`, if it is there.
fn lookup<'a>(table: &'a dyn Points, name: &[u8]) -> Option<&'a sds_core::Point> {
    table.point(table.lookup(name).ok()??).ok()
}

/// A key as text, for a message.
fn key_text(prefix: &str, point: &[u8], second: u64) -> String {
    String::from_utf8_lossy(&second_key(prefix, point, second)).into_owned()
}

/// The fields of an HMGET's reply (an absent field is 0; one that holds
/// no count is `None`); `Ok(None)`: applied but not given back (a Redis
/// Cluster pipeline in which another command failed).
fn read_fields(reply: &Reply, totals: bool) -> Result<Option<Vec<Option<u64>>>, String> {
    let wanted = if totals { 2 * KINDS } else { KINDS };
    match reply {
        Reply::Array(Some(items)) if items.len() == wanted => Ok(Some(
            items
                .iter()
                .map(|item| match item {
                    Reply::Bulk(None) => Some(0),
                    item => item.count(),
                })
                .collect(),
        )),
        Reply::Applied => Ok(None),
        Reply::Error(e) => Err(format!("HMGET: {e}")),
        _ => Err("HMGET: an unexpected reply".into()),
    }
}
