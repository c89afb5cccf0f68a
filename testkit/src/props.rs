//! The settings of the workspace's property tests: few cases by default, so
//! `make test` stays quick, `PROPTEST_CASES` for long runs by hand; no
//! regression files (a failure found becomes a plain test in its file).

use proptest::test_runner::{Config, FileFailurePersistence};

/// `default_cases` cases, or `PROPTEST_CASES` when it is set.
pub fn proptest_config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    }
}
