-- 0006_credentials_on_claims: an attempt or discussion claim holds its one
-- live credential itself, and nothing else holds a credential.
--
-- Since 0003 a claim points at its live credential (credential, the
-- SHA-256 hash of the token) and, by the triggers of 0004, stays live as
-- long as it (live_until, the credential's expiry). With the credential's
-- allowed tools on the claim too, the claim's row is all there is of the
-- credential: a replay updates that row (the claim page and the
-- credential index) instead of inserting a token row and revoking the
-- earlier one, and a replaced credential is gone rather than kept
-- revoked. Credentials authenticate through the unique indexes below;
-- the tokens table keeps agent and runner tokens only, so its credential
-- columns (attempt, discussion, project, room, message, task,
-- allowed_tools, expires_at) stay empty from now on.

ALTER TABLE attempts ADD COLUMN allowed_tools TEXT;
ALTER TABLE discussion_claims ADD COLUMN allowed_tools TEXT;

-- Keep each claim's credential when it still works (not revoked), with
-- its tools; a revoked one is dropped.
UPDATE attempts SET allowed_tools = (
    SELECT t.allowed_tools FROM tokens t WHERE t.hash = attempts.credential AND t.revoked_at IS NULL)
WHERE credential IS NOT NULL;
UPDATE attempts SET credential = NULL WHERE allowed_tools IS NULL;
UPDATE discussion_claims SET allowed_tools = (
    SELECT t.allowed_tools FROM tokens t WHERE t.hash = discussion_claims.credential AND t.revoked_at IS NULL)
WHERE credential IS NOT NULL;
UPDATE discussion_claims SET credential = NULL WHERE allowed_tools IS NULL;

DROP TRIGGER tokens_attempt_credential;
DROP TRIGGER tokens_discussion_credential;
DELETE FROM tokens WHERE kind IN ('execution_credential', 'discussion_credential');
-- Only credentials expired; nothing is left to purge.
DROP INDEX tokens_expires;

CREATE UNIQUE INDEX attempts_credential ON attempts(credential) WHERE credential IS NOT NULL;
CREATE UNIQUE INDEX discussion_claims_credential ON discussion_claims(credential) WHERE credential IS NOT NULL;
