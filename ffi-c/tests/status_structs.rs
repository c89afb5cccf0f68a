//! The C status structs filled from the services' statuses by name
//! (`src/status.rs`): every name of the native status is a field of the C
//! struct and the other way round, each set from its own value; text is
//! cut at a character boundary to fit.

use sds::status::{to_c, CStatus};
use sds::{sds_agent_status, sds_cluster_state};
use sds_settings::Fields;

mod common;
use common::text;

/// Every name of `S` is a field of `C` and the other way round.
fn assert_same_fields<C: CStatus, S: Fields>(status: &S) {
    let mut native = S::NAMES.to_vec();
    let mut c_names = C::NAMES.to_vec();
    native.sort_unstable();
    c_names.sort_unstable();
    assert_eq!(c_names, native, "the C struct's fields are the status's");
    let mut c: C = to_c(status);
    for (name, value) in S::NAMES.iter().zip(status.values()) {
        assert!(c.set(name, value), "{name} is no C field");
    }
}

#[test]
fn the_agent_status_is_its_c_struct() {
    let status = sds_agent::Status {
        last_pull_ms: 1,
        last_pull_ok: true,
        last_upload_ms: 2,
        last_upload_ok: false,
        version: -1,
        is_reporter: true,
        server: "http://a:8887".into(),
        last_error: "é".repeat(200),
        pull_failures: 3,
        upload_failures: 4,
        uploads: 5,
        strategies_waiting: 6,
        points_left_out: 7,
    };
    assert_same_fields::<sds_agent_status, _>(&status);
    let c: sds_agent_status = to_c(&status);
    assert_eq!((c.last_pull_ms, c.last_upload_ms, c.version), (1, 2, -1));
    assert_eq!(
        (c.last_pull_ok, c.last_upload_ok, c.is_reporter),
        (true, false, true)
    );
    assert_eq!((c.pull_failures, c.upload_failures, c.uploads), (3, 4, 5));
    assert_eq!((c.strategies_waiting, c.points_left_out), (6, 7));
    assert_eq!(text(&c.server), "http://a:8887");
    // 255 bytes of room: 127 two-byte characters, never half of one.
    assert_eq!(text(&c.last_error), "é".repeat(127));
}

#[test]
fn the_cluster_status_is_its_c_struct() {
    let mut status = sds_cluster::Status {
        connected: true,
        syncing: false,
        last_sync_ms: 1,
        lag_ms: 2,
        rtt_us: 3,
        syncs: 4,
        failures: 5,
        round_trips: 6,
        commands: 7,
        last_error: Some("down".into()),
        points: 8,
        points_failing: 9,
    };
    assert_same_fields::<sds_cluster_state, _>(&status);
    let c: sds_cluster_state = to_c(&status);
    assert_eq!((c.connected, c.syncing), (true, false));
    assert_eq!((c.last_sync_ms, c.lag_ms, c.rtt_us), (1, 2, 3));
    assert_eq!(
        (c.syncs, c.failures, c.round_trips, c.commands),
        (4, 5, 6, 7)
    );
    assert_eq!((c.points, c.points_failing), (8, 9));
    assert_eq!(text(&c.last_error), "down");
    status.last_error = None;
    let c: sds_cluster_state = to_c(&status);
    assert_eq!(text(&c.last_error), "");
}
