//! Test hooks, compiled only with the `test-hooks` feature: a process can be
//! parked at a chosen point of the protocol, or of a table transition, so a
//! test kills it there.

use std::sync::OnceLock;

/// Set in a process's environment: its creator parks right after sizing the
/// file, before writing anything, printing [`PARKED`] on stdout first.
pub const PARK_AFTER_TRUNCATE: &str = "SDS_SHM_TEST_PARK_AFTER_TRUNCATE";
/// Set in a process's environment to `Transition:step` (e.g. `Claim:1`,
/// `DelaySettle:0`, names as in `sds_core::Transition`): a view of this
/// process parks at that checkpoint, printing [`PARKED`] first.
pub const PARK_AT: &str = "SDS_SHM_TEST_PARK_AT";
/// The line a parked process prints.
pub const PARKED: &str = "@@parked";

/// Called by the creator once the file has its size.
pub fn after_truncate() {
    if std::env::var_os(PARK_AFTER_TRUNCATE).is_some() {
        park();
    }
}

/// Called by the core at each checkpoint of a transition.
pub fn checkpoint(at: sds_core::Checkpoint) {
    static WHERE: OnceLock<Option<String>> = OnceLock::new();
    let Some(wanted) = WHERE.get_or_init(|| std::env::var(PARK_AT).ok()) else {
        return;
    };
    if *wanted == format!("{:?}:{}", at.transition, at.step) {
        park();
    }
}

fn park() -> ! {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{PARKED}");
    let _ = out.flush();
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
