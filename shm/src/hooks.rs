//! Test hooks, compiled only with the `test-hooks` feature: a process can be
//! parked at a chosen point of the protocol so a test kills it there.

/// Set in a process's environment: its creator parks right after sizing the
/// file, before writing anything, printing [`PARKED`] on stdout first.
pub const PARK_AFTER_TRUNCATE: &str = "SDS_SHM_TEST_PARK_AFTER_TRUNCATE";
/// The line a parked process prints.
pub const PARKED: &str = "@@parked";

/// Called by the creator once the file has its size.
pub fn after_truncate() {
    if std::env::var_os(PARK_AFTER_TRUNCATE).is_some() {
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = writeln!(out, "{PARKED}");
        let _ = out.flush();
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
}
