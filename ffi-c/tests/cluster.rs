//! `sds_cluster_*` through the C ABI, on a real redis-server started here:
//! two tables of this process share a visit limit through Redis; the
//! status says connected; a configuration out of range is refused; TLS
//! (`rediss://` with the test's own CA, mutual TLS, bad TLS files).

use std::ptr::null;
use std::time::Duration;

use sds::*;
use sds_core::{EntryParts, ErrorCode, Reason};
use sds_testkit::{wait_until, Redis};
use serde_json::{json, Value as Json};

mod common;
use common::{cluster_state, last_error, pki, start_cluster};

const NAME: &[u8] = b"pay";

/// A table where "pay" admits 10 visits a second.
unsafe fn table() -> *mut sds_table {
    let t = common::table(64);
    let json = br#"{"visitThreshold": 10}"#;
    assert_eq!(
        sds_table_set_strategy_json(t, NAME.as_ptr().cast(), 3, json.as_ptr().cast(), json.len()),
        sds_result::Ok
    );
    t
}

unsafe fn admit(t: *const sds_table, tries: u32) -> u32 {
    let mut admitted = 0;
    for _ in 0..tries {
        let mut e = EntryParts::default();
        let now = sds_now_ms();
        assert_eq!(
            sds_enter(t, NAME.as_ptr().cast(), 3, now, 0, &mut e),
            sds_result::Ok
        );
        admitted += u32::from(!sds_entry_downgraded(&e));
        assert_eq!(sds_exit(t, &e, now, 0), sds_result::Ok);
    }
    admitted
}

/// The settings of a cluster of "pay" on `url`, syncing every 20 ms, with
/// the members of `more` (an object).
fn settings(url: &str, more: Json) -> String {
    let mut settings = json!({"urls": url, "points": ["pay"], "sync_ms": 20});
    settings
        .as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    settings.to_string()
}

/// Waits (5 s at most) until the state of `c` satisfies `done`.
fn wait_for_state(c: *const sds_cluster, what: &str, done: impl Fn(&sds_cluster_state) -> bool) {
    wait_until(Duration::from_secs(5), what, || done(&cluster_state(c)));
}

/// Two tables, each with a cluster started with `settings`, given to
/// `body` (each table and its cluster), then stopped and freed.
fn two_clusters(settings: &str, body: impl FnOnce([(*mut sds_table, *mut sds_cluster); 2])) {
    let both = [(); 2].map(|_| {
        let t = unsafe { table() };
        (t, start_cluster(t, settings).unwrap())
    });
    body(both);
    for (t, cluster) in both {
        unsafe {
            sds_cluster_stop(cluster);
            sds_table_free(t);
        }
    }
}

/// Waits until `b` has synced twice and `a` within the last 5 ms.
fn wait_for_syncs(a: *const sds_cluster, b: *const sds_cluster) {
    wait_until(Duration::from_secs(5), "syncs of both", || {
        cluster_state(b).syncs >= 2 && cluster_state(a).last_sync_ms > sds_now_ms() - 5
    });
}

/// [`two_clusters`] on a redis-server started here, with no more settings.
fn two_clusters_on_redis(body: impl FnOnce([(*mut sds_table, *mut sds_cluster); 2])) {
    let redis = Redis::start();
    two_clusters(&settings(&redis.url(), json!({})), body);
}

#[test]
fn two_tables_share_a_limit_through_redis() {
    two_clusters_on_redis(|[(a, ca), (b, cb)]| unsafe {
        assert_eq!(admit(a, 7), 7);
        wait_for_syncs(ca, cb);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(admit(b, 10), 3, "10 for both tables together");
        let s = cluster_state(ca);
        assert!(s.connected && s.syncing && s.points == 1 && s.last_error[0] == 0);
        assert_eq!(s.points_failing, 0);
        assert_eq!(s.round_trips, s.syncs);
        sds_cluster_stop(std::ptr::null_mut());
    });
}

#[test]
fn exact_mode_decides_in_redis() {
    two_clusters_on_redis(|[(_, ca), (_, cb)]| unsafe {
        let mut d = std::mem::MaybeUninit::<sds_cluster_decision>::uninit();
        let mut decide = |c: *const sds_cluster| {
            let now = sds_now_ms();
            assert_eq!(
                sds_cluster_enter_exact(c, NAME.as_ptr().cast(), 3, now, d.as_mut_ptr()),
                sds_result::Ok
            );
            let d = d.assume_init_read();
            assert!(d.exact);
            (d.admitted, d.reason)
        };
        // visitThreshold 10 for both tables together, decided in Redis.
        let decisions: Vec<_> = (0..6).flat_map(|_| [decide(ca), decide(cb)]).collect();
        assert_eq!(
            decisions.iter().filter(|(admitted, _)| *admitted).count(),
            10
        );
        assert_eq!(decisions[11], (false, sds_reason::of(Some(Reason::Visit))));
        let other = b"other";
        assert_eq!(
            sds_cluster_enter_exact(ca, other.as_ptr().cast(), 5, 0, d.as_mut_ptr()),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            sds_cluster_enter_exact(ca, null(), 3, 0, d.as_mut_ptr()),
            ErrorCode::NullArgument
        );
    });
}

#[test]
fn a_configuration_out_of_range_is_refused() {
    let url = "redis://127.0.0.1:1";
    unsafe {
        let t = table();
        let refused = |settings: &str| start_cluster(t, settings).unwrap_err().0;
        let empty_name = json!({"urls": url, "points": [""]}).to_string();
        assert_eq!(refused(&empty_name), ErrorCode::InvalidArgument);
        let flag = json!({"urls": url, "redis_cluster": 8}).to_string();
        assert_eq!(refused(&flag), ErrorCode::InvalidArgument);
        assert_eq!(refused(r#"{"urls": ""}"#), ErrorCode::InvalidArgument);
        assert_eq!(refused(r#"{"urls": "#), ErrorCode::InvalidJson);
        // An unreachable server is no error of start: the state says it.
        let out = start_cluster(t, &json!({ "urls": url }).to_string()).unwrap();
        wait_for_state(out, "a failure", |s| s.failures > 0);
        let s = cluster_state(out);
        assert!(!s.connected && s.last_error[0] != 0);
        sds_cluster_stop(out);
        sds_table_free(t);
    }
}

#[test]
fn tls_with_a_ca_file_and_mutual_tls() {
    let (_dir, tls) = pki("tls");
    let tls = tls.mutual();
    let redis = Redis::start_tls(tls.clone());
    let url = redis.url();
    let mutual = json!({"tls_ca_file": tls.ca, "tls_cert_file": tls.client_cert,
        "tls_key_file": tls.client_key});
    two_clusters(&settings(&url, mutual), |[(a, ca), (b, cb)]| unsafe {
        assert_eq!(admit(a, 7), 7);
        wait_for_syncs(ca, cb);
        let after_a = cluster_state(ca).syncs;
        wait_for_state(cb, "two more syncs", |s| s.syncs >= after_a + 2);
        assert_eq!(admit(b, 10), 3, "10 for both tables together");
        let s = cluster_state(cb);
        assert!(s.connected && s.last_error[0] == 0);
    });
    // Without the client certificate, the server refuses the client.
    let no_cert = settings(&url, json!({ "tls_ca_file": tls.ca }));
    unsafe {
        let t = table();
        let cc = start_cluster(t, &no_cert).unwrap();
        wait_for_state(cc, "a sync attempt", |s| s.syncs + s.failures > 0);
        let s = cluster_state(cc);
        assert!(!s.connected && s.syncs == 0 && s.last_error[0] != 0);
        sds_cluster_stop(cc);
        sds_table_free(t);
    }
}

#[test]
fn tls_files_that_do_not_fit_are_refused_at_start() {
    let (_dir, tls) = pki("tls");
    unsafe {
        let t = table();
        let refused = |settings: Json| {
            let (code, message) = start_cluster(t, &settings.to_string()).unwrap_err();
            assert_eq!(code, ErrorCode::InvalidArgument, "{message}");
            message
        };
        let missing = json!({"urls": "rediss://127.0.0.1:1",
            "tls_ca_file": "/nonexistent/sds-ca.pem"});
        let message = refused(missing);
        assert!(
            message.contains("tls_ca_file /nonexistent/sds-ca.pem: No such file"),
            "{message}"
        );
        let message = refused(json!({"urls": "redis://127.0.0.1:1", "tls_ca_file": tls.ca}));
        assert!(
            message.contains("urls[0]") && message.contains("rediss://"),
            "{message}"
        );
        let no_key = json!({"urls": "rediss://127.0.0.1:1", "tls_cert_file": tls.client_cert});
        assert!(refused(no_key).contains("tls_key_file"), "{}", last_error());
        sds_table_free(t);
    }
}
