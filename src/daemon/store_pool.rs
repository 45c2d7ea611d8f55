//! The board's stores, one connection each: a single one for the embedded SQLite file (its one
//! writer, design rule 11), a few for a shared PostgreSQL store (`[store] connections`), so
//! requests of several agents run side by side instead of queueing behind one connection.

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex};

use crate::store::Store;

/// Stores not in use; [`StorePool::get`] waits for one.
pub struct StorePool {
    free: Mutex<Vec<Box<dyn Store>>>,
    returned: Condvar,
}

impl StorePool {
    /// A pool of `stores` (at least one).
    pub fn new(stores: Vec<Box<dyn Store>>) -> StorePool {
        StorePool {
            free: Mutex::new(stores),
            returned: Condvar::new(),
        }
    }

    /// A store for one call or one handler's transaction, waiting while all are in use. The
    /// most recently returned store comes first, so a quiet board keeps using one warm
    /// connection.
    pub fn get(&self) -> StoreGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(store) = free.pop() {
                return StoreGuard {
                    pool: self,
                    store: Some(store),
                };
            }
            free = self.returned.wait(free).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Runs `f` on every store not in use (at start-up all of them).
    pub fn each(&self, mut f: impl FnMut(&mut dyn Store)) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        for s in free.iter_mut() {
            f(&mut **s);
        }
    }
}

/// One store taken from the [`StorePool`]; back in the pool when dropped.
pub struct StoreGuard<'a> {
    pool: &'a StorePool,
    store: Option<Box<dyn Store>>,
}

impl Deref for StoreGuard<'_> {
    type Target = Box<dyn Store>;

    fn deref(&self) -> &Box<dyn Store> {
        // Present from `get` until `drop`.
        self.store.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl DerefMut for StoreGuard<'_> {
    fn deref_mut(&mut self) -> &mut Box<dyn Store> {
        self.store.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for StoreGuard<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.store.take() {
            self.pool
                .free
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(s);
            self.pool.returned.notify_one();
        }
    }
}
