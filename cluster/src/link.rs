//! [`Link`]: the syncer's connection, to one Redis server ([`Conn`]: one
//! deadline per round trip) or to a Redis Cluster (the `redis` crate, with
//! its timeouts per socket read); a sync's batches are one round trip (one
//! per master on a Redis Cluster: see [`Link::run_each`]).

use std::time::{Duration, Instant};

use redis::cluster::{ClusterClientBuilder, ClusterConnection, ClusterPipeline};
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, RedisResult, Value};

use crate::conn::{Conn, Interrupt};
use crate::resp::Reply;
use crate::slots::{slot_of, Master, SlotMap};
use crate::Config;

/// How long a Redis Cluster's slot map is used before it is read again.
/// The `redis` crate follows a slot that moved to another live master
/// (resharding) on its own, so a sync does not fail on a stale map; but
/// until it is read again, a pipeline built for the old master is split by
/// the crate into one per node, and if one of those nodes fails, the
/// crate fails the whole pipeline after the other node applied its part.
const SLOT_MAP_MAX_AGE: Duration = Duration::from_secs(30);

/// A live connection.
pub(crate) enum Link {
    Single(Conn),
    Cluster {
        connection: Box<ClusterConnection>,
        /// The slot map and when it was read: by the first sync on this
        /// connection (a failing sync drops the connection, so the next one
        /// reads it again), then every [`SLOT_MAP_MAX_AGE`].
        slots: Option<(SlotMap, Instant)>,
    },
}

/// Commands on the keys of one hash slot (one point's), sent together;
/// every command's reply comes back, in order.
pub(crate) struct Batch {
    commands: Vec<Cmd>,
    slot: u16,
}

impl Batch {
    /// An empty batch for the commands on `key`'s slot.
    pub(crate) fn new(key: &[u8]) -> Batch {
        Batch {
            commands: Vec::new(),
            slot: slot_of(key),
        }
    }

    pub(crate) fn push(&mut self, cmd: Cmd) {
        self.commands.push(cmd);
    }

    pub(crate) fn len(&self) -> usize {
        self.commands.len()
    }
}

impl Link {
    /// Connects: to one server before `deadline` (a TCP socket left in
    /// `interrupt` for a stop); to a Redis Cluster with `config`'s timeout
    /// on each connect, read and write (the crate's).
    pub(crate) fn connect(
        config: &Config,
        deadline: Instant,
        interrupt: Option<&Interrupt>,
    ) -> Result<Link, String> {
        if !config.redis_cluster {
            return Conn::open(&config.urls[0], config, deadline, interrupt)
                .map(Link::Single)
                .map_err(|e| e.to_string());
        }
        let timeout = Duration::from_millis(config.timeout_ms);
        sds_tls::install_provider();
        let certificates = crate::tls::certificates(config).map_err(|e| e.to_string())?;
        let connect = || -> RedisResult<Link> {
            let builder = ClusterClientBuilder::new(config.urls.iter().map(String::as_str))
                .connection_timeout(timeout)
                .response_timeout(timeout)
                .retries(1);
            let builder = match certificates {
                Some(certificates) => builder.certs(certificates),
                None => builder,
            };
            let connection = builder.build()?.get_connection()?;
            connection.set_read_timeout(Some(timeout))?;
            connection.set_write_timeout(Some(timeout))?;
            Ok(Link::Cluster {
                connection: Box::new(connection),
                slots: None,
            })
        };
        connect().map_err(|e| e.to_string())
    }

    /// Sends one command and returns its reply (a Cluster routes it by its
    /// first key). `Err`: the link failed (an error reply is a reply).
    pub(crate) fn query(&mut self, cmd: &Cmd, deadline: Instant) -> Result<Reply, String> {
        match self {
            Link::Single(conn) => conn
                .round_trip(&cmd.get_packed_command(), 1, deadline)
                .map_err(|e| e.to_string())?
                .pop()
                .ok_or_else(|| "no reply".to_string()),
            Link::Cluster { connection, .. } => match cmd.query::<Value>(&mut **connection) {
                Ok(value) => Ok(reply(value)),
                Err(e)
                    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    Ok(Reply::Error(format!("NOSCRIPT {e}")))
                }
                Err(e) => Err(e.to_string()),
            },
        }
    }

    /// Sends the batches (one per point) and returns, per batch, the
    /// replies of all its commands, in order (an error reply fails that
    /// command only). To one server: one pipeline, one round trip before
    /// `deadline`; if the link fails, every batch fails. To a Redis
    /// Cluster: one pipeline per master, holding the batches of its slots
    /// (after the [`SlotMap`], read on each new connection and every
    /// [`SLOT_MAP_MAX_AGE`], counted as one round trip; a slot it does not
    /// cover is a pipeline of its own), so a master that is down or silent
    /// fails only its own batches and the others' are applied once. Not
    /// one pipeline for all: the `redis` crate fails a whole pipeline when
    /// one of its nodes fails, after the other nodes applied their part.
    pub(crate) fn run_each(&mut self, batches: &[Batch], deadline: Instant) -> Sent {
        match self {
            Link::Single(conn) => {
                let mut packed = Vec::new();
                for batch in batches {
                    for cmd in &batch.commands {
                        cmd.write_packed_command(&mut packed);
                    }
                }
                let commands = batches.iter().map(Batch::len).sum();
                let answers = match conn.round_trip(&packed, commands, deadline) {
                    Ok(replies) => split(replies, batches.iter()).into_iter().map(Ok).collect(),
                    Err(e) => batches.iter().map(|_| Err(e.to_string())).collect(),
                };
                Sent {
                    answers,
                    round_trips: 1,
                    commands,
                }
            }
            Link::Cluster { connection, slots } => {
                let mut sent = Sent {
                    answers: batches.iter().map(|_| Err("not sent".into())).collect(),
                    round_trips: 0,
                    commands: 0,
                };
                if slots
                    .as_ref()
                    .is_none_or(|(_, read)| read.elapsed() >= SLOT_MAP_MAX_AGE)
                {
                    *slots = read_slots(connection).map(|map| (map, Instant::now()));
                    sent.round_trips += 1;
                    sent.commands += 1;
                }
                let map = slots.as_ref().map(|(map, _)| map);
                for (owner, members) in per_owner(map, batches) {
                    let group: Vec<&Batch> = members.iter().map(|&i| &batches[i]).collect();
                    let results: Vec<Result<Vec<Reply>, String>> =
                        match send_group(connection, &group, &mut sent) {
                            Ok(per_batch) => per_batch.into_iter().map(Ok).collect(),
                            Err(e) => {
                                let message = match (owner, map) {
                                    (Owner::Master(m), Some(map)) => {
                                        format!("{e} (master {})", map.addr(m))
                                    }
                                    _ => e.to_string(),
                                };
                                group.iter().map(|_| Err(message.clone())).collect()
                            }
                        };
                    for (i, result) in members.into_iter().zip(results) {
                        sent.answers[i] = result;
                    }
                }
                sent
            }
        }
    }
}

/// The crate's value as a [`Reply`] (RESP3 kinds as their RESP2 form).
fn reply(value: Value) -> Reply {
    match value {
        Value::Nil => Reply::Bulk(None),
        Value::Int(n) => Reply::Int(n),
        Value::BulkString(bytes) => Reply::Bulk(Some(bytes)),
        Value::SimpleString(s) => Reply::Status(s),
        Value::Okay => Reply::Status("OK".into()),
        Value::Array(items) | Value::Set(items) => {
            Reply::Array(Some(items.into_iter().map(reply).collect()))
        }
        Value::ServerError(e) => Reply::Error(e.to_string()),
        other => Reply::Status(format!("{other:?}")),
    }
}

/// What [`Link::run_each`] sent and got back.
pub(crate) struct Sent {
    /// Per batch, in order: the replies of its commands.
    pub(crate) answers: Vec<Result<Vec<Reply>, String>>,
    /// Pipelines (and single commands) sent, each one round trip.
    pub(crate) round_trips: usize,
    /// Commands sent.
    pub(crate) commands: usize,
}

/// Who serves a batch on a Redis Cluster: a master of the map, or a slot
/// the map does not know (its own pipeline).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    Master(Master),
    Slot(u16),
}

/// The batches' indexes grouped by owner, in the order owners first appear.
fn per_owner(map: Option<&SlotMap>, batches: &[Batch]) -> Vec<(Owner, Vec<usize>)> {
    let mut groups: Vec<(Owner, Vec<usize>)> = Vec::new();
    for (i, batch) in batches.iter().enumerate() {
        let owner = match map.and_then(|m| m.master(batch.slot)) {
            Some(master) => Owner::Master(master),
            None => Owner::Slot(batch.slot),
        };
        match groups.iter_mut().find(|(known, _)| *known == owner) {
            Some((_, members)) => members.push(i),
            None => groups.push((owner, vec![i])),
        }
    }
    groups
}

/// Sends `group` (batches of one owner) as one cluster pipeline, counted in
/// `sent`, and returns each batch's answers.
fn send_group(
    connection: &mut ClusterConnection,
    group: &[&Batch],
    sent: &mut Sent,
) -> Result<Vec<Vec<Reply>>, String> {
    let commands: usize = group.iter().map(|b| b.len()).sum();
    if commands == 0 {
        return Ok(group.iter().map(|_| Vec::new()).collect());
    }
    let mut pipe = ClusterPipeline::with_capacity(commands);
    for batch in group {
        for cmd in &batch.commands {
            pipe.add_command(cmd.clone());
        }
    }
    sent.round_trips += 1;
    sent.commands += commands;
    let replies = match pipe.query::<Vec<Value>>(connection) {
        Ok(values) => values.into_iter().map(reply).collect(),
        // The crate answers a pipeline in which some commands failed with
        // those commands' errors only: the others were applied, their
        // replies are lost (the reads of this sync for these points).
        Err(e) => {
            let message = e.to_string();
            match e.into_server_errors() {
                // Some commands failed, not all (not the node): the others
                // were applied.
                Some(errors) if errors.len() < commands => {
                    let mut replies: Vec<Reply> = (0..commands).map(|_| Reply::Applied).collect();
                    for (i, error) in errors.iter() {
                        if let Some(r) = replies.get_mut(*i) {
                            *r = Reply::Error(error.to_string());
                        }
                    }
                    replies
                }
                _ => return Err(message),
            }
        }
    };
    Ok(split(replies, group.iter().copied()))
}

/// The cluster's slot map, from any node the crate is connected to; `None`
/// when it cannot be read (then each slot is its own pipeline until the
/// next connection).
fn read_slots(connection: &mut ClusterConnection) -> Option<SlotMap> {
    let mut cmd = Cmd::new();
    cmd.arg("CLUSTER").arg("SLOTS");
    let reply = connection
        .route_command(&cmd, RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random))
        .ok()?;
    SlotMap::from_cluster_slots(&reply)
}

/// Splits one pipeline's answers among the batches it carried, in order.
fn split<'a, T>(answers: Vec<T>, batches: impl Iterator<Item = &'a Batch>) -> Vec<Vec<T>> {
    let mut answers = answers.into_iter();
    batches
        .map(|b| answers.by_ref().take(b.len()).collect())
        .collect()
}
