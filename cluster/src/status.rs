//! [`Status`]: what a cluster's syncer has done, readable at any time.

sds_settings::fields_struct! {
/// A snapshot of a cluster's syncer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// The last sync reached Redis for at least one point (see
    /// `points_failing` for the others).
    pub connected: bool,
    /// This process holds the host's syncer role (always on a private
    /// table; on a shared table one process per host does, the others wait
    /// and retry each period).
    pub syncing: bool,
    /// Wall-clock ms of the last sync that reached Redis for at least one
    /// point; 0: none yet.
    pub last_sync_ms: u64,
    /// How old the remote counts are: now minus `last_sync_ms`, ms (0 when
    /// there was no sync yet).
    pub lag_ms: u64,
    /// The last successful sync's time in Redis, µs: its round trip (on a
    /// Redis Cluster, its pipelines to the masters, one after the other).
    pub rtt_us: u64,
    /// Successful syncs.
    pub syncs: u64,
    /// Failed connection attempts and round trips.
    pub failures: u64,
    /// Round trips sent to Redis: one per sync to one server; on a Redis
    /// Cluster one per master serving a cluster point, plus one
    /// (`CLUSTER SLOTS`) on each new connection and every 30 s.
    pub round_trips: u64,
    /// Redis commands sent (all round trips together).
    pub commands: u64,
    /// The last failure's message (at most [`MAX_ERROR_BYTES`], cut on a
    /// character boundary); `None` once a sync succeeds again.
    pub last_error: Option<String>,
    /// The cluster points being synced.
    pub points: usize,
    /// Cluster points whose last sync failed while others succeeded or
    /// failed with them (a Redis Cluster master that is down fails only the
    /// points of its slots); 0 once every point syncs again.
    pub points_failing: usize,
}
}

/// The longest `last_error` kept, bytes: a message naming many points or a
/// server's long error text (e.g. under `maxmemory`) must not grow without
/// bound.
pub const MAX_ERROR_BYTES: usize = 1024;

/// `message` cut to [`MAX_ERROR_BYTES`] on a character boundary, ending in
/// `…` when cut.
pub(crate) fn cap_message(mut message: String) -> String {
    if message.len() <= MAX_ERROR_BYTES {
        return message;
    }
    let mut end = MAX_ERROR_BYTES - '…'.len_utf8();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    message.push('…');
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        assert_eq!(cap_message("short".into()), "short");
        let cut = cap_message("é".repeat(2000));
        assert!(cut.len() <= MAX_ERROR_BYTES, "{}", cut.len());
        assert_eq!(cut.len(), 1023);
        assert!(cut.ends_with("é…"));
        let exact = "x".repeat(MAX_ERROR_BYTES);
        assert_eq!(cap_message(exact.clone()), exact);
    }
}
