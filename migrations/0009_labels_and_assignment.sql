-- board schema, version 9: labels and assignment.
-- tasks.labels: the task's labels joined by commas ("" for none); a label is 1 to 64 printable
--   characters with no comma and no whitespace, so a comma always separates two labels.
-- tasks.meant_for: the agent name or role the task is for (NULL: any agent); claim-next gives
--   it only to a live agent session with that name or role, and a claim by id of anyone else is
--   refused naming it.
-- sessions.role: the role the agent session was started with (`board run --role`, `[[agents]]
--   role`), NULL for none.
ALTER TABLE tasks ADD COLUMN labels TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN meant_for TEXT;
ALTER TABLE sessions ADD COLUMN role TEXT;
