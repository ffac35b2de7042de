-- 0003_credential_pointers: each attempt and discussion claim points at its
-- one live credential (the SHA-256 hash of the token, as in tokens.hash).
--
-- A replay mints a fresh credential and revokes the earlier one. With the
-- pointer the earlier one is found by its primary key, and the claim's row
-- is updated once (pointer and live_until together), so a replay writes
-- three pages (the claim, the old token, the new token) instead of also
-- rewriting the partial indexes of 0002 on every replay. Those indexes go:
-- credentials are reached through their claim's pointer, and a retired
-- runner's credentials already fail authentication through its runner row.
-- The runner's own token is indexed by runner for RevokeRunner.

ALTER TABLE attempts ADD COLUMN credential BLOB;
ALTER TABLE discussion_claims ADD COLUMN credential BLOB;

-- Point each claim at its newest live credential...
UPDATE attempts SET credential = (
    SELECT t.hash FROM tokens t WHERE t.attempt = attempts.id AND t.revoked_at IS NULL
    ORDER BY t.created_at DESC, t.hash LIMIT 1);
UPDATE discussion_claims SET credential = (
    SELECT t.hash FROM tokens t WHERE t.discussion = discussion_claims.id AND t.revoked_at IS NULL
    ORDER BY t.created_at DESC, t.hash LIMIT 1);

-- ...and revoke any other that is still live, so that the pointer names
-- the only live credential of its claim (the invariant the claims keep).
UPDATE tokens SET revoked_at = created_at
WHERE revoked_at IS NULL AND attempt IS NOT NULL
  AND hash IS NOT (SELECT a.credential FROM attempts a WHERE a.id = tokens.attempt);
UPDATE tokens SET revoked_at = created_at
WHERE revoked_at IS NULL AND discussion IS NOT NULL
  AND hash IS NOT (SELECT d.credential FROM discussion_claims d WHERE d.id = tokens.discussion);

DROP INDEX tokens_attempt_live;
DROP INDEX tokens_discussion_live;
DROP INDEX tokens_runner_live;
CREATE INDEX tokens_runner_token ON tokens(runner) WHERE kind = 'runner';
