//! [`Link`]: the syncer's connection, to one Redis server or to a Redis
//! Cluster, with its timeouts; one batch of commands is one round trip
//! (one per node on a Cluster, sent by the `redis` crate).

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
}

impl Link {
    /// Connects with `config`'s timeout on connect, reads and writes.
    pub(crate) fn connect(config: &Config) -> RedisResult<Link> {
        let timeout = Duration::from_millis(config.timeout_ms);
        if config.redis_cluster {
            let client = ClusterClientBuilder::new(config.urls.iter().map(String::as_str))
                .connection_timeout(timeout)
                .response_timeout(timeout)
                .retries(1)
                .build()?;
            let connection = client.get_connection()?;
            connection.set_read_timeout(Some(timeout))?;
            connection.set_write_timeout(Some(timeout))?;
            Ok(Link::Cluster(Box::new(connection)))
        } else {
            let client = redis::Client::open(config.urls[0].as_str())?;
            let connection = client.get_connection_with_timeout(timeout)?;
            connection.set_read_timeout(Some(timeout))?;
            connection.set_write_timeout(Some(timeout))?;
            Ok(Link::Single(connection))
        }
    }

    /// Sends `batch` and returns the answers of the commands that answer.
    pub(crate) fn run<T: FromRedisValue>(&mut self, batch: &Batch) -> RedisResult<Vec<T>> {
        match self {
            Link::Single(connection) => {
                let mut pipe = Pipeline::with_capacity(batch.commands.len());
                for (cmd, answers) in &batch.commands {
                    pipe.add_command(cmd.clone());
                    if !answers {
                        pipe.ignore();
                    }
                }
                pipe.query(connection)
            }
            Link::Cluster(connection) => {
                let mut pipe = redis::cluster::ClusterPipeline::with_capacity(batch.commands.len());
                for (cmd, answers) in &batch.commands {
                    pipe.add_command(cmd.clone());
                    if !answers {
                        pipe.ignore();
                    }
                }
                pipe.query(connection)
            }
        }
    }
}
