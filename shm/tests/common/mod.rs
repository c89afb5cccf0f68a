//! The workspace's process-test support (`testkit/`).

pub use sds_testkit::*;
