//! `sds_metrics_text` and the keyed limits' metrics through the C ABI:
//! every point's counts per reason at explicit times, keyed decisions by
//! name, a buffer too small then the retry, the agent (the fake console)
//! and the cluster (a real redis-server) of the table, NULLs and invalid
//! arguments refused with the outputs untouched, and `promtool check
//! metrics` clean on the Prometheus text.
//!
//! The keyed limits are the process's: every test here takes `SERIAL`, so
//! no other test's limit comes or goes during a test's expositions.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::os::raw::c_char;
use std::ptr::{null, null_mut};
use std::sync::Mutex;
use std::time::Duration;

use sds::*;
use sds_core::keyed::{KeyDecision, KeyTableStats};
use sds_core::{EntryParts, ErrorCode, Reason};
use sds_metrics::{Format, FAMILIES};
use sds_testkit::{promtool, wait_until, Redis, TempDir};

mod common;
use common::{
    agent_status, cluster_state, last_error, start_agent, start_cluster, table, FakeConsole,
};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `body` on a new table of `capacity` points (under `serial`), then
/// frees the table.
fn on_table(capacity: usize, body: impl FnOnce(*mut sds_table)) {
    let _serial = serial();
    let t = table(capacity);
    body(t);
    unsafe { sds_table_free(t) };
}

/// A wall-clock time well past 1970, so windows and cycles are ordinary.
const T0: u64 = 1_764_000_000_000;

/// The exposition: a first call with one byte, then buffers of the size
/// `sds_metrics_text` asks for (again if a running service's status grew
/// the text in between).
fn exposition(
    t: *const sds_table,
    agent: *const sds_agent,
    cluster: *const sds_cluster,
    format: u32,
    now_ms: u64,
) -> String {
    let mut buf = vec![0x55 as c_char; 1];
    for _ in 0..10 {
        let mut needed = usize::MAX;
        let (p, len) = (buf.as_mut_ptr(), buf.len());
        let r = unsafe { sds_metrics_text(t, agent, cluster, format, now_ms, p, len, &mut needed) };
        assert_eq!(r, sds_result::Ok, "{}", last_error());
        if needed < len {
            assert_eq!(buf[needed], 0, "NUL-terminated");
            let text = unsafe { CStr::from_ptr(buf.as_ptr()) };
            assert_eq!(text.to_bytes().len(), needed);
            return text.to_str().unwrap().to_string();
        }
        assert_eq!(buf[0], 0, "a text that does not fit leaves an empty string");
        buf = vec![0x55 as c_char; needed + 1];
    }
    panic!("the text never fit");
}

fn prometheus(t: *const sds_table, now_ms: u64) -> String {
    exposition(t, null(), null(), SDS_METRICS_PROMETHEUS, now_ms)
}

/// Every sample of a text exposition: `name{labels}` to its value.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_string(), value.parse().unwrap())
        })
        .collect()
}

/// The value of `series` (`name{labels}`), failing if it is not shown.
fn value(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    *samples
        .get(series)
        .unwrap_or_else(|| panic!("{series} is not shown: {samples:#?}"))
}

unsafe fn set_strategy(t: *const sds_table, point: &str, json: &str) {
    let r = sds_table_set_strategy_json(
        t,
        point.as_ptr().cast(),
        point.len(),
        json.as_ptr().cast(),
        json.len(),
    );
    assert_eq!(r, sds_result::Ok, "{}", last_error());
}

unsafe fn enter(t: *const sds_table, point: &str, now_ms: u64) -> EntryParts {
    let mut e = EntryParts::default();
    let r = sds_enter(t, point.as_ptr().cast(), point.len(), now_ms, 0, &mut e);
    assert_eq!(r, sds_result::Ok, "{}", last_error());
    e
}

unsafe fn exit(t: *const sds_table, e: &EntryParts, now_ms: u64, outcome: u32) {
    assert_eq!(sds_exit(t, e, now_ms, outcome), sds_result::Ok);
}

/// A private key table of `rule` named `name` (NULL name: the default).
fn keys_named(rule: &str, name: Option<&str>) -> *mut sds_keys {
    let mut k = null_mut();
    let (n, n_len) = name.map_or((null(), 0), |n| (n.as_ptr().cast(), n.len()));
    let r = unsafe { sds_keys_new_named(rule.as_ptr().cast(), rule.len(), 64, n, n_len, &mut k) };
    assert_eq!(r, sds_result::Ok, "{}", last_error());
    k
}

fn decide(k: *const sds_keys, key: &str, now_ms: u64) -> bool {
    let mut d = KeyDecision::default();
    let r = unsafe { sds_keys_decide(k, key.as_ptr().cast(), key.len(), now_ms, 1, &mut d) };
    assert_eq!(r, sds_result::Ok);
    d.admitted
}

const RATE: &str = r#"{"kind": "rate", "limit": 10, "periodMs": 1000, "burst": 3}"#;

#[test]
fn every_point_counts_its_requests_downgrades_by_reason_exceptions_and_timeouts() {
    on_table(16, |t| unsafe {
        // "pay": 3 visits a second; a request over 100 ms is a timeout.
        set_strategy(
            t,
            "pay",
            r#"{"visitThreshold": 3, "timeoutThreshold": 100}"#,
        );
        let entries: Vec<EntryParts> = (0..5).map(|_| enter(t, "pay", T0)).collect();
        let reasons: Vec<sds_reason> = entries.iter().map(|e| sds_entry_reason(e)).collect();
        assert_eq!(
            reasons,
            [sds_reason::None, sds_reason::None, sds_reason::None]
                .into_iter()
                .chain([sds_reason::of(Some(Reason::Visit)); 2])
                .collect::<Vec<_>>()
        );
        exit(t, &entries[0], T0 + 10, 0); // fast, OK
        exit(t, &entries[1], T0 + 20, 1); // an exception
        exit(t, &entries[2], T0 + 500, 0); // a timeout
        for downgraded in &entries[3..] {
            exit(t, downgraded, T0 + 10, 0); // settled, never run
        }
        // "io": one request at once; the second waits for no permit.
        set_strategy(t, "io", r#"{"concurrentThreshold": 1}"#);
        let held = enter(t, "io", T0);
        let refused = enter(t, "io", T0 + 1);
        assert!(sds_entry_downgraded(&refused));

        let s = samples(&prometheus(t, T0 + 600));
        let pay = r#"table="private",point="pay""#;
        assert_eq!(
            value(&s, &format!("sds_point_requests_total{{{pay}}}")),
            5.0
        );
        for reason in Reason::ALL {
            let series = format!(
                "sds_point_downgrades_total{{{pay},reason=\"{}\"}}",
                reason.as_str()
            );
            let expected = if reason == Reason::Visit { 2.0 } else { 0.0 };
            assert_eq!(value(&s, &series), expected, "{series}");
        }
        assert_eq!(
            value(&s, &format!("sds_point_exceptions_total{{{pay}}}")),
            1.0
        );
        assert_eq!(
            value(&s, &format!("sds_point_timeouts_total{{{pay}}}")),
            1.0
        );
        assert_eq!(value(&s, &format!("sds_point_in_flight{{{pay}}}")), 0.0);
        let io = r#"table="private",point="io""#;
        assert_eq!(value(&s, &format!("sds_point_requests_total{{{io}}}")), 2.0);
        assert_eq!(
            value(
                &s,
                &format!("sds_point_downgrades_total{{{io},reason=\"CONCURRENT\"}}")
            ),
            1.0
        );
        assert_eq!(value(&s, &format!("sds_point_in_flight{{{io}}}")), 1.0);
        assert_eq!(value(&s, r#"sds_table_points{table="private"}"#), 2.0);
        assert_eq!(
            value(&s, r#"sds_table_points_capacity{table="private"}"#),
            16.0
        );
        // No service given: none of theirs.
        assert!(!s
            .keys()
            .any(|k| k.starts_with("sds_agent_") || k.starts_with("sds_cluster_")));

        // The totals outlive the sliding window: a minute later they stand.
        exit(t, &held, T0 + 50, 0);
        let later = samples(&prometheus(t, T0 + 60_000));
        assert_eq!(
            value(&later, &format!("sds_point_requests_total{{{pay}}}")),
            5.0
        );
        assert_eq!(value(&later, &format!("sds_point_in_flight{{{io}}}")), 0.0);
    });
}

#[test]
fn a_buffer_too_small_says_how_much_is_needed_and_the_retry_fits() {
    on_table(4, |t| unsafe {
        set_strategy(t, "pay", r#"{"visitThreshold": 3}"#);
        enter(t, "pay", T0);
        // The text at T0 into `buf`: the result and the bytes the text needs.
        let text_into = |buf: &mut [c_char]| {
            let mut needed = 0usize;
            let (at, len) = (buf.as_mut_ptr(), buf.len());
            let r = sds_metrics_text(t, null(), null(), 0, T0, at, len, &mut needed);
            (r, needed)
        };
        let mut small = [0x55 as c_char; 64];
        let (r, needed) = text_into(&mut small);
        assert_eq!(r, sds_result::Ok);
        assert!(needed > 64, "{needed}");
        assert_eq!(small[0], 0, "an empty string, never a cut exposition");
        assert!(
            small[1..].iter().all(|&c| c == 0x55),
            "nothing else written"
        );
        // Exactly `needed` bytes leave no room for the NUL: still too small.
        let mut exact = vec![0x55 as c_char; needed];
        let (r, again) = text_into(&mut exact);
        assert_eq!((r, again, exact[0]), (sds_result::Ok, needed, 0));
        // One more byte holds it, the same text as `exposition` reads.
        let mut fits = vec![0x55 as c_char; needed + 1];
        let (r, again) = text_into(&mut fits);
        assert_eq!((r, again), (sds_result::Ok, needed));
        let text = CStr::from_ptr(fits.as_ptr()).to_str().unwrap();
        assert_eq!(text, prometheus(t, T0));
        assert!(text.contains("sds_point_requests_total{table=\"private\",point=\"pay\"} 1\n"));
    });
}

#[test]
fn openmetrics_names_counters_without_total_and_ends_in_eof() {
    on_table(4, |t| unsafe {
        enter(t, "pay", T0);
        let text = exposition(t, null(), null(), SDS_METRICS_OPENMETRICS, T0);
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert!(
            text.contains("# TYPE sds_point_requests counter\n"),
            "{text}"
        );
        assert!(text.contains("sds_point_requests_total{table=\"private\",point=\"pay\"} 1\n"));
        let prom = prometheus(t, T0);
        assert!(
            prom.contains("# TYPE sds_point_requests_total counter\n"),
            "{prom}"
        );
        assert!(!prom.contains("# EOF"));
        // Every family's help and type come from the metrics crate.
        let family = FAMILIES
            .iter()
            .find(|f| f.name == "sds_table_points")
            .unwrap();
        assert!(text.contains(&format!("# HELP sds_table_points {}\n", family.help)));
    });
    for (format, expected) in [
        (SDS_METRICS_PROMETHEUS, Format::Prometheus),
        (SDS_METRICS_OPENMETRICS, Format::OpenMetrics),
    ] {
        let got = unsafe { CStr::from_ptr(sds_metrics_content_type(format)) };
        assert_eq!(got.to_str().unwrap(), expected.content_type());
    }
    assert!(sds_metrics_content_type(2).is_null());
}

#[test]
fn keyed_limits_show_their_decisions_under_their_names_until_freed() {
    let _serial = serial();
    let login = keys_named(RATE, Some("login"));
    let unnamed = keys_named(RATE, None);
    // A burst of 3: of 5 calls at once, 3 admitted, 2 refused.
    let admitted = (0..5).filter(|_| decide(login, "user:1", T0)).count();
    assert_eq!(admitted, 3);
    assert!(decide(unnamed, "a", T0) && decide(unnamed, "b", T0));
    let mut stats = KeyTableStats::default();
    assert_eq!(
        unsafe { sds_keys_stats_get(login, &mut stats) },
        sds_result::Ok
    );
    assert_eq!((stats.admitted, stats.refused, stats.resident), (3, 2, 1));

    // No table: the keyed limits alone.
    let text = exposition(null(), null(), null(), SDS_METRICS_PROMETHEUS, T0);
    let s = samples(&text);
    assert!(
        !text.contains("sds_point_") && !text.contains("sds_table_"),
        "{text}"
    );
    let l = r#"limit="login""#;
    assert_eq!(
        value(
            &s,
            &format!("sds_keyed_decisions_total{{{l},outcome=\"admitted\"}}")
        ),
        3.0
    );
    assert_eq!(
        value(
            &s,
            &format!("sds_keyed_decisions_total{{{l},outcome=\"refused\"}}")
        ),
        2.0
    );
    assert_eq!(value(&s, &format!("sds_keyed_keys{{{l}}}")), 1.0);
    assert_eq!(
        value(&s, &format!("sds_keyed_keys_capacity{{{l}}}")),
        stats.capacity as f64
    );
    assert_eq!(value(&s, &format!("sds_keyed_evictions_total{{{l}}}")), 0.0);
    assert_eq!(
        value(&s, &format!("sds_keyed_lossy_evictions_total{{{l}}}")),
        0.0
    );
    // The unnamed one is `private-N`: the only other limit alive here.
    let others: Vec<&String> = s
        .keys()
        .filter(|k| k.starts_with("sds_keyed_keys{") && !k.contains(l))
        .collect();
    assert_eq!(others.len(), 1, "{others:?}");
    assert!(
        others[0].starts_with("sds_keyed_keys{limit=\"private-"),
        "{others:?}"
    );
    assert_eq!(s[others[0]], 2.0);

    // A table's exposition shows them too.
    let t = table(4);
    let with_table = samples(&prometheus(t, T0));
    assert_eq!(value(&with_table, &format!("sds_keyed_keys{{{l}}}")), 1.0);

    unsafe { sds_keys_free(login) };
    let after = prometheus(t, T0);
    assert!(!after.contains(l), "a freed limit leaves: {after}");
    assert!(after.contains("sds_keyed_keys{limit=\"private-"));
    unsafe {
        sds_keys_free(unnamed);
        sds_table_free(t);
    }
    let none = prometheus(null(), T0);
    assert!(!none.contains("sds_keyed_"), "{none}");
}

#[test]
fn a_shared_key_file_shows_under_its_file_name_or_its_given_name() {
    let _serial = serial();
    let dir = TempDir::new("ffi-metrics-keys");
    let path = dir.join("api.keys");
    let path = path.to_str().unwrap();
    let open = |name: Option<&str>| {
        let mut k = null_mut();
        let (n, n_len) = name.map_or((null(), 0), |n| (n.as_ptr().cast(), n.len()));
        let r = unsafe {
            sds_keys_open_shared_named(
                path.as_ptr().cast(),
                path.len(),
                RATE.as_ptr().cast(),
                RATE.len(),
                64,
                0,
                n,
                n_len,
                &mut k,
            )
        };
        assert_eq!(r, sds_result::Ok, "{}", last_error());
        k
    };
    let by_file = open(None);
    let named = open(Some("api"));
    assert!(decide(by_file, "k", T0));
    assert!(decide(named, "k", T0));
    let s = samples(&prometheus(null(), T0));
    // Both views read the file's counts: every process's decisions.
    for l in [r#"limit="api.keys""#, r#"limit="api""#] {
        let series = format!("sds_keyed_decisions_total{{{l},outcome=\"admitted\"}}");
        assert_eq!(value(&s, &series), 2.0, "{series}");
    }
    unsafe {
        sds_keys_free(by_file);
        sds_keys_free(named);
    }
}

#[test]
fn null_and_invalid_arguments_are_refused_and_write_nothing() {
    let _serial = serial();
    let t = table(4);
    let mut buf = [0x55 as c_char; 4096];
    let mut needed = 7usize;
    let call = |t, agent, format, buf: *mut c_char, len, needed: *mut usize| unsafe {
        sds_metrics_text(t, agent, null(), format, T0, buf, len, needed)
    };
    let p = buf.as_mut_ptr();
    assert_eq!(
        call(t, null(), 0, null_mut(), 4096, &mut needed),
        ErrorCode::NullArgument
    );
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `buf` is NULL");
    assert_eq!(
        call(t, null(), 0, p, 4096, null_mut()),
        ErrorCode::NullArgument
    );
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `needed` is NULL");
    assert_eq!(
        call(t, null(), 0, p, 0, &mut needed),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        last_error(),
        "SDS_INVALID_ARGUMENT: `len` is 0: no room for the NUL"
    );
    assert_eq!(
        call(t, null(), 2, p, 4096, &mut needed),
        ErrorCode::InvalidArgument
    );
    assert!(
        last_error().contains("2 is not a metrics format"),
        "{}",
        last_error()
    );
    assert_eq!(needed, 7);
    assert!(buf.iter().all(|&c| c == 0x55));

    // An agent started on another table, or given without its table.
    let other = table(4);
    let settings = r#"{"servers": "http://127.0.0.1:9", "app_group": "g", "app_name": "a",
                       "pull_interval_ms": 3600000}"#;
    let agent = start_agent(other, settings).unwrap();
    assert_eq!(
        call(t, agent, 0, p, 4096, &mut needed),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        last_error(),
        "SDS_INVALID_ARGUMENT: `agent` was started on another table"
    );
    assert_eq!(
        call(null(), agent, 0, p, 4096, &mut needed),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        last_error(),
        "SDS_INVALID_ARGUMENT: `agent` is given without its `table`"
    );
    assert_eq!((needed, buf[0]), (7, 0x55));
    // Its own table takes it, even freed before the agent stops.
    assert_eq!(call(other, agent, 0, p, 4096, &mut needed), sds_result::Ok);
    assert!(needed < 4096);
    unsafe {
        sds_agent_stop(agent);
        sds_table_free(other);
        sds_table_free(t);
    }

    // A name that is empty, too long or not UTF-8 makes no key table.
    let name_refused = |name: &[u8]| {
        let mut k = std::ptr::dangling_mut::<sds_keys>();
        let r = unsafe {
            sds_keys_new_named(
                RATE.as_ptr().cast(),
                RATE.len(),
                8,
                name.as_ptr().cast(),
                name.len(),
                &mut k,
            )
        };
        assert_eq!(k, std::ptr::dangling_mut::<sds_keys>(), "nothing written");
        r.code().map(|c| (c, last_error()))
    };
    assert_eq!(name_refused(b"").unwrap().0, ErrorCode::EmptyName);
    assert_eq!(
        name_refused(&[b'n'; 257]).unwrap().0,
        ErrorCode::NameTooLong
    );
    assert_eq!(
        name_refused(b"\xff"),
        Some((
            ErrorCode::InvalidArgument,
            "SDS_INVALID_ARGUMENT: `name` is not UTF-8".into()
        ))
    );
    let r =
        unsafe { sds_keys_new_named(RATE.as_ptr().cast(), RATE.len(), 8, null(), 0, null_mut()) };
    assert_eq!(r, ErrorCode::NullArgument);
    let none = prometheus(null(), T0);
    assert!(
        !none.contains("sds_keyed_"),
        "a refused table is not listed: {none}"
    );
}

#[test]
fn the_agent_and_cluster_of_the_table_show_and_promtool_finds_nothing() {
    let _serial = serial();
    let console = FakeConsole::http();
    let mut redis = Redis::start();
    let t = table(16);
    // One pull (an interval never reached), then the status stands still.
    let settings = format!(
        r#"{{"servers": "{}", "app_group": "g", "app_name": "a", "ip": "10.1.2.3",
             "hostname": "test-host", "pull_interval_ms": {}}}"#,
        console.url,
        u64::MAX
    );
    let agent = start_agent(t, &settings).unwrap();
    wait_until(Duration::from_secs(10), "the agent's pull", || {
        agent_status(agent).version == 1
    });
    let settings = format!(
        r#"{{"urls": "{}", "points": ["sync"], "sync_ms": 50}}"#,
        redis.url()
    );
    let cluster = start_cluster(t, &settings).unwrap();
    wait_until(Duration::from_secs(10), "a sync", || {
        cluster_state(cluster).syncs >= 2
    });
    let keys = keys_named(RATE, Some("promtool"));
    assert!(decide(keys, "k", T0));
    unsafe {
        let e = enter(t, "pay", T0);
        exit(t, &e, T0 + 1, 1);
    }

    let now = sds_now_ms();
    let before = cluster_state(cluster);
    let text = exposition(t, agent, cluster, SDS_METRICS_PROMETHEUS, now);
    let after = cluster_state(cluster);
    let s = samples(&text);
    let a = agent_status(agent);
    let l = r#"{table="private"}"#;
    assert_eq!(value(&s, &format!("sds_agent_up{l}")), 1.0);
    assert_eq!(value(&s, &format!("sds_agent_last_pull_success{l}")), 1.0);
    assert_eq!(value(&s, &format!("sds_agent_strategy_version{l}")), 1.0);
    assert_eq!(value(&s, &format!("sds_agent_reporter{l}")), 1.0);
    assert_eq!(
        value(&s, &format!("sds_agent_last_pull_timestamp_seconds{l}")),
        a.last_pull_ms as f64 / 1000.0
    );
    assert_eq!(value(&s, &format!("sds_agent_pull_failures_total{l}")), 0.0);
    assert_eq!(value(&s, &format!("sds_cluster_up{l}")), 1.0);
    assert_eq!(value(&s, &format!("sds_cluster_connected{l}")), 1.0);
    assert_eq!(value(&s, &format!("sds_cluster_points{l}")), 1.0);
    let syncs = value(&s, &format!("sds_cluster_syncs_total{l}"));
    assert!(
        (before.syncs as f64..=after.syncs as f64).contains(&syncs),
        "{syncs}"
    );
    assert_eq!(value(&s, &format!("sds_cluster_failures_total{l}")), 0.0);
    // "pay" (entered) and the cluster's point "sync".
    assert_eq!(value(&s, r#"sds_table_points{table="private"}"#), 2.0);

    // promtool reads the Prometheus text format (an OpenMetrics text's
    // counter families, named without `_total`, are "no help text" to it).
    assert_eq!(promtool(&text), "", "{text}");

    unsafe {
        sds_keys_free(keys);
        sds_cluster_stop(cluster);
        sds_agent_stop(agent);
        sds_table_free(t);
    }
    redis.stop();
    drop(console);
}
