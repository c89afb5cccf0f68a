//! [`AnyTable`]: a point table as a binding holds it, private to the process
//! or shared with the host through a file, and what work beside the hot path
//! (the console agent, the cluster syncer) needs of either: the core's
//! [`Points`] and the host-wide roles.

use std::path::Path;

use sds_core::{check_capacity, PointTable, Points, Slot};

use crate::{Error, Options, Role, RoleGuard, SharedTable};

/// A private table: the slots on the heap.
pub type PrivateTable = PointTable<Box<[Slot]>>;

/// A private table or this process's attachment to a shared one.
pub enum AnyTable {
    /// This process's own table.
    Private(PrivateTable),
    /// A table file shared with other processes.
    Shared(SharedTable),
}

/// A host-wide role held for this process until it drops. On a private table
/// the process is the whole "host" and holds every role without a lock.
#[derive(Debug)]
pub struct RoleHold {
    _guard: Option<RoleGuard>,
}

impl AnyTable {
    /// A fresh private table of `capacity` slots.
    pub fn private(capacity: usize) -> Result<AnyTable, Error> {
        check_capacity(capacity).map_err(|_| Error::InvalidCapacity { capacity })?;
        let slots: Box<[Slot]> = (0..capacity).map(|_| Slot::new()).collect();
        let table = PointTable::new(slots).map_err(|source| Error::Core {
            path: Path::new("").into(),
            source,
        })?;
        Ok(AnyTable::Private(table))
    }

    /// Opens (or creates) the shared table file at `path`.
    pub fn shared(
        path: impl AsRef<Path>,
        capacity: usize,
        options: &Options,
    ) -> Result<AnyTable, Error> {
        SharedTable::open(path, capacity, options).map(AnyTable::Shared)
    }

    /// Runs `work` on this process's view of the table. Only a fork child's
    /// first view of a shared table can fail (it registers first).
    pub fn with_points<R>(&self, work: impl FnOnce(&dyn Points) -> R) -> Result<R, Error> {
        match self {
            AnyTable::Private(table) => Ok(work(table)),
            AnyTable::Shared(shared) => Ok(work(&*shared.view()?)),
        }
    }

    /// Takes `role` for this process when no other holds it (see
    /// [`SharedFile::try_take_role`](crate::SharedFile::try_take_role));
    /// always on a private table.
    pub fn try_take_role(&self, role: Role) -> Result<Option<RoleHold>, Error> {
        match self {
            AnyTable::Private(_) => Ok(Some(RoleHold { _guard: None })),
            AnyTable::Shared(shared) => {
                Ok(shared.file().try_take_role(role)?.map(|guard| RoleHold {
                    _guard: Some(guard),
                }))
            }
        }
    }

    /// The table's capacity.
    pub fn capacity(&self) -> usize {
        match self {
            AnyTable::Private(table) => table.capacity(),
            AnyTable::Shared(shared) => shared.capacity(),
        }
    }

    /// The shared table's file path; `None` for a private table.
    pub fn path(&self) -> Option<&Path> {
        match self {
            AnyTable::Private(_) => None,
            AnyTable::Shared(shared) => Some(shared.path()),
        }
    }
}
