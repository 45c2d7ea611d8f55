-- The git branch an agent session started on (its worktree's, with `worktree = true`).
ALTER TABLE sessions ADD COLUMN branch TEXT;
