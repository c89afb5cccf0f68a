//! `sds_agent_*` through the C ABI against the fake console on HTTPS
//! (tools/fake-sds-admin.py --tls-cert/--tls-key, certificates from
//! tools/test-pki.sh): `tls_ca_file` trusts the console's own CA, a console
//! of another CA is a pull failure in the status, a bad file is refused;
//! mutual TLS through `tls_cert_file`/`tls_key_file`; a `UINT64_MAX` pull
//! interval pulls once; `sds_agent_stop` from the agent's own log callback.

use std::ffi::CString;
use std::io::{BufRead, BufReader};
use std::os::raw::c_char;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use sds::*;
use sds_core::EntryParts;
use sds_testkit::{TempDir, Tls};

mod common;
use common::{c_path, last_error, text};

/// How the last error message starts when the agent refuses its config.
const REFUSED: &str = "SDS_INVALID_ARGUMENT: cannot start the SDS agent: ";

const APP: &str = r#"{"appGroupName": "g", "appName": "a",
                      "strategies": [{"point": "pay", "visitThreshold": 1}]}"#;

/// The fake console on HTTPS with `tls`'s server certificate and app "g"/"a"
/// (version 1: "pay" at 1 visit per second); killed on drop.
struct FakeConsole {
    child: Child,
    _stdin: ChildStdin,
    url: String,
}

impl FakeConsole {
    fn start(tls: &Tls) -> FakeConsole {
        FakeConsole::spawn(tls, false)
    }

    /// A console that requires a client certificate of `tls.ca`.
    fn start_mutual(tls: &Tls) -> FakeConsole {
        FakeConsole::spawn(tls, true)
    }

    fn spawn(tls: &Tls, mutual: bool) -> FakeConsole {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/fake-sds-admin.py");
        let mut command = Command::new("python3");
        command
            .arg(script)
            .arg("--app")
            .arg(APP)
            .arg("--tls-cert")
            .arg(&tls.cert)
            .arg("--tls-key")
            .arg(&tls.key);
        if mutual {
            command.arg("--tls-client-ca").arg(&tls.ca);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the fake console");
        let stdin = child.stdin.take().unwrap();
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        FakeConsole {
            child,
            _stdin: stdin,
            url: format!("https://127.0.0.1:{}", port.trim()),
        }
    }
}

impl Drop for FakeConsole {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(servers: &CString, ca: Option<&CString>) -> sds_agent_config {
    sds_agent_config {
        servers: servers.as_ptr(),
        app_group: c"g".as_ptr(),
        app_name: c"a".as_ptr(),
        ip: c"10.1.2.3".as_ptr(),
        hostname: c"test-host".as_ptr(),
        pull_interval_ms: 100,
        timeout_ms: 0,
        log: None,
        log_context: null_mut(),
        tls_ca_file: ca.map_or(null(), |ca| ca.as_ptr()),
        tls_cert_file: null(),
        tls_key_file: null(),
    }
}

/// The agent's status once `until` holds (within 10 s).
fn status_until(
    agent: *const sds_agent,
    until: impl Fn(&sds_agent_status) -> bool,
) -> sds_agent_status {
    let started = Instant::now();
    loop {
        let mut s = std::mem::MaybeUninit::<sds_agent_status>::uninit();
        assert_eq!(
            unsafe { sds_agent_status_get(agent, s.as_mut_ptr()) },
            sds_result::Ok
        );
        let s = unsafe { s.assume_init() };
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

unsafe fn table() -> *mut sds_table {
    let mut t = null_mut();
    assert_eq!(sds_table_new(8, &mut t), sds_result::Ok);
    t
}

/// A table, and an agent on it pulling from `fake` with the CA of
/// `trusted` as its `tls_ca_file`.
unsafe fn table_and_agent(fake: &FakeConsole, trusted: &Tls) -> (*mut sds_table, *mut sds_agent) {
    let (servers, ca) = (
        CString::new(fake.url.as_str()).unwrap(),
        c_path(&trusted.ca),
    );
    let (t, mut agent) = (table(), null_mut());
    assert_eq!(
        sds_agent_start(t, &config(&servers, Some(&ca)), &mut agent),
        sds_result::Ok
    );
    (t, agent)
}

#[test]
fn tls_ca_file_trusts_the_consoles_own_ca() {
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fake = FakeConsole::start(&tls);
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
    let fake = FakeConsole::start(&theirs);
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
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let https = c"https://127.0.0.1:1".into();
    let missing = c"/nonexistent/sds-ca.pem".into();
    let key = c_path(&tls.key);
    let ca = c_path(&tls.ca);
    unsafe {
        let t = table();
        let mut agent = null_mut();
        let refused = |c: sds_agent_config, agent: &mut *mut sds_agent| {
            assert_eq!(sds_agent_start(t, &c, agent), sds_result::InvalidArgument);
            assert!(agent.is_null());
            last_error()
        };
        let message = refused(config(&https, Some(&missing)), &mut agent);
        assert!(
            message.starts_with(&format!(
                "{REFUSED}tls_ca_file /nonexistent/sds-ca.pem: No such file"
            )),
            "{message}"
        );
        assert_eq!(
            refused(config(&https, Some(&key)), &mut agent),
            format!(
                "{REFUSED}tls_ca_file {}: holds no PEM certificate",
                tls.key.display()
            )
        );
        let http = c"http://127.0.0.1:1".into();
        assert_eq!(
            refused(config(&http, Some(&ca)), &mut agent),
            format!(
                "{REFUSED}tls_ca_file is given but no server is an https:// URL \
                 (the CA file only verifies HTTPS servers)"
            )
        );
        sds_table_free(t);
    }
}

#[test]
fn tls_cert_and_key_files_answer_a_console_that_requires_a_client_certificate() {
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fake = FakeConsole::start_mutual(&tls);
    let servers = CString::new(fake.url.as_str()).unwrap();
    let (ca, cert, key) = (
        c_path(&tls.ca),
        c_path(&tls.client_cert),
        c_path(&tls.client_key),
    );
    unsafe {
        let (t, mut agent) = (table(), null_mut());
        let mut c = config(&servers, Some(&ca));
        c.tls_cert_file = cert.as_ptr();
        c.tls_key_file = key.as_ptr();
        assert_eq!(sds_agent_start(t, &c, &mut agent), sds_result::Ok);
        let s = status_until(agent, |s| s.version == 1);
        assert!(s.last_pull_ok && s.pull_failures == 0);
        assert_eq!((s.strategies_waiting, s.points_left_out), (0, 0));
        sds_agent_stop(agent);

        // Without the certificate the handshake is refused.
        let mut without = null_mut();
        assert_eq!(
            sds_agent_start(t, &config(&servers, Some(&ca)), &mut without),
            sds_result::Ok
        );
        let s = status_until(without, |s| s.pull_failures >= 1);
        assert_eq!(s.version, 0);
        sds_agent_stop(without);

        // A certificate without its key is refused at start.
        let mut c = config(&servers, Some(&ca));
        c.tls_cert_file = cert.as_ptr();
        let mut refused = null_mut();
        assert_eq!(
            sds_agent_start(t, &c, &mut refused),
            sds_result::InvalidArgument
        );
        assert_eq!(
            last_error(),
            format!("{REFUSED}tls_cert_file and tls_key_file go together (mutual TLS)")
        );
        sds_table_free(t);
    }
}

#[test]
fn a_uint64_max_pull_interval_pulls_once() {
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fake = FakeConsole::start(&tls);
    let servers = CString::new(fake.url.as_str()).unwrap();
    let ca = c_path(&tls.ca);
    unsafe {
        let (t, mut agent) = (table(), null_mut());
        let mut c = config(&servers, Some(&ca));
        c.pull_interval_ms = u64::MAX;
        c.timeout_ms = u64::MAX;
        assert_eq!(sds_agent_start(t, &c, &mut agent), sds_result::Ok);
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
    let dir = TempDir::new("agent-tls");
    let tls = Tls::generate(dir.path());
    let fake = FakeConsole::start(&tls);
    let servers = CString::new(fake.url.as_str()).unwrap();
    let ca = c_path(&tls.ca);
    let stop = StopFromLog {
        agent: std::sync::Mutex::new(null_mut()),
        returned: std::sync::atomic::AtomicBool::new(false),
    };
    unsafe {
        let t = table();
        let mut c = config(&servers, Some(&ca));
        c.log = Some(stop_on_log);
        c.log_context = &stop as *const StopFromLog as *mut std::ffi::c_void;
        {
            // Held while starting, so the callback sees the handle.
            let mut slot = stop.agent.lock().unwrap();
            let mut agent = null_mut();
            assert_eq!(sds_agent_start(t, &c, &mut agent), sds_result::Ok);
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
