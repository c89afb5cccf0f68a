//! [`Link`]: the syncer's connection, to one Redis server or to a Redis
//! Cluster, with its timeouts; one batch of commands is one round trip
//! (one per cluster point on a Redis Cluster: see [`Link::run_each`]).

use std::time::Duration;

use redis::cluster::{ClusterClientBuilder, ClusterConnection};
use redis::{Cmd, FromRedisValue, Pipeline, RedisResult};

use crate::Config;

/// A live connection.
pub(crate) enum Link {
    Single(redis::Connection),
    Cluster(Box<ClusterConnection>),
}

/// Commands to send in one round trip; only those not ignored answer.
#[derive(Default)]
pub(crate) struct Batch {
    commands: Vec<(Cmd, bool)>,
}

impl Batch {
    pub(crate) fn push(&mut self, cmd: Cmd, answers: bool) {
        self.commands.push((cmd, answers));
    }

    pub(crate) fn len(&self) -> usize {
        self.commands.len()
    }

    fn answering(&self) -> usize {
        self.commands.iter().filter(|(_, answers)| *answers).count()
    }
}

impl Link {
    /// Connects with `config`'s timeout on connect, reads and writes.
    pub(crate) fn connect(config: &Config) -> RedisResult<Link> {
        let timeout = Duration::from_millis(config.timeout_ms);
        crate::tls::install_provider();
        let certificates = crate::tls::certificates(config)?;
        if config.redis_cluster {
            let builder = ClusterClientBuilder::new(config.urls.iter().map(String::as_str))
                .connection_timeout(timeout)
                .response_timeout(timeout)
                .retries(1);
            let builder = match certificates {
                Some(certificates) => builder.certs(certificates),
                None => builder,
            };
            let client = builder.build()?;
            let connection = client.get_connection()?;
            connection.set_read_timeout(Some(timeout))?;
            connection.set_write_timeout(Some(timeout))?;
            Ok(Link::Cluster(Box::new(connection)))
        } else {
            let url = config.urls[0].as_str();
            let client = match certificates {
                Some(certificates) => redis::Client::build_with_tls(url, certificates)?,
                None => redis::Client::open(url)?,
            };
            let connection = client.get_connection_with_timeout(timeout)?;
            connection.set_read_timeout(Some(timeout))?;
            connection.set_write_timeout(Some(timeout))?;
            Ok(Link::Single(connection))
        }
    }

    /// Sends one command and returns its answer (a Cluster routes it by
    /// its first key).
    pub(crate) fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> RedisResult<T> {
        match self {
            Link::Single(connection) => cmd.query(connection),
            Link::Cluster(connection) => cmd.query(&mut **connection),
        }
    }

    /// Sends one batch per point and returns, per batch, the answers of
    /// its commands that answer. To one server: one pipeline, one round
    /// trip, all batches succeed or fail together. To a Redis Cluster: one
    /// pipeline per batch (a batch names one hash tag, so one node), so a
    /// node that is down fails only the batches of its slots; the `redis`
    /// crate fails a whole pipeline when one of its nodes is unreachable.
    pub(crate) fn run_each<T: FromRedisValue>(
        &mut self,
        batches: &[Batch],
    ) -> Vec<Result<Vec<T>, String>> {
        match self {
            Link::Single(connection) => {
                let mut pipe = Pipeline::new();
                for batch in batches {
                    add(&mut pipe, batch);
                }
                match pipe.query::<Vec<T>>(connection) {
                    Ok(answers) => {
                        let mut answers = answers.into_iter();
                        batches
                            .iter()
                            .map(|b| Ok(answers.by_ref().take(b.answering()).collect()))
                            .collect()
                    }
                    Err(e) => batches.iter().map(|_| Err(e.to_string())).collect(),
                }
            }
            Link::Cluster(connection) => batches
                .iter()
                .map(|batch| {
                    let mut pipe = redis::cluster::ClusterPipeline::with_capacity(batch.len());
                    for (cmd, answers) in &batch.commands {
                        pipe.add_command(cmd.clone());
                        if !answers {
                            pipe.ignore();
                        }
                    }
                    pipe.query(connection).map_err(|e| e.to_string())
                })
                .collect(),
        }
    }
}

fn add(pipe: &mut Pipeline, batch: &Batch) {
    for (cmd, answers) in &batch.commands {
        pipe.add_command(cmd.clone());
        if !answers {
            pipe.ignore();
        }
    }
}
