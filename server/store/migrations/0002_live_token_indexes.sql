-- 0002_live_token_indexes: index only the live (unrevoked) credentials of an
-- attempt, a discussion claim or a runner.
--
-- Every replay of a claim revokes the earlier credentials with
-- "UPDATE tokens SET revoked_at = ? WHERE attempt = ? AND revoked_at IS NULL"
-- (and the same by discussion; RevokeRunner by runner). The indexes of 0001
-- held revoked tokens too, so each replay walked every credential ever minted
-- for the attempt: a replay got slower with every earlier replay. A partial
-- index on revoked_at IS NULL holds at most the one live credential per
-- attempt or discussion claim (a revoked token leaves the index when it is
-- revoked), and every query that reaches tokens by attempt, discussion or
-- runner filters on revoked_at IS NULL, so SQLite's planner uses it
-- ("attempt = ?" implies "attempt IS NOT NULL").

DROP INDEX tokens_attempt;
DROP INDEX tokens_discussion;
DROP INDEX tokens_runner;
CREATE INDEX tokens_attempt_live ON tokens(attempt) WHERE attempt IS NOT NULL AND revoked_at IS NULL;
CREATE INDEX tokens_discussion_live ON tokens(discussion) WHERE discussion IS NOT NULL AND revoked_at IS NULL;
CREATE INDEX tokens_runner_live ON tokens(runner) WHERE runner IS NOT NULL AND revoked_at IS NULL;
