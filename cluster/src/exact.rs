//! Exact mode: a decision taken by Redis for every request (see README).

use crate::link::Link;
use crate::{Config, Error};

/// What Redis decided for one request in exact mode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExactDecision {
    /// The request may run.
    pub admitted: bool,
    /// Admitted requests of the whole cluster in the sliding window, this
    /// one included when admitted.
    pub visits: u64,
}

/// Exact mode's own connection (never the syncer's, so a decision does not
/// wait behind a sync).
pub(crate) struct Exact {
    config: Config,
    link: Option<Link>,
}

impl Exact {
    pub(crate) fn new(config: Config) -> Exact {
        Exact { config, link: None }
    }

    pub(crate) fn enter(
        &mut self,
        name: &str,
        visit_threshold: u64,
        now_ms: u64,
    ) -> Result<ExactDecision, Error> {
        let _ = (name, visit_threshold, now_ms, &self.config, &mut self.link);
        Err(Error::Redis("exact mode is not implemented yet".into()))
    }
}
