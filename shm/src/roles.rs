//! Host-wide roles: jobs that exactly one process attached to a table file
//! should do (upload the host's statistics to the console, sync the host's
//! counts with Redis). A role is a record lock on its own byte past the
//! file: the kernel gives it to one process at a time and drops it when that
//! process dies, so a survivor takes the role over on its next try, and a
//! `kill -9` can never leave it held.
//!
//! Inside one process the lock cannot tell two holders apart (record locks
//! belong to the process), so each attachment also keeps who in this
//! process holds each role, tagged with the fork epoch: a fork child
//! inherits the parent's memory but not its locks, and must not think it
//! holds what the parent held.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::layout::ROLE_LOCK_BASE;
use crate::{sys, Error, SharedFile};

/// A job one process per host does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Uploads the table's statistics to the SDS console.
    Reporter = 0,
    /// Pushes the table's counts to Redis and reads the cluster's back.
    Syncer = 1,
}

/// How many roles there are.
pub(crate) const ROLES: usize = 2;

impl Role {
    fn lock_byte(self) -> u64 {
        ROLE_LOCK_BASE + self as u64
    }
}

/// Who in this process holds each role: 0 for nobody, else the fork epoch
/// it was taken in, plus one.
pub(crate) type Holders = [AtomicU64; ROLES];

/// A role this process holds, until the guard drops (or the process dies).
pub struct RoleGuard {
    file: SharedFile,
    role: Role,
    tag: u64,
}

impl std::fmt::Debug for RoleGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoleGuard")
            .field("role", &self.role)
            .finish()
    }
}

impl SharedFile {
    /// Takes `role` for this process if no other process (and no other
    /// guard in this process) holds it: `None` when it is held. Never waits.
    pub fn try_take_role(&self, role: Role) -> Result<Option<RoleGuard>, Error> {
        let holder = &self.holders()[role as usize];
        let tag = sys::fork_epoch() + 1;
        let held = holder.load(Ordering::Acquire);
        // A tag of an earlier epoch was the parent's: this child holds nothing.
        if held == tag
            || holder
                .compare_exchange(held, tag, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return Ok(None);
        }
        match sys::try_lock(self.lock_file(), role.lock_byte()) {
            Ok(true) => Ok(Some(RoleGuard {
                file: self.clone(),
                role,
                tag,
            })),
            taken_or_failed => {
                holder.store(0, Ordering::Release);
                taken_or_failed.map(|_| None).map_err(|source| Error::Io {
                    path: self.path().into(),
                    action: "fcntl(F_SETLK)",
                    source,
                })
            }
        }
    }
}

impl RoleGuard {
    /// The role held.
    pub fn role(&self) -> Role {
        self.role
    }
}

impl Drop for RoleGuard {
    fn drop(&mut self) {
        // A guard a fork child inherited holds no lock there; leave the
        // parent's record alone too (the child's memory is its own anyway).
        if self.tag != sys::fork_epoch() + 1 {
            return;
        }
        let _ = sys::unlock(self.file.lock_file(), self.role.lock_byte());
        self.file.holders()[self.role as usize].store(0, Ordering::Release);
    }
}
