//! Exact mode: a decision taken by Redis for every request (see README).

/// What Redis decided for one request in exact mode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExactDecision {
    /// The request may run.
    pub admitted: bool,
    /// Admitted requests of the whole cluster in the sliding window, this
    /// one included when admitted.
    pub visits: u64,
}
