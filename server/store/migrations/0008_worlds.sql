-- 0008_worlds: the worlds loaded, by the SHA-256 of their fixture's bytes
-- (the seed's included), so that replicas started with one fixture load
-- it once: a fixture already loaded is not loaded again.

CREATE TABLE worlds (
    digest    BLOB PRIMARY KEY CHECK (length(digest) = 32),
    loaded_at INTEGER NOT NULL
) WITHOUT ROWID;
