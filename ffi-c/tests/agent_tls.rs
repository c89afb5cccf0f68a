//! `sds_agent_*` through the C ABI against the fake console on HTTPS
//! (tools/fake-sds-admin.py --tls-cert/--tls-key, certificates from
//! tools/test-pki.sh): `tls_ca_file` trusts the console's own CA, a console
//! of another CA is a pull failure in the status, a bad file is refused;
//! mutual TLS through `tls_cert_file`/`tls_key_file`; a `UINT64_MAX` pull
//! interval pulls once; `sds_agent_stop` from the agent's own log callback.

use std::os::raw::c_char;
use std::path::Path;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use sds::*;
use sds_core::{EntryParts, ErrorCode};
use sds_testkit::{TempDir, Tls};
use serde_json::{json, Value as Json};

mod common;
use common::{agent_status, pki, start_agent, table, text, FakeConsole};

/// How the last error message starts when the agent refuses its config.
const REFUSED: &str = "SDS_INVALID_ARGUMENT: cannot start the SDS agent: ";

/// The settings of an agent of app "g"/"a" pulling from `servers` every
/// 100 ms, trusting `ca`, with the members of `more` (an object).
fn settings(servers: &str, ca: &Path, more: Json) -> String {
    let mut settings = json!({"servers": servers, "app_group": "g", "app_name": "a",
        "ip": "10.1.2.3", "hostname": "test-host", "pull_interval_ms": 100, "tls_ca_file": ca});
    settings
        .as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    settings.to_string()
}

/// The agent's status once `until` holds (within 10 s).
fn status_until(
    agent: *const sds_agent,
    until: impl Fn(&sds_agent_status) -> bool,
) -> sds_agent_status {
    let started = Instant::now();
    loop {
        let s = agent_status(agent);
        if until(&s) {
            return s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "status never came: {}",
            text(&s.last_error)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

unsafe fn downgraded(t: *const sds_table, now: u64) -> bool {
    let mut e = EntryParts::default();
    assert_eq!(
        sds_enter(t, c"pay".as_ptr(), 3, now, 0, &mut e),
        sds_result::Ok
    );
    assert_eq!(sds_exit(t, &e, now, 0), sds_result::Ok);
    sds_entry_downgraded(&e)
}

/// A table, and an agent on it pulling from `fake` with the CA of
/// `trusted` as its `tls_ca_file`.
fn table_and_agent(fake: &FakeConsole, trusted: &Tls) -> (*mut sds_table, *mut sds_agent) {
    let t = table(8);
    (
        t,
        start_agent(t, &settings(&fake.url, &trusted.ca, json!({}))).unwrap(),
    )
}

#[test]
fn tls_ca_file_trusts_the_consoles_own_ca() {
    let (_dir, tls) = pki("agent-tls");
    let fake = FakeConsole::https(&tls);
    unsafe {
        let (t, agent) = table_and_agent(&fake, &tls);
        let s = status_until(agent, |s| s.version == 1);
        assert!(s.last_pull_ok && s.pull_failures == 0);
        assert_eq!(text(&s.server), fake.url);
        let now = sds_now_ms();
        assert!(!downgraded(t, now));
        assert!(downgraded(t, now), "the console's limit of 1 is in force");
        sds_agent_stop(agent);
        sds_table_free(t);
    }
}

#[test]
fn a_console_of_another_ca_is_a_pull_failure_in_the_status() {
    let dir = TempDir::new("agent-tls");
    let ours = Tls::generate(&dir.path().join("ours"));
    let theirs = Tls::generate(&dir.path().join("theirs"));
    let fake = FakeConsole::https(&theirs);
    unsafe {
        let (t, agent) = table_and_agent(&fake, &ours);
        let s = status_until(agent, |s| s.pull_failures >= 1);
        assert!(!s.last_pull_ok && s.version == 0);
        let error = text(&s.last_error);
        assert!(
            error.starts_with(&format!("SDS strategy pull failed: {}/", fake.url))
                && error.contains("UnknownIssuer"),
            "{error}"
        );
        sds_agent_stop(agent);
        sds_table_free(t);
    }
}

#[test]
fn a_bad_tls_ca_file_is_refused_at_start() {
    let (_dir, tls) = pki("agent-tls");
    let https = "https://127.0.0.1:1";
    let t = table(8);
    let refused = |servers: &str, ca: &Path| {
        let (code, message) = start_agent(t, &settings(servers, ca, json!({}))).unwrap_err();
        assert_eq!(code, ErrorCode::InvalidArgument);
        message
    };
    let message = refused(https, Path::new("/nonexistent/sds-ca.pem"));
    assert!(
        message.starts_with(&format!(
            "{REFUSED}tls_ca_file /nonexistent/sds-ca.pem: No such file"
        )),
        "{message}"
    );
    assert_eq!(
        refused(https, &tls.key),
        format!(
            "{REFUSED}tls_ca_file {}: holds no PEM certificate",
            tls.key.display()
        )
    );
    assert_eq!(
        refused("http://127.0.0.1:1", &tls.ca),
        format!(
            "{REFUSED}tls_ca_file is given but no server is an https:// URL \
             (the CA file only verifies HTTPS servers)"
        )
    );
    unsafe { sds_table_free(t) };
}

#[test]
fn tls_cert_and_key_files_answer_a_console_that_requires_a_client_certificate() {
    let (_dir, tls) = pki("agent-tls");
    let fake = FakeConsole::https_mutual(&tls);
    let t = table(8);
    let with = |more: Json| start_agent(t, &settings(&fake.url, &tls.ca, more));
    let cert = json!({"tls_cert_file": tls.client_cert, "tls_key_file": tls.client_key});
    unsafe {
        let agent = with(cert).unwrap();
        let s = status_until(agent, |s| s.version == 1);
        assert!(s.last_pull_ok && s.pull_failures == 0);
        assert_eq!((s.strategies_waiting, s.points_left_out), (0, 0));
        sds_agent_stop(agent);

        // Without the certificate the handshake is refused.
        let without = with(json!({})).unwrap();
        let s = status_until(without, |s| s.pull_failures >= 1);
        assert_eq!(s.version, 0);
        sds_agent_stop(without);

        // A certificate without its key is refused at start.
        assert_eq!(
            with(json!({ "tls_cert_file": tls.client_cert })),
            Err((
                ErrorCode::InvalidArgument,
                format!("{REFUSED}tls_cert_file and tls_key_file go together (mutual TLS)")
            ))
        );
        sds_table_free(t);
    }
}

#[test]
fn a_uint64_max_pull_interval_pulls_once() {
    let (_dir, tls) = pki("agent-tls");
    let fake = FakeConsole::https(&tls);
    let forever = json!({"pull_interval_ms": u64::MAX, "timeout_ms": u64::MAX});
    let t = table(8);
    unsafe {
        let agent = start_agent(t, &settings(&fake.url, &tls.ca, forever)).unwrap();
        let first = status_until(agent, |s| s.version == 1).last_pull_ms;
        std::thread::sleep(Duration::from_millis(1_000));
        let s = status_until(agent, |_| true);
        assert_eq!(s.last_pull_ms, first, "no second pull");
        sds_agent_stop(agent);
        sds_table_free(t);
    }
}
/// The agent a log callback stops, and whether `sds_agent_stop` returned.
struct StopFromLog {
    agent: std::sync::Mutex<*mut sds_agent>,
    returned: std::sync::atomic::AtomicBool,
}

unsafe extern "C" fn stop_on_log(
    context: *mut std::ffi::c_void,
    _: u32,
    _: *const c_char,
    _: usize,
) {
    let stop = &*(context as *const StopFromLog);
    let agent = std::mem::replace(&mut *stop.agent.lock().unwrap(), null_mut());
    if !agent.is_null() {
        sds_agent_stop(agent);
        stop.returned
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn sds_agent_stop_from_the_agents_own_log_callback_returns() {
    let (_dir, tls) = pki("agent-tls");
    let fake = FakeConsole::https(&tls);
    let settings = settings(&fake.url, &tls.ca, json!({}));
    let stop = StopFromLog {
        agent: std::sync::Mutex::new(null_mut()),
        returned: std::sync::atomic::AtomicBool::new(false),
    };
    unsafe {
        let t = table(8);
        let context = &stop as *const StopFromLog as *mut std::ffi::c_void;
        {
            // Held while starting, so the callback sees the handle.
            let mut slot = stop.agent.lock().unwrap();
            let mut agent = null_mut();
            let (json, len) = (settings.as_ptr().cast(), settings.len());
            let r = sds_agent_start(t, json, len, Some(stop_on_log), context, &mut agent);
            assert_eq!(r, sds_result::Ok);
            *slot = agent;
        }
        let started = Instant::now();
        while !stop.returned.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "stop never returned"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // Give the detached thread time to end before `stop` goes away.
        std::thread::sleep(Duration::from_millis(200));
        sds_table_free(t);
    }
}
