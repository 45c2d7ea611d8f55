-- board schema, version 3: an agent is told every claim it lost.
-- `told` is 0 while a claim that ended without its holder asking (lapse, expel, force-release,
-- cancel, new epoch) has not been reported to that holder yet; the holder's own `done` and
-- `release`, and a refusal that names the claim, set it to 1. Claims that ended before this
-- version are taken as told.
ALTER TABLE claims ADD COLUMN told INTEGER NOT NULL DEFAULT 0;
UPDATE claims SET told = 1 WHERE ended_at IS NOT NULL;
CREATE INDEX claims_untold ON claims (session_id) WHERE told = 0 AND ended_at IS NOT NULL;
