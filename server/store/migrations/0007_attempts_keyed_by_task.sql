-- 0007_attempts_keyed_by_task: one index fewer for every attempt written.
--
-- An attempt's key was UNIQUE (runner, task, idempotency_key), with an
-- index on task beside it for the claim's checks of the task's other
-- attempts: a new attempt wrote five b-trees (the table, its id, the key,
-- task and the credential). With the key's columns in the order (task,
-- runner, idempotency_key) its index serves the lookups by task too, and
-- attempts_task goes. SQLite cannot reorder a table's constraint, so the
-- table is rebuilt: made anew, filled, the old one dropped and the new
-- one renamed into its place. tokens.attempt REFERENCES attempts(id) by
-- name, and no token has held an attempt since 0006, so the drop deletes
-- nothing that a token needs; with foreign keys on, the drop checks each
-- attempt's tokens, which a temporary index makes a lookup, not a scan.

CREATE TABLE attempts_new (
    id              TEXT PRIMARY KEY,
    task            TEXT NOT NULL REFERENCES tasks(id),
    runner          TEXT NOT NULL REFERENCES runners(id),
    idempotency_key TEXT NOT NULL,
    cause_message   TEXT REFERENCES messages(id),
    claimed_at      INTEGER NOT NULL,
    live_until      INTEGER NOT NULL,
    superseded_at   INTEGER,
    credential      BLOB,
    allowed_tools   TEXT,
    UNIQUE (task, runner, idempotency_key)
);
INSERT INTO attempts_new(id, task, runner, idempotency_key, cause_message, claimed_at, live_until,
    superseded_at, credential, allowed_tools)
SELECT id, task, runner, idempotency_key, cause_message, claimed_at, live_until,
    superseded_at, credential, allowed_tools FROM attempts;
CREATE INDEX tokens_attempt_0007 ON tokens(attempt);
DROP TABLE attempts;
DROP INDEX tokens_attempt_0007;
ALTER TABLE attempts_new RENAME TO attempts;
CREATE UNIQUE INDEX attempts_credential ON attempts(credential) WHERE credential IS NOT NULL;
