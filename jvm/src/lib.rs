//! # sds-jni
//!
//! The JNI library behind the Java packages `io.sdsnative` (the native API)
//! and the SDS drop-in classes. Every function here is a `native` method of
//! `io.sdsnative.Native`; the Java side owns the objects, this side only
//! converts integers and arrays to core calls.
//!
//! Two kinds of entry points:
//! - the **hot path** (`enter`, `exit`, the window counters): primitives in,
//!   one `jlong` out, no JNI call unless it fails: then it throws
//!   `SdsException` with the core's code and message;
//! - **setup calls** (tables, strategies, stats): they use the JNI
//!   environment and throw `io.sdsnative.SdsException` directly.
//!
//! Both kinds catch panics: a panic becomes an exception with code
//! `SDS_PANIC`, never an abort of the JVM. The library has no test hooks;
//! the panic boundary is tested by this crate's unit tests.

mod agent;
mod boundary;
mod cluster;
mod codes;
mod handle;
mod http;
mod keys;
mod metrics;
mod service;
mod settings;
mod shared;
mod strategy;
mod table;
mod window;
