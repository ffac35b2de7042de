-- 0001_init: the world model, claims and tokens of the reference server.
-- Times are INTEGER unix nanoseconds (UTC). JSON columns hold JSON arrays.

CREATE TABLE projects (
    slug       TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE people (
    handle       TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    avatar_url   TEXT,
    color        INTEGER NOT NULL CHECK (color BETWEEN 0 AND 7),
    away         INTEGER NOT NULL DEFAULT 0 CHECK (away IN (0, 1))
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
    last_seen_at INTEGER,
    UNIQUE (owner, name),
    CHECK (id = owner || '/' || name)
);

CREATE TABLE runners (
    id         TEXT PRIMARY KEY,
    agent      TEXT NOT NULL REFERENCES agents(id),
    name       TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
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

CREATE TABLE messages (
    id                TEXT PRIMARY KEY,
    room              TEXT NOT NULL REFERENCES rooms(id),
    kind              TEXT NOT NULL CHECK (kind IN ('task_request', 'mention', 'room_message')),
    author_person     TEXT REFERENCES people(handle),
    author_agent      TEXT REFERENCES agents(id),
    body              TEXT NOT NULL,
    provenance        TEXT NOT NULL CHECK (provenance IN ('agent_generated', 'from_approved_context', 'owner_approved', 'owner_instruction')),
    provenance_status TEXT NOT NULL CHECK (provenance_status IN ('claimed', 'attested')),
    reply_turn        TEXT REFERENCES turns(message),
    reply_role        TEXT CHECK (reply_role IN ('draft', 'review', 'revise', 'combine')),
    created_at        INTEGER NOT NULL,
    CHECK ((author_person IS NULL) <> (author_agent IS NULL))
);
CREATE INDEX messages_room ON messages(room);
CREATE INDEX messages_reply_turn ON messages(reply_turn);

CREATE TABLE turns (
    message     TEXT PRIMARY KEY REFERENCES messages(id),
    state       TEXT NOT NULL CHECK (state IN ('waiting', 'ended', 'stopped', 'timed_out', 'replaced')),
    reply_limit INTEGER NOT NULL DEFAULT 8 CHECK (reply_limit BETWEEN 0 AND 8),
    expires_at  INTEGER,
    created_at  INTEGER NOT NULL
);

CREATE TABLE turn_agents (
    turn            TEXT NOT NULL REFERENCES turns(message),
    agent           TEXT NOT NULL REFERENCES agents(id),
    wake_order      INTEGER NOT NULL,
    reply_posted_at INTEGER,
    PRIMARY KEY (turn, agent),
    UNIQUE (turn, wake_order)
);

CREATE TABLE tasks (
    id              TEXT PRIMARY KEY,
    project         TEXT NOT NULL REFERENCES projects(slug),
    agent           TEXT NOT NULL REFERENCES agents(id),
    title           TEXT NOT NULL DEFAULT '',
    request_message TEXT REFERENCES messages(id),
    created_at      INTEGER NOT NULL
);

-- One row per claimed run. The UNIQUE constraint is what makes claim_task
-- idempotent: a second insert with the same (runner, task, key) fails and the
-- claim replays the existing row.
CREATE TABLE attempts (
    id              TEXT PRIMARY KEY,
    task            TEXT NOT NULL REFERENCES tasks(id),
    runner          TEXT NOT NULL REFERENCES runners(id),
    idempotency_key TEXT NOT NULL,
    cause_message   TEXT REFERENCES messages(id),
    claimed_at      INTEGER NOT NULL,
    live_until      INTEGER NOT NULL,
    superseded_at   INTEGER,
    UNIQUE (runner, task, idempotency_key)
);
CREATE INDEX attempts_task ON attempts(task);

-- One row per claimed discussion session; same idempotency rule as attempts.
CREATE TABLE discussion_claims (
    id                TEXT PRIMARY KEY,
    message           TEXT NOT NULL REFERENCES turns(message),
    runner            TEXT NOT NULL REFERENCES runners(id),
    agent             TEXT NOT NULL REFERENCES agents(id),
    idempotency_key   TEXT NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('draft', 'review', 'revise', 'combine')),
    lead              INTEGER NOT NULL CHECK (lead IN (0, 1)),
    reviewing_message TEXT REFERENCES messages(id),
    claimed_at        INTEGER NOT NULL,
    live_until        INTEGER NOT NULL,
    superseded_at     INTEGER,
    reply_message     TEXT REFERENCES messages(id),
    replied_at        INTEGER,
    UNIQUE (runner, message, idempotency_key)
);
CREATE INDEX discussion_claims_turn_agent ON discussion_claims(message, agent);

-- Bearer tokens, stored only as SHA-256 hashes of the plaintext.
CREATE TABLE tokens (
    hash          BLOB PRIMARY KEY CHECK (length(hash) = 32),
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
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER,
    revoked_at    INTEGER
) WITHOUT ROWID;
CREATE INDEX tokens_attempt ON tokens(attempt) WHERE attempt IS NOT NULL;
CREATE INDEX tokens_discussion ON tokens(discussion) WHERE discussion IS NOT NULL;
CREATE INDEX tokens_runner ON tokens(runner) WHERE runner IS NOT NULL;
