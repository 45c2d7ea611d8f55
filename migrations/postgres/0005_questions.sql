-- A question an agent asked a person (`board wait "…"`), apart from `waiting` (its CLI's
-- permission prompt, which ends when the CLI moves on). A question stays until it is answered
-- (`board answer`), withdrawn (`board resume`) or the session ends.
ALTER TABLE sessions ADD COLUMN question text;
