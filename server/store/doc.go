// Package store is the state layer of prickled, the reference Prickle
// server: persistence (embedded SQLite, pure Go) and every domain rule of
// the three documented tools (claim_task, claim_discussion,
// discover_team_agents), independent of MCP. The MCP layer authenticates a
// bearer token with Authenticate, calls one operation with the Principal,
// and turns a *Refusal into an isError tool result carrying Refusal.Code
// (never into structuredContent). Result types marshal to JSON exactly as
// the tools' output schemas require (nullable fields as null, empty lists
// as []).
//
// # Design decisions
//
// These answer the open questions of shared/notes/domain.md; the
// conformance suite checks only what the pages say, a "reference profile"
// may check these.
//
// Storage.
//   - SQLite through modernc.org/sqlite (driver "sqlite"). Files use WAL,
//     synchronous=NORMAL, a 10 s busy timeout and foreign keys; ":memory:"
//     uses a single connection so every caller sees the same database.
//   - Durability: with WAL and synchronous=NORMAL a commit writes the
//     transaction to the WAL file (the OS page cache) before it returns,
//     without an fsync; the WAL is fsynced at checkpoints. So an answered
//     claim survives a crash of the process (SIGKILL; cmd/prickled's crash
//     test), but an OS crash or power loss may lose the transactions
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
//     runner row.
//   - The database file is created mode 0600 (it holds the hash of every
//     token); SQLite gives its -wal and -shm files the same mode.
//   - Arguments are not checked here for what the tools' input schemas
//     say (lengths, patterns): the MCP layer validates them first, and a
//     second rule in the store would drift from the schema's.
//   - Two read caches (cache.go): agent and runner principals by token
//     hash (Authenticate runs on every HTTP request) and each project's
//     team directory (discover_team_agents). Changes through the Store
//     (RevokeToken, RevokeRunner, loading a world) take effect at once; a
//     change made behind the Store's back (SQL on the same file) is seen
//     within a second. Credentials are never cached.
//   - Writing transactions begin IMMEDIATE, so claims serialise on the
//     write lock instead of failing on a lock upgrade. Each claim is one
//     transaction, answered once its COMMIT has returned. Every write
//     goes through the writer (writer.go), on one connection of its own
//     (readers have a pool): writers queue on a mutex in Go and start as
//     soon as the previous one commits, instead of polling SQLite's busy
//     handler, whose sleeps grow to 100 ms. The writer holds its
//     connection with BEGIN, COMMIT and ROLLBACK prepared; a transaction
//     runs to completion whatever becomes of its caller's context; a
//     panic in one rolls it back.
//     Uniqueness is still the database's (UNIQUE constraints), not the
//     queue's.
//   - Versioned migrations: embedded migrations/NNNN_name.sql, applied in
//     order, each in its own transaction, recorded in schema_migrations;
//     reopening applies nothing; a database newer than the build is refused.
//   - Times are stored as unix nanoseconds, returned in UTC at millisecond
//     precision from the injected clock (Options.Now).
//
// Tokens.
//   - Four kinds: agent, runner, execution_credential,
//     discussion_credential. Every token is "prk_" + base64url of 32 random
//     bytes (256 bits) from crypto/rand, shown once, stored only as its
//     SHA-256 hash, looked up by hash and compared with
//     crypto/subtle.ConstantTimeCompare. Credential and IssuedToken redact
//     the token when logged through log/slog.
//   - Agent and runner tokens are issued by SeedDefault, LoadFixture (a
//     fixture may give them in plaintext), IssueAgentToken and PairRunner;
//     they do not expire. A runner is paired to exactly one agent when it is
//     created (PairRunner or a fixture) and never re-paired. RevokeToken
//     revokes one token; RevokeRunner retires a runner together with every
//     credential it minted.
//   - Authenticate fails with ErrUnknownToken, ErrExpiredToken or
//     ErrRevokedToken (match with errors.Is).
//
// Who may call what (Allowed).
//   - Agent tokens: every catalog tool except claim_task and
//     claim_discussion (not_runner).
//   - Runner tokens: claim_task, claim_discussion, and discover_team_agents
//     on behalf of their agent; nothing else (tool_not_allowed).
//   - Credentials: only their allowed_tools (tool_not_allowed), and never
//     the claims (not_runner).
//   - Execution credential allowed_tools: discover_team_agents,
//     get_project_context, read_room, post_message, wait_for_mention,
//     handoff, check_inbox, checkpoint, return_result, update_pulse,
//     request_capability, wait_for_updates, request_step (ExecutionTools):
//     not the claims, not accept_task, accept_result or reject_result.
//   - Discussion credential allowed_tools: read_room and post_message
//     (DiscussionTools); so it may not call discover_team_agents.
//
// discover_team_agents.
//   - Visible projects are those the caller's agent's owner is a member of;
//     a credential scoped to a project sees only that project. A missing
//     project and an invisible one give the identical refusal
//     project_not_visible "the project does not exist or you cannot see it".
//   - People are the project's members (by handle); agents are the agents
//     owned by members (by agent id).
//
// claim_task.
//   - The launch timeout is Options.LaunchTimeout, default 15 minutes
//     (DefaultLaunchTimeout). An execution credential expires launch
//     timeout after the claim or replay that minted it.
//   - Tasks in projects the owner cannot see are task_not_found, like
//     missing ones; tasks routed to another agent are not_routed.
//   - Cause: a wake naming a mention is mention_not_cause; any other wake
//     that is not the task's own request is cause_mismatch. A task without
//     a request message (e.g. a handoff) takes no wake at all.
//   - Same (runner, task, idempotency key): the same attempt (same id and
//     claimed_at) and a fresh credential; every earlier credential of the
//     attempt is revoked, only the newest works.
//   - A different key while an attempt is live (its newest credential has
//     not expired) is refused with attempt_in_progress. After it expires a
//     new key creates a new attempt, supersedes the old one (its
//     credentials are revoked) and replaying the old key is then
//     attempt_superseded.
//   - Idempotency is the UNIQUE (runner, task, idempotency_key) constraint
//     of the attempts table: ClaimTask inserts first, and a unique
//     violation re-reads and replays the existing row (a refusal after a
//     successful insert rolls the transaction back). Keys are scoped to
//     runner and task. No Go mutex is involved.
//
// claim_discussion.
//   - Runner only. harness missing or below 2: harness_outdated ("update
//     prickle-runner"); above 2: harness_unsupported. Checked before the
//     message is looked at. (The page's example input has no harness and
//     is therefore refused by design; with "harness": 2 it works.)
//   - A message missing or in a project the owner is not a member of is
//     message_not_found; one elsewhere (general room, another owner's
//     private room) is not_your_room; one whose turn did not wake the agent
//     is not_woken.
//   - Harness 2 roles. The agents a message woke are ordered by wake order;
//     the first is the lead (lead=true), the others are reviewers. The
//     lead's first session is draft. Each reviewer's session, once the
//     lead's draft is posted, is review (earlier: draft_pending). The
//     lead's second session, once every reviewer has posted, is revise when
//     there was one reviewer and combine when there were two or more
//     (earlier: reviews_pending). A lone agent only drafts. reviewing
//     quotes the lead's draft for review and revise, and is null for draft
//     and combine (combine reads the reviews from the room).
//   - An agent's part in a turn is done once its last reply is posted (a
//     lone lead's draft, a review, a revise or a combine); the turn then no
//     longer waits on it (new keys: reply_posted), and when it waits on
//     nobody it ends.
//   - replies_left = the turn's reply limit (default 8, the schema maximum;
//     a fixture may set 0-8) minus the replies posted in the turn, counted
//     when the claim is made, and includes the one this session may post.
//     A claim when it is 0 is no_replies_left.
//   - Each claim is one session allowed one reply. The same (runner,
//     message, idempotency key) replays the same role, lead and reviewing
//     with a fresh credential (earlier ones revoked) until that claim's
//     reply is posted, then reply_posted. A different key while the agent
//     has a live unreplied claim in the turn is discussion_in_progress;
//     after it expires the new key supersedes it (claim_superseded).
//     Uniqueness is the UNIQUE (runner, message, idempotency_key)
//     constraint of discussion_claims; a violation on insert replays.
//   - A turn that no longer waits is refused with turn_ended, turn_stopped,
//     turn_timed_out (state timed_out, or a turn deadline passed on the
//     injected clock) or turn_replaced. A replay whose reply was posted is
//     reply_posted even if the turn has since ended.
//   - The discussion credential lasts 10 minutes (Options.DiscussionTTL,
//     fixed by the docs), is scoped to the message's project, room, message
//     and claim, and may post exactly one reply (PostDiscussionReply: in
//     the message's room, in its turn, under the claim's role, provenance
//     status claimed). This is how a reply gets posted until post_message
//     has a page; a fixture can also describe posted replies.
//
// Refusals.
//   - A *Refusal{Code, Message}: Code a stable snake_case constant (the
//     Code* constants), Message a lowercase human sentence without secrets.
//     errors.Is(err, &Refusal{Code: c}) matches by code. Infrastructure
//     failures are ordinary wrapped errors ("store: ...: %w").
//
// Worlds.
//   - SeedDefault seeds the documented world (see its doc) into an empty
//     database only; LoadFixture loads a JSON world (FIXTURE.md) all or
//     nothing, naming the JSON path of a bad entry in a *FixtureError.
package store
