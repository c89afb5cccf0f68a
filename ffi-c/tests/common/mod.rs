//! Helpers shared by the C ABI's Rust tests: C strings and buffers to Rust
//! and back, this thread's last error, a table, the services started from
//! their JSON settings and their statuses, the fake SDS console.

// Not every test file uses every helper.
#![allow(dead_code)]

use std::ffi::CString;
use std::io::{BufRead, BufReader};
use std::mem::MaybeUninit;
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use sds_core::ErrorCode;
use sds_testkit::{TempDir, Tls};

use sds::{
    sds_agent, sds_agent_start, sds_agent_status, sds_agent_status_get, sds_cluster,
    sds_cluster_start, sds_cluster_state, sds_cluster_status, sds_last_error_message, sds_result,
    sds_table, sds_table_new, SDS_MESSAGE_MAX,
};

/// The text of a C buffer, up to its first NUL if it holds one.
pub fn text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8(bytes).unwrap()
}

/// This thread's last error message.
pub fn last_error() -> String {
    let mut buf = [0 as c_char; SDS_MESSAGE_MAX + 1];
    let mut len = 0usize;
    let r = unsafe { sds_last_error_message(buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!(r, sds_result::Ok);
    text(&buf[..len])
}

/// `path` as a C string.
pub fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

/// A new private table of `capacity` points; free it with `sds_table_free`.
pub fn table(capacity: usize) -> *mut sds_table {
    let mut t = std::ptr::null_mut();
    assert_eq!(unsafe { sds_table_new(capacity, &mut t) }, sds_result::Ok);
    t
}

/// A call's refusal: its code and the last error message.
pub type Refusal = (ErrorCode, String);

/// `Ok(made)` for success, else the code and the last error message.
pub fn made<T>(r: sds_result, made: T) -> Result<T, Refusal> {
    match r.code() {
        None => Ok(made),
        Some(code) => Err((code, last_error())),
    }
}

/// Starts the agent on `t` with the JSON text `settings` and no log.
pub fn start_agent(t: *const sds_table, settings: &str) -> Result<*mut sds_agent, Refusal> {
    let mut agent = std::ptr::null_mut();
    let (json, log_context) = (settings.as_ptr().cast(), std::ptr::null_mut());
    let r = unsafe { sds_agent_start(t, json, settings.len(), None, log_context, &mut agent) };
    made(r, agent)
}

/// Starts a cluster on `t` with the JSON text `settings`.
pub fn start_cluster(t: *const sds_table, settings: &str) -> Result<*mut sds_cluster, Refusal> {
    let mut cluster = std::ptr::null_mut();
    let r = unsafe { sds_cluster_start(t, settings.as_ptr().cast(), settings.len(), &mut cluster) };
    made(r, cluster)
}

/// A test PKI (CA, server and client certificates) in a new directory,
/// removed when the `TempDir` is dropped.
pub fn pki(name: &str) -> (TempDir, Tls) {
    let dir = TempDir::new(name);
    let tls = Tls::generate(dir.path());
    (dir, tls)
}

/// The struct `get` writes through its pointer, which must return SDS_OK.
fn written<T>(get: impl FnOnce(*mut T) -> sds_result) -> T {
    let mut out = MaybeUninit::<T>::uninit();
    assert_eq!(get(out.as_mut_ptr()), sds_result::Ok);
    // SAFETY: a getter that returns SDS_OK has written the whole struct.
    unsafe { out.assume_init() }
}

/// The agent's status, as `sds_agent_status_get` writes it.
pub fn agent_status(agent: *const sds_agent) -> sds_agent_status {
    written(|out| unsafe { sds_agent_status_get(agent, out) })
}

/// The cluster's status, as `sds_cluster_status` writes it.
pub fn cluster_state(cluster: *const sds_cluster) -> sds_cluster_state {
    written(|out| unsafe { sds_cluster_status(cluster, out) })
}

/// The app the fake console serves: "g"/"a" at strategy version 1, "pay"
/// at 1 visit per second.
const CONSOLE_APP: &str = r#"{"appGroupName": "g", "appName": "a",
                      "strategies": [{"point": "pay", "visitThreshold": 1}]}"#;

/// The fake SDS console (tools/fake-sds-admin.py) serving app "g"/"a"
/// ([`CONSOLE_APP`]) at `url`; killed on drop.
pub struct FakeConsole {
    child: Child,
    _stdin: ChildStdin,
    pub url: String,
}

impl FakeConsole {
    /// The console on plain HTTP.
    pub fn http() -> FakeConsole {
        FakeConsole::start(None)
    }

    /// The console on HTTPS with `tls`'s server certificate.
    pub fn https(tls: &Tls) -> FakeConsole {
        FakeConsole::start(Some((tls, false)))
    }

    /// As [`FakeConsole::https`], requiring a client certificate of
    /// `tls.ca`.
    pub fn https_mutual(tls: &Tls) -> FakeConsole {
        FakeConsole::start(Some((tls, true)))
    }

    fn start(tls: Option<(&Tls, bool)>) -> FakeConsole {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/fake-sds-admin.py");
        let mut command = Command::new("python3");
        command.args([script, "--app", CONSOLE_APP]);
        let scheme = match tls {
            None => "http",
            Some((tls, mutual)) => {
                command
                    .arg("--tls-cert")
                    .arg(&tls.cert)
                    .arg("--tls-key")
                    .arg(&tls.key);
                if mutual {
                    command.arg("--tls-client-ca").arg(&tls.ca);
                }
                "https"
            }
        };
        let mut child = (command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn())
            .expect("python3 runs the fake console");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        FakeConsole {
            _stdin: child.stdin.take().unwrap(),
            child,
            url: format!("{scheme}://127.0.0.1:{}", port.trim()),
        }
    }
}

impl Drop for FakeConsole {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
