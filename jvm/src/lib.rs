//! # sds-jni
//!
//! The JNI library behind the Java packages `io.sdsnative` (the native API)
//! and the SDS drop-in classes. Every function here is a `native` method of
//! `io.sdsnative.Native`; the Java side owns the objects, this side only
//! converts integers and arrays to core calls.
//!
//! Two kinds of entry points:
//! - the **hot path** (`enter`, `exit`, the window counters): primitives in,
//!   one `jlong` out, no JNI call at all; errors come back as negative codes
//!   the Java side turns into `SdsException`;
//! - **setup calls** (tables, strategies, stats): they use the JNI
//!   environment and throw `io.sdsnative.SdsException` directly.
//!
//! Both kinds catch panics: a panic becomes an exception with code
//! `SDS_PANIC`, never an abort of the JVM.

mod boundary;
mod codes;
mod handle;
mod strategy;
mod table;
mod window;
