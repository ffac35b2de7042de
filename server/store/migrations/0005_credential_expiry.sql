-- 0005_credential_expiry: index credentials by expiry, so that
-- PurgeCredentials finds the long-expired ones without reading every token.
--
-- Every credential (execution or discussion) has an expiry, and a revoked
-- one (replaced by a replay, superseded, or its runner retired) expires
-- too, no later than launch timeout after it was minted; so "expired
-- before the retention cut-off" covers the revoked ones. Agent and runner
-- tokens have no expiry and are not in the index. The index is written
-- once, when a credential is inserted; revoking does not touch it.

CREATE INDEX tokens_expires ON tokens(expires_at) WHERE expires_at IS NOT NULL;
