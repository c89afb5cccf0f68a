//! What a binding can read of a running agent.

sds_settings::fields_struct! {
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
    /// The strategy version held: 0 until the first applied set; -1 when
    /// the console's version is null (the shipped console on H2), where
    /// every pull brings the whole set and a set that differs from the one
    /// in force is applied.
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
    /// Strategies of the set in force that wait for room: their points are
    /// not in the table and the console may create points only while the
    /// table is at most half full. Tried again at each pull.
    pub strategies_waiting: u64,
    /// Points left out of every upload because the console cannot store
    /// their names (over 164 characters); the log names each once.
    pub points_left_out: u64,
}
}
