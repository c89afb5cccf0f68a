//! What a binding can read of a running agent.

/// A snapshot of the agent's state. Times are the agent clock's UTC
/// milliseconds, 0 for never.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// When the last pull finished (or failed).
    pub last_pull_ms: u64,
    /// Whether that pull succeeded (a response that changed nothing, or one
    /// applied, even with strategies refused one by one).
    pub last_pull_ok: bool,
    /// When the last upload finished (or failed).
    pub last_upload_ms: u64,
    /// Whether that upload succeeded.
    pub last_upload_ok: bool,
    /// The strategy version held (0 until the first applied set).
    pub version: i64,
    /// Whether this process is the host's reporter (uploads); always on a
    /// private table.
    pub is_reporter: bool,
    /// The server the next request goes to.
    pub server: String,
    /// The text of the last failure (a request, a response, a refused
    /// strategy); empty if none yet. A later success does not clear it.
    pub last_error: String,
    /// Pulls that failed since start.
    pub pull_failures: u64,
    /// Uploads that failed since start.
    pub upload_failures: u64,
    /// Uploads delivered since start.
    pub uploads: u64,
}
