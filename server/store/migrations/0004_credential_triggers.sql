-- 0004_credential_triggers: inserting a claim's credential makes it the
-- claim's one live credential, in the database itself.
--
-- Until now the claim code did this in three statements (revoke the
-- credential the claim points at, point the claim at the new one and
-- extend it, insert the new token). The triggers do the first two as part
-- of the insert: one statement from Go instead of three, and the invariant
-- of 0003 (a claim points at its only live credential, and stays live as
-- long as it) holds for every insert, whichever code path makes it.

CREATE TRIGGER tokens_attempt_credential AFTER INSERT ON tokens
WHEN NEW.attempt IS NOT NULL
BEGIN
    UPDATE tokens SET revoked_at = NEW.created_at
    WHERE hash = (SELECT credential FROM attempts WHERE id = NEW.attempt)
      AND hash <> NEW.hash AND revoked_at IS NULL;
    UPDATE attempts SET credential = NEW.hash, live_until = NEW.expires_at WHERE id = NEW.attempt;
END;

CREATE TRIGGER tokens_discussion_credential AFTER INSERT ON tokens
WHEN NEW.discussion IS NOT NULL
BEGIN
    UPDATE tokens SET revoked_at = NEW.created_at
    WHERE hash = (SELECT credential FROM discussion_claims WHERE id = NEW.discussion)
      AND hash <> NEW.hash AND revoked_at IS NULL;
    UPDATE discussion_claims SET credential = NEW.hash, live_until = NEW.expires_at WHERE id = NEW.discussion;
END;
