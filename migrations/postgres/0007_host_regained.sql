-- board schema for the PostgreSQL store, version 7: a host is declared dead only on evidence
-- that it, not the declarer or the store, went silent.
-- hosts.regained_ms: the server's time (board_now_ms) at which this host's board last regained
--   the store: its first beat, or a beat after a gap longer than its heartbeat allows. Until one
--   TTL after that, this board ends no other host: when every board lost the store at once,
--   the first one back must not take the others' silence for their death.
ALTER TABLE hosts ADD COLUMN regained_ms bigint;
