//! No code: a dependency of every binding that makes them all ask for the
//! same features of the crates they share (see this crate's Cargo.toml).
#![no_std]
