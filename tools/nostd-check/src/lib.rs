//! If `sds-core` (outside its tests) pulled in `std`, std's panic handler
//! would clash with the one below and this crate would not build.
#![no_std]

use core::panic::PanicInfo;
use sds_core::{Flags, Point, SlidingWindow};

static POINT: Point = Point::new();
static WINDOW: sds_core::window::SdsCounterWindow = SlidingWindow::sds_counter();

/// Uses the hot paths so they are compiled and linked here.
#[no_mangle]
pub extern "C" fn nostd_check(now_ms: u64) -> u64 {
    let entry = POINT.enter(now_ms, Flags::NONE);
    POINT.exit(&entry, now_ms, sds_core::Outcome::Ok);
    WINDOW.increment(now_ms).total + POINT.stats(now_ms).visit
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {}
}
