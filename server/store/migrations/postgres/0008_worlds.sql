-- 0008_worlds: the worlds loaded, by the SHA-256 of their fixture's bytes
-- (the seed's included), so that replicas started with one fixture load
-- it once: a fixture already loaded is not loaded again.

CREATE TABLE worlds (
    digest    BYTEA PRIMARY KEY CHECK (octet_length(digest) = 32),
    loaded_at BIGINT NOT NULL
);
