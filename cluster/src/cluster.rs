//! [`Cluster`]: the handle of one table's syncer thread.

use std::sync::Arc;

use sds_shm::AnyTable;

use crate::{Config, Error, ExactDecision, Status, SyncTable};

/// A wall clock in ms, as the syncer reads it.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// One table's cluster points and the thread that syncs them. Dropping it
/// stops the thread ([`Cluster::stop`]).
pub struct Cluster {
    _private: (),
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
        let _ = (table, config, clock);
        todo!()
    }

    /// The syncer's state now.
    pub fn status(&self) -> Status {
        todo!()
    }

    /// Runs one sync now in the calling thread (waits for the thread's sync
    /// in progress, if any). `Err` when the round trip failed.
    pub fn sync_now(&self) -> Result<(), Error> {
        todo!()
    }

    /// Exact mode: Redis counts and decides this request against
    /// `visit_threshold` in the sliding window of `now_ms`, atomically (one
    /// Lua script, one round trip on the caller's thread).
    pub fn enter_exact(
        &self,
        name: &str,
        visit_threshold: u64,
        now_ms: u64,
    ) -> Result<ExactDecision, Error> {
        let _ = (name, visit_threshold, now_ms);
        todo!()
    }

    /// Stops the thread and waits for it: at most one round trip's timeout.
    /// The points stay cluster points; their remote counts age out of the
    /// window within 10 s.
    pub fn stop(self) {}
}
