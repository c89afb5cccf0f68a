//! What the C ABI adds to the services' settings (`tests/settings_table.rs`
//! runs the shared cases): C strings that are not UTF-8, NULL for a
//! required string, the comma-separated URLs, the flags, the array of
//! points. Each refusal is its code and the whole last error message.

use std::os::raw::c_char;
use std::ptr::{null, null_mut};

use sds::*;

mod common;
use common::last_error;

/// A start's verdict: started (and stopped), or the code and message.
type Verdict = Result<(), (sds_result, String)>;

fn table() -> *mut sds_table {
    let mut t = null_mut();
    assert_eq!(unsafe { sds_table_new(8, &mut t) }, sds_result::Ok);
    t
}

fn agent_config() -> sds_agent_config {
    sds_agent_config {
        servers: c"http://127.0.0.1:1".as_ptr(),
        app_group: c"g".as_ptr(),
        app_name: c"a".as_ptr(),
        ip: null(),
        hostname: null(),
        pull_interval_ms: 0,
        timeout_ms: 0,
        log: None,
        log_context: null_mut(),
        tls_ca_file: null(),
        tls_cert_file: null(),
        tls_key_file: null(),
    }
}

fn cluster_config(urls: &str) -> sds_cluster_config {
    sds_cluster_config {
        urls: urls.as_ptr().cast(),
        urls_len: urls.len(),
        points: null(),
        point_lens: null(),
        points_len: 0,
        sync_ms: 0,
        timeout_ms: 0,
        key_prefix: null(),
        key_prefix_len: 0,
        flags: 0,
        tls_ca_file: null(),
        tls_cert_file: null(),
        tls_key_file: null(),
        max_backoff_ms: 0,
    }
}

fn agent_verdict(c: &sds_agent_config) -> Verdict {
    let (t, mut agent) = (table(), null_mut());
    let r = unsafe { sds_agent_start(t, c, &mut agent) };
    let verdict = match r {
        sds_result::Ok => {
            unsafe { sds_agent_stop(agent) };
            Ok(())
        }
        code => Err((code, last_error())),
    };
    unsafe { sds_table_free(t) };
    verdict
}

fn cluster_verdict(c: &sds_cluster_config) -> Verdict {
    let (t, mut cluster) = (table(), null_mut());
    let r = unsafe { sds_cluster_start(t, c, &mut cluster) };
    let verdict = match r {
        sds_result::Ok => {
            unsafe { sds_cluster_stop(cluster) };
            Ok(())
        }
        code => Err((code, last_error())),
    };
    unsafe { sds_table_free(t) };
    verdict
}

fn invalid(message: &str) -> Verdict {
    Err((sds_result::InvalidArgument, message.to_string()))
}

#[test]
fn agent_strings_are_utf8_and_null_is_the_agents_default() {
    let mut c = agent_config();
    assert_eq!(agent_verdict(&c), Ok(()));
    c.hostname = c"h\xe9".as_ptr();
    assert_eq!(
        agent_verdict(&c),
        invalid("SDS_INVALID_ARGUMENT: `hostname` is not UTF-8")
    );
    // A path too: the settings hand paths over as text.
    c.hostname = null();
    c.tls_ca_file = c"/tmp/\xff.pem".as_ptr();
    assert_eq!(
        agent_verdict(&c),
        invalid("SDS_INVALID_ARGUMENT: `tls_ca_file` is not UTF-8")
    );
    c.tls_ca_file = null();
    c.servers = null();
    assert_eq!(
        agent_verdict(&c),
        invalid("SDS_INVALID_ARGUMENT: cannot start the SDS agent: no server given")
    );
    let (t, mut agent) = (table(), null_mut());
    assert_eq!(
        unsafe { sds_agent_start(t, null(), &mut agent) },
        sds_result::NullArgument
    );
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `config` is NULL");
    let mut status = std::mem::MaybeUninit::<sds_agent_status>::uninit();
    assert_eq!(
        unsafe { sds_agent_status_get(null(), status.as_mut_ptr()) },
        sds_result::NullArgument
    );
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `agent` is NULL");
    unsafe { sds_table_free(t) };
}

#[test]
fn cluster_urls_split_at_commas_and_null_is_no_url() {
    assert_eq!(
        cluster_verdict(&cluster_config("redis://127.0.0.1:1, redis://127.0.0.1:2")),
        Ok(())
    );
    assert_eq!(
        cluster_verdict(&cluster_config("redis://127.0.0.1:1, http://x")),
        invalid(
            "SDS_INVALID_ARGUMENT: invalid cluster configuration: urls[1] is not a Redis URL: \
             Redis URL did not parse - InvalidClientConfig"
        )
    );
    let mut c = cluster_config("");
    c.urls = null();
    assert_eq!(
        cluster_verdict(&c),
        invalid(
            "SDS_INVALID_ARGUMENT: invalid cluster configuration: urls: at least one Redis URL \
             is needed"
        )
    );
    let mut c = cluster_config("redis://127.0.0.1:1");
    c.flags = 8 | SDS_CLUSTER_REDIS_CLUSTER;
    assert_eq!(
        cluster_verdict(&c),
        invalid(
            "SDS_INVALID_ARGUMENT: unknown flag bits 0x8 (only SDS_CLUSTER_REDIS_CLUSTER is known)"
        )
    );
    let mut c = cluster_config("redis://127.0.0.1:1");
    (c.sync_ms, c.timeout_ms, c.max_backoff_ms) = (50, 200, 400);
    assert_eq!(cluster_verdict(&c), Ok(()));
}

#[test]
fn cluster_points_are_utf8_names_and_a_null_name_is_refused_by_index() {
    let latin1 = [b'c', 0xe9];
    let names = [b"ok".as_ptr().cast::<c_char>(), latin1.as_ptr().cast()];
    let lens = [2, 2];
    let mut c = cluster_config("redis://127.0.0.1:1");
    (c.points, c.point_lens, c.points_len) = (names.as_ptr(), lens.as_ptr(), 2);
    assert_eq!(
        cluster_verdict(&c),
        invalid("SDS_INVALID_ARGUMENT: `points[1]` is not UTF-8")
    );
    let names = [b"ok".as_ptr().cast::<c_char>(), null()];
    c.points = names.as_ptr();
    assert_eq!(
        cluster_verdict(&c),
        invalid(
            "SDS_INVALID_ARGUMENT: invalid cluster configuration: points[1] must be text, not null"
        )
    );
    c.points = null();
    assert_eq!(
        cluster_verdict(&c),
        Err((
            sds_result::NullArgument,
            "SDS_NULL_ARGUMENT: `points` is NULL".to_string()
        ))
    );
}
