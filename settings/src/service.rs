//! [`Service`]: what every binding does with a background service (the
//! console agent, the cluster sync), whichever it is.

use crate::Fields;

/// A service running on a thread of its own for one table, its methods
/// callable from any thread. A binding starts one with the crate's own
/// `start` (each takes its own config), then reads and stops it through
/// this trait alone.
pub trait Service: Send + Sync {
    /// Its status, which leaves Rust as [`Fields`] (plain data: sent to
    /// any thread).
    type Status: Fields + Send;

    /// Its state now; after [`Service::stop`], the last one (as of the
    /// stop, which the service's docs say more of).
    fn status(&self) -> Self::Status;

    /// Stops it and joins its thread; idempotent. Its status stays
    /// readable, and dropping it stops it too.
    fn stop(&self);

    /// Whether [`Service::stop`] has not been called yet.
    fn is_running(&self) -> bool;
}

/// Implements [`Service`] for `$ty` by its inherent `status`, `stop` (its
/// return value, if any, dropped) and `is_running`, whose docs are the
/// service's own: `sds_settings::service!(Agent, Status);`.
#[macro_export]
macro_rules! service {
    ($ty:ty, $status:ty) => {
        impl $crate::Service for $ty {
            type Status = $status;

            fn status(&self) -> $status {
                <$ty>::status(self)
            }

            fn stop(&self) {
                <$ty>::stop(self);
            }

            fn is_running(&self) -> bool {
                <$ty>::is_running(self)
            }
        }
    };
}
