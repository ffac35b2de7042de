// Package store is the state layer of prickled, the reference Prickle
// server: persistence (embedded SQLite, pure Go, the default; or
// PostgreSQL, which any number of prickled replicas share) and every domain rule of
// the documented tools, independent of MCP: it never serves a call itself
// and does not use the go-sdk. The MCP layer authenticates a bearer token
// with Authenticate, calls one operation with the Principal, and turns a
// *Refusal into an isError tool result carrying Refusal.Code (never into
// structuredContent).
//
// The data has two shapes, each with its one Go form: a world comes in as
// package world's types (spec/world, the format servers load), and the
// tools' answers go out as the generated api package's output types,
// which marshal exactly as the output schemas require (nullable fields as
// null, empty lists as []). DiscoverTeamAgents answers an
// api.DiscoverTeamAgentsOutput, a claim's attempt is an
// api.ClaimTaskOutputAttempt and its quoted draft an
// api.ClaimDiscussionOutputReviewing, and PostDiscussionReply returns the
// reply as a world.Message. The store's own result types are only the
// claims' (ClaimTaskResult, ClaimDiscussionResult): what the store minted
// (the Credential, with the allowed tools as Options gives them) and
// whether the key was replayed, which the MCP layer turns into the output.
// It imports package api for its types alone.
//
// The decisions these operations implement (the launch timeout, the
// harness roles, replies_left, what each refusal code means, and every
// other question the pages leave open) are written once, in
// server/README.md; each operation's doc comment says what it does. Which
// tools a caller may call at all is the MCP layer's policy (server's
// policy.go): the store keeps the allowed tools a credential was minted
// with (Options.ExecutionTools, Options.DiscussionTools).
//
// # Storage
//
//   - One store, two databases: the SQL is written once, in SQLite's
//     dialect, and rebound for PostgreSQL (engine.go); what differs is
//     how writes take turns (SQLite: the writer's group commit below;
//     PostgreSQL: a transaction each, with row locks: postgres.go) and
//     the migrations (migrations/ and migrations/postgres/, versioned
//     alike). Every test of the package runs on both (eachDB); the few
//     that test what one database alone has are listed in server/README.md.
//   - SQLite through modernc.org/sqlite (driver "sqlite"). Files use WAL,
//     synchronous=NORMAL, a 10 s busy timeout and foreign keys; ":memory:"
//     uses a single connection so every caller sees the same database.
//   - Durability: with WAL and synchronous=NORMAL a commit writes the
//     transaction to the WAL file (the OS page cache) before it returns,
//     without an fsync; the WAL is fsynced at checkpoints. So an answered
//     claim survives a crash of the process (SIGKILL; the crash test of
//     cmd/prickled/app), but an OS crash or power loss may lose the transactions
//     committed since the last checkpoint. synchronous=FULL would fsync
//     every commit, at a large cost per claim; the reference server does
//     not pay it.
//   - The hot statements (Authenticate, which runs on every HTTP request,
//     and the queries of the three tools) are prepared once when the store
//     opens (stmts.go) and reused on every pooled connection; compiling a
//     statement costs about as much as running it.
//   - Each attempt and discussion claim holds its one live credential on
//     its own row (migration 0006): its hash (unique index, by which it
//     authenticates), its allowed tools, and live_until, its expiry. A
//     replay is one lookup and one update of the claim's row, a page and
//     the credential index written, however many replays came before;
//     the credential it replaces is gone (unknown, not kept revoked), so
//     credentials never accumulate. The tokens table holds agent and
//     runner tokens only. A retired runner's credentials fail through its
//     runner row. An attempt's key is UNIQUE (task, runner,
//     idempotency_key) (migration 0007), whose index also serves the
//     claim's look at the task's other attempts: a new attempt writes
//     four b-trees (the row, its id, its key, its credential), each a WAL
//     frame.
//   - The database file is created mode 0600 (it holds the hash of every
//     token); SQLite gives its -wal and -shm files the same mode.
//   - Arguments are not checked here for what the tools' input schemas
//     say (lengths, patterns): the MCP layer validates them first, and a
//     second rule in the store would drift from the schema's.
//   - Read caches (cache.go): agent and runner principals by token hash
//     (Authenticate runs on every HTTP request; SQLite only: PostgreSQL's
//     replicas read every token, so that a revocation on one is seen on
//     all at once), and each project's team directory and each person's
//     memberships (discover_team_agents, whose refusals the memberships
//     alone decide, so that a project the caller may not see and one
//     that does not exist cost the same). Changes through the Store
//     (RevokeToken, RevokeRunner, loading a world) take effect at once;
//     on SQLite a change made behind the Store's back (SQL on the same
//     file, another process) is seen within a second; on PostgreSQL the
//     other stores are notified. Credentials are never cached.
//   - Writing transactions begin IMMEDIATE, on one connection of the
//     writer's own (writer.go; readers have a pool). The writes that wait
//     for the writer share a transaction (group commit): each runs in a
//     SAVEPOINT of it, released when it succeeds and rolled back alone
//     when it fails or is refused, and one COMMIT makes the batch durable
//     before any of its writes is answered; if the COMMIT fails, every
//     write of the batch fails. Writers wait in a bounded queue in Go, not
//     in SQLite's busy handler (whose sleeps grow to 100 ms); a write
//     whose context ends before it starts is dropped, one that has
//     started runs to completion; a panic in one rolls back its own
//     savepoint and reaches its caller.
//     Uniqueness is still the database's (UNIQUE constraints), not the
//     queue's.
//   - Versioned migrations: embedded migrations/NNNN_name.sql (and
//     migrations/postgres/NNNN_name.sql), applied in order, each in its
//     own transaction, recorded in schema_migrations; reopening applies
//     nothing; a database newer than the build is refused.
//   - Times are stored as unix nanoseconds, returned in UTC at millisecond
//     precision from the injected clock (Options.Now).
//
// # Refusals
//
//   - A *Refusal{Code, Message}: Code a stable snake_case constant (the
//     Code* constants), Message a lowercase human sentence without secrets.
//     errors.Is(err, &Refusal{Code: c}) matches by code. Infrastructure
//     failures are ordinary wrapped errors ("store: ...: %w").
//
// # Worlds
//
//   - SeedDefault seeds the documented world (see its doc) into an empty
//     database only; LoadWorld adds a JSON world (package world:
//     spec/world/FIXTURE.md, checked against its schema) all or nothing,
//     naming the JSON path and the place of a bad entry in a *world.Error.
//     A world whose bytes were loaded before is not loaded again
//     (ErrLoaded), and stores that load at once take turns: replicas
//     started together on one database load their world once.
package store
