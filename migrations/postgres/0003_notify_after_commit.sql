-- board schema for the PostgreSQL store, version 3: events no longer notify from inside the
-- transaction that writes them. A transaction that sends NOTIFY holds the server's one
-- notification lock from before its commit until after the commit's flush to disk, so every
-- writing transaction of every host committed one at a time (~600 a second on a 2-core
-- machine with synchronous commit), whatever the pool and the shared write lock allowed. Each
-- board now sends the wake-up hint itself, after its commits (src/daemon/follow.rs); the
-- events table stays the truth.
DROP TRIGGER events_notify ON events;
DROP FUNCTION events_notify();
