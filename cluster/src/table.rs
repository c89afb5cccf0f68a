//! [`SyncTable`]: what the syncer needs of a table, so that a binding that
//! holds its table some other way than `Arc<AnyTable>` can sync it too.

use sds_core::Points;
use sds_shm::{AnyTable, Role};

use crate::Error;

/// A table the syncer works on from its own thread.
pub trait SyncTable: Send + Sync {
    /// Runs `work` on this process's view of the table.
    fn with_points(&self, work: &mut dyn FnMut(&dyn Points)) -> Result<(), Error>;
    /// Takes the host's syncer role when no other process holds it; the
    /// role is held until the returned guard drops. Always granted on a
    /// private table.
    fn take_syncer_role(&self) -> Result<Option<Box<dyn Send>>, Error>;
}

impl SyncTable for AnyTable {
    fn with_points(&self, work: &mut dyn FnMut(&dyn Points)) -> Result<(), Error> {
        AnyTable::with_points(self, |points| work(points)).map_err(|e| Error::shm(&e))
    }

    fn take_syncer_role(&self) -> Result<Option<Box<dyn Send>>, Error> {
        match self.try_take_role(Role::Syncer) {
            Ok(Some(hold)) => Ok(Some(Box::new(hold))),
            Ok(None) => Ok(None),
            Err(e) => Err(Error::shm(&e)),
        }
    }
}
