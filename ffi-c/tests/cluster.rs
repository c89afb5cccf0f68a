//! `sds_cluster_*` through the C ABI, on a real redis-server started here:
//! two tables of this process share a visit limit through Redis; the
//! status says connected; a configuration out of range is refused; TLS
//! (`rediss://` with the test's own CA, mutual TLS, bad TLS files).

use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr::null;
use std::time::Duration;

use sds::*;
use sds_core::EntryParts;
use sds_testkit::{wait_until, Redis, TempDir, Tls};

mod common;
use common::{c_path, last_error};

const NAME: &[u8] = b"pay";

unsafe fn table() -> *mut sds_table {
    let mut t = std::ptr::null_mut();
    assert_eq!(sds_table_new(64, &mut t), sds_result::Ok);
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

fn config(url: &str, names: &[*const c_char], lens: &[usize]) -> sds_cluster_config {
    sds_cluster_config {
        urls: url.as_ptr().cast(),
        urls_len: url.len(),
        points: names.as_ptr(),
        point_lens: lens.as_ptr(),
        points_len: names.len(),
        sync_ms: 20,
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

/// Waits (5 s at most) until the state of `c` satisfies `done`.
fn wait_for_state(c: *const sds_cluster, what: &str, done: impl Fn(&sds_cluster_state) -> bool) {
    wait_until(Duration::from_secs(5), what, || done(&state(c)));
}

/// Two tables, each with a cluster started on `c`.
unsafe fn two_clusters(c: &sds_cluster_config) -> [(*mut sds_table, *mut sds_cluster); 2] {
    [(); 2].map(|_| {
        let (t, mut cluster) = (table(), std::ptr::null_mut());
        assert_eq!(sds_cluster_start(t, c, &mut cluster), sds_result::Ok);
        (t, cluster)
    })
}

/// Waits until `b` has synced twice and `a` within the last 5 ms.
fn wait_for_syncs(a: *const sds_cluster, b: *const sds_cluster) {
    wait_until(Duration::from_secs(5), "syncs of both", || {
        state(b).syncs >= 2 && state(a).last_sync_ms > sds_now_ms() - 5
    });
}

fn state(c: *const sds_cluster) -> sds_cluster_state {
    let mut s = std::mem::MaybeUninit::<sds_cluster_state>::uninit();
    assert_eq!(
        unsafe { sds_cluster_status(c, s.as_mut_ptr()) },
        sds_result::Ok
    );
    unsafe { s.assume_init() }
}

#[test]
fn two_tables_share_a_limit_through_redis() {
    let redis = Redis::start();
    let url = redis.url();
    let names = [NAME.as_ptr().cast::<c_char>()];
    let lens = [NAME.len()];
    let c = config(&url, &names, &lens);
    unsafe {
        let [(a, ca), (b, cb)] = two_clusters(&c);
        assert_eq!(admit(a, 7), 7);
        wait_for_syncs(ca, cb);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(admit(b, 10), 3, "10 for both tables together");
        let s = state(ca);
        assert!(s.connected && s.syncing && s.points == 1 && s.last_error[0] == 0);
        assert_eq!(s.points_failing, 0);
        assert_eq!(s.round_trips, s.syncs);
        sds_cluster_stop(ca);
        sds_cluster_stop(cb);
        sds_cluster_stop(std::ptr::null_mut());
        sds_table_free(a);
        sds_table_free(b);
    }
}

#[test]
fn exact_mode_decides_in_redis() {
    let redis = Redis::start();
    let url = redis.url();
    let names = [NAME.as_ptr().cast::<c_char>()];
    let lens = [NAME.len()];
    let c = config(&url, &names, &lens);
    unsafe {
        let [(a, ca), (b, cb)] = two_clusters(&c);
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
        assert_eq!(decisions[11], (false, sds_reason::Visit));
        let other = b"other";
        assert_eq!(
            sds_cluster_enter_exact(ca, other.as_ptr().cast(), 5, 0, d.as_mut_ptr()),
            sds_result::InvalidArgument
        );
        assert_eq!(
            sds_cluster_enter_exact(ca, null(), 3, 0, d.as_mut_ptr()),
            sds_result::NullArgument
        );
        sds_cluster_stop(ca);
        sds_cluster_stop(cb);
        sds_table_free(a);
        sds_table_free(b);
    }
}

#[test]
fn a_configuration_out_of_range_is_refused() {
    let names = [b"".as_ptr().cast::<c_char>()];
    let lens = [0usize];
    unsafe {
        let t = table();
        let mut out = std::ptr::null_mut();
        let c = config("redis://127.0.0.1:1", &names, &lens);
        assert_eq!(
            sds_cluster_start(t, &c, &mut out),
            sds_result::InvalidArgument
        );
        let mut c = config("redis://127.0.0.1:1", &[], &[]);
        c.flags = 8;
        assert_eq!(
            sds_cluster_start(t, &c, &mut out),
            sds_result::InvalidArgument
        );
        let c = config("", &[], &[]);
        assert_eq!(
            sds_cluster_start(t, &c, &mut out),
            sds_result::InvalidArgument
        );
        assert_eq!(
            sds_cluster_start(t, null(), &mut out),
            sds_result::NullArgument
        );
        assert!(out.is_null());
        // An unreachable server is no error of start: the state says it.
        let c = config("redis://127.0.0.1:1", &[], &[]);
        assert_eq!(sds_cluster_start(t, &c, &mut out), sds_result::Ok);
        wait_for_state(out, "a failure", |s| s.failures > 0);
        let s = state(out);
        assert!(!s.connected && s.last_error[0] != 0);
        sds_cluster_stop(out);
        sds_table_free(t);
    }
}

#[test]
fn tls_with_a_ca_file_and_mutual_tls() {
    let dir = TempDir::new("tls");
    let tls = Tls::generate(dir.path()).mutual();
    let redis = Redis::start_tls(tls.clone());
    let url = redis.url();
    let names = [NAME.as_ptr().cast::<c_char>()];
    let lens = [NAME.len()];
    let (ca, cert, key) = (
        c_path(&tls.ca),
        c_path(&tls.client_cert),
        c_path(&tls.client_key),
    );
    let mut c = config(&url, &names, &lens);
    c.tls_ca_file = ca.as_ptr();
    c.tls_cert_file = cert.as_ptr();
    c.tls_key_file = key.as_ptr();
    unsafe {
        let [(a, ca_), (b, cb)] = two_clusters(&c);
        assert_eq!(admit(a, 7), 7);
        wait_for_syncs(ca_, cb);
        let after_a = state(ca_).syncs;
        wait_for_state(cb, "two more syncs", |s| s.syncs >= after_a + 2);
        assert_eq!(admit(b, 10), 3, "10 for both tables together");
        let s = state(cb);
        assert!(s.connected && s.last_error[0] == 0);

        // Without the client certificate, the server refuses the client.
        let mut no_cert = config(&url, &names, &lens);
        no_cert.tls_ca_file = ca.as_ptr();
        let (t, mut cc) = (table(), std::ptr::null_mut());
        assert_eq!(sds_cluster_start(t, &no_cert, &mut cc), sds_result::Ok);
        wait_for_state(cc, "a sync attempt", |s| s.syncs + s.failures > 0);
        let s = state(cc);
        assert!(!s.connected && s.syncs == 0 && s.last_error[0] != 0);
        sds_cluster_stop(cc);
        sds_cluster_stop(ca_);
        sds_cluster_stop(cb);
        sds_table_free(a);
        sds_table_free(b);
        sds_table_free(t);
    }
}

#[test]
fn tls_files_that_do_not_fit_are_refused_at_start() {
    let dir = TempDir::new("tls");
    let tls = Tls::generate(dir.path());
    let (ca, cert) = (c_path(&tls.ca), c_path(&tls.client_cert));
    let missing = CString::new("/nonexistent/sds-ca.pem").unwrap();
    unsafe {
        let t = table();
        let mut out = std::ptr::null_mut();
        let mut c = config("rediss://127.0.0.1:1", &[], &[]);
        c.tls_ca_file = missing.as_ptr();
        assert_eq!(
            sds_cluster_start(t, &c, &mut out),
            sds_result::InvalidArgument
        );
        let message = last_error();
        assert!(
            message.contains("tls_ca_file /nonexistent/sds-ca.pem: No such file"),
            "{message}"
        );
        let mut c = config("redis://127.0.0.1:1", &[], &[]);
        c.tls_ca_file = ca.as_ptr();
        assert_eq!(
            sds_cluster_start(t, &c, &mut out),
            sds_result::InvalidArgument
        );
        let message = last_error();
        assert!(
            message.contains("urls[0]") && message.contains("rediss://"),
            "{message}"
        );
        let mut c = config("rediss://127.0.0.1:1", &[], &[]);
        c.tls_cert_file = cert.as_ptr();
        assert_eq!(
            sds_cluster_start(t, &c, &mut out),
            sds_result::InvalidArgument
        );
        assert!(last_error().contains("tls_key_file"), "{}", last_error());
        assert!(out.is_null());
        sds_table_free(t);
    }
}
