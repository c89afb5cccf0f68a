//! The atomics the core is built from. Under `--cfg loom` they are loom's
//! model-checked twins, so the loom tests exercise the very code that ships.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Declares a `const fn`, except under loom, whose atomics have no `const`
/// constructor. Everything else about the function is the same in both builds.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident $($rest:tt)*) => {
        #[cfg(not(loom))]
        $(#[$attr])* $vis const fn $name $($rest)*
        #[cfg(loom)]
        $(#[$attr])* $vis fn $name $($rest)*
    };
}
pub(crate) use const_fn;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::fence;

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::fence;

/// Backs off inside a retry loop (a yield point for loom's scheduler).
#[inline]
pub(crate) fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

/// Declares `$name::<N>()`, `N` `$atomic`s holding 0: a `const fn` except
/// under loom (whose atomics have no `const` constructor).
macro_rules! zeroed_fn {
    ($name:ident, $atomic:ident) => {
        #[doc = concat!("`N` `", stringify!($atomic), "`s holding 0, in a `const` context except under loom.")]
        #[cfg(not(loom))]
        pub(crate) const fn $name<const N: usize>() -> [$atomic; N] {
            [const { $atomic::new(0) }; N]
        }

        #[doc = concat!("`N` `", stringify!($atomic), "`s holding 0, in a `const` context except under loom.")]
        #[cfg(loom)]
        pub(crate) fn $name<const N: usize>() -> [$atomic; N] {
            core::array::from_fn(|_| $atomic::new(0))
        }
    };
}

zeroed_fn!(zeroed, AtomicU64);
zeroed_fn!(zeroed_u32, AtomicU32);
