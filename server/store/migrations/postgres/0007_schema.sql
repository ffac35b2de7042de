-- 0007_schema: the schema of version 7 (SQLite's migrations 0001 to
-- 0007), the version at which PostgreSQL came; every later version is a
-- migration of its own for each database.
--
-- The same tables, columns, constraints and indexes as SQLite's, in
-- PostgreSQL's types: times are BIGINT unix nanoseconds (UTC), hashes
-- BYTEA, flags BOOLEAN (SQLite keeps 0 and 1; both read as Go bools).
-- messages.rowid is SQLite's implicit rowid made explicit: the order of
-- insertion, which breaks ties of created_at. The tokens table keeps the
-- credential columns that SQLite's still has, empty since 0006.

CREATE TABLE projects (
    slug       TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE people (
    handle       TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    avatar_url   TEXT,
    color        INTEGER NOT NULL CHECK (color BETWEEN 0 AND 7),
    away         BOOLEAN NOT NULL DEFAULT false
);

CREATE TABLE memberships (
    project TEXT NOT NULL REFERENCES projects(slug),
    person  TEXT NOT NULL REFERENCES people(handle),
    PRIMARY KEY (project, person)
);
CREATE INDEX memberships_person ON memberships(person);

CREATE TABLE agents (
    id           TEXT PRIMARY KEY, -- owner/name
    owner        TEXT NOT NULL REFERENCES people(handle),
    name         TEXT NOT NULL,
    avatar_url   TEXT,
    model        TEXT NOT NULL,
    client       TEXT NOT NULL,
    role         TEXT NOT NULL DEFAULT '',
    capabilities TEXT NOT NULL DEFAULT '[]',
    availability TEXT NOT NULL CHECK (availability IN ('online', 'working', 'idle', 'asleep', 'away', 'offline')),
    trust_level  TEXT NOT NULL CHECK (trust_level IN ('owner_verified', 'unverified')),
    last_seen_at BIGINT,
    UNIQUE (owner, name),
    CHECK (id = owner || '/' || name)
);

CREATE TABLE runners (
    id         TEXT PRIMARY KEY,
    agent      TEXT NOT NULL REFERENCES agents(id),
    name       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX runners_agent ON runners(agent);

CREATE TABLE rooms (
    id      TEXT PRIMARY KEY,
    project TEXT NOT NULL REFERENCES projects(slug),
    kind    TEXT NOT NULL CHECK (kind IN ('general', 'private')),
    owner   TEXT REFERENCES people(handle),
    name    TEXT NOT NULL DEFAULT '',
    CHECK ((kind = 'private') = (owner IS NOT NULL))
);
CREATE UNIQUE INDEX rooms_one_general ON rooms(project) WHERE kind = 'general';

-- messages and turns refer to each other: reply_turn's key is added once
-- turns exists.
CREATE TABLE messages (
    id                TEXT PRIMARY KEY,
    room              TEXT NOT NULL REFERENCES rooms(id),
    kind              TEXT NOT NULL CHECK (kind IN ('task_request', 'mention', 'room_message')),
    author_person     TEXT REFERENCES people(handle),
    author_agent      TEXT REFERENCES agents(id),
    body              TEXT NOT NULL,
    provenance        TEXT NOT NULL CHECK (provenance IN ('agent_generated', 'from_approved_context', 'owner_approved', 'owner_instruction')),
    provenance_status TEXT NOT NULL CHECK (provenance_status IN ('claimed', 'attested')),
    reply_turn        TEXT,
    reply_role        TEXT CHECK (reply_role IN ('draft', 'review', 'revise', 'combine')),
    created_at        BIGINT NOT NULL,
    rowid             BIGINT GENERATED ALWAYS AS IDENTITY,
    CHECK ((author_person IS NULL) <> (author_agent IS NULL))
);
CREATE INDEX messages_room ON messages(room);
CREATE INDEX messages_reply_turn ON messages(reply_turn);

CREATE TABLE turns (
    message     TEXT PRIMARY KEY REFERENCES messages(id),
    state       TEXT NOT NULL CHECK (state IN ('waiting', 'ended', 'stopped', 'timed_out', 'replaced')),
    reply_limit INTEGER NOT NULL DEFAULT 8 CHECK (reply_limit BETWEEN 0 AND 8),
    expires_at  BIGINT,
    created_at  BIGINT NOT NULL
);
ALTER TABLE messages ADD FOREIGN KEY (reply_turn) REFERENCES turns(message);

CREATE TABLE turn_agents (
    turn            TEXT NOT NULL REFERENCES turns(message),
    agent           TEXT NOT NULL REFERENCES agents(id),
    wake_order      INTEGER NOT NULL,
    reply_posted_at BIGINT,
    PRIMARY KEY (turn, agent),
    UNIQUE (turn, wake_order)
);

CREATE TABLE tasks (
    id              TEXT PRIMARY KEY,
    project         TEXT NOT NULL REFERENCES projects(slug),
    agent           TEXT NOT NULL REFERENCES agents(id),
    title           TEXT NOT NULL DEFAULT '',
    request_message TEXT REFERENCES messages(id),
    created_at      BIGINT NOT NULL
);

-- The key's UNIQUE constraint makes claim_task idempotent; its index
-- serves the claim's lookups by task too.
CREATE TABLE attempts (
    id              TEXT PRIMARY KEY,
    task            TEXT NOT NULL REFERENCES tasks(id),
    runner          TEXT NOT NULL REFERENCES runners(id),
    idempotency_key TEXT NOT NULL,
    cause_message   TEXT REFERENCES messages(id),
    claimed_at      BIGINT NOT NULL,
    live_until      BIGINT NOT NULL,
    superseded_at   BIGINT,
    credential      BYTEA,
    allowed_tools   TEXT,
    UNIQUE (task, runner, idempotency_key)
);
CREATE UNIQUE INDEX attempts_credential ON attempts(credential) WHERE credential IS NOT NULL;

CREATE TABLE discussion_claims (
    id                TEXT PRIMARY KEY,
    message           TEXT NOT NULL REFERENCES turns(message),
    runner            TEXT NOT NULL REFERENCES runners(id),
    agent             TEXT NOT NULL REFERENCES agents(id),
    idempotency_key   TEXT NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('draft', 'review', 'revise', 'combine')),
    lead              BOOLEAN NOT NULL,
    reviewing_message TEXT REFERENCES messages(id),
    claimed_at        BIGINT NOT NULL,
    live_until        BIGINT NOT NULL,
    superseded_at     BIGINT,
    reply_message     TEXT REFERENCES messages(id),
    replied_at        BIGINT,
    credential        BYTEA,
    allowed_tools     TEXT,
    UNIQUE (runner, message, idempotency_key)
);
CREATE INDEX discussion_claims_turn_agent ON discussion_claims(message, agent);
CREATE UNIQUE INDEX discussion_claims_credential ON discussion_claims(credential) WHERE credential IS NOT NULL;

-- Agent and runner tokens, stored only as SHA-256 hashes of the plaintext.
CREATE TABLE tokens (
    hash          BYTEA PRIMARY KEY CHECK (octet_length(hash) = 32),
    kind          TEXT NOT NULL CHECK (kind IN ('agent', 'runner', 'execution_credential', 'discussion_credential')),
    agent         TEXT NOT NULL REFERENCES agents(id),
    runner        TEXT REFERENCES runners(id),
    attempt       TEXT REFERENCES attempts(id),
    discussion    TEXT REFERENCES discussion_claims(id),
    project       TEXT REFERENCES projects(slug),
    room          TEXT REFERENCES rooms(id),
    message       TEXT REFERENCES messages(id),
    task          TEXT REFERENCES tasks(id),
    allowed_tools TEXT,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,
    revoked_at    BIGINT
);
CREATE INDEX tokens_runner_token ON tokens(runner) WHERE kind = 'runner';
