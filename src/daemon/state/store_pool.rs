//! The board's stores, one connection each: a single one for the embedded SQLite file (its one
//! writer, ARCHITECTURE.md rule 11), a few for a shared PostgreSQL store (`[store] connections`), so
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::mpsc;
    use std::sync::Arc;
    use std::time::Duration;

    use super::StorePool;
    use crate::store::{SqliteStore, Store};

    fn pool_of(n: usize, dir: &std::path::Path) -> StorePool {
        let stores: Vec<Box<dyn Store>> = (0..n)
            .map(|i| {
                Box::new(SqliteStore::open(&dir.join(format!("{i}.db"))).unwrap()) as Box<dyn Store>
            })
            .collect();
        StorePool::new(stores)
    }

    #[test]
    fn a_caller_waits_while_every_store_is_in_use_and_gets_the_one_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Arc::new(pool_of(1, dir.path()));
        let held = pool.get();
        let (tx, rx) = mpsc::channel();
        let p = Arc::clone(&pool);
        let waiter = std::thread::spawn(move || {
            let s = p.get();
            tx.send(s.unfinished_count().unwrap()).unwrap();
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "the only store is in use: the second caller waits"
        );
        drop(held);
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 0);
        waiter.join().unwrap();
    }
}
