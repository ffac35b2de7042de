// Package world is the world format: the contract between a Prickle
// server and whoever drives it. A world is one JSON document (FIXTURE.md
// says what it means, fixture.schema.json what is valid; "fixture" is the
// format's older name, kept in those file names and in its errors) that a
// server loads: projects, people, agents and runners with their tokens,
// rooms, messages, turns and the replies posted in them, tasks, and
// earlier claims.
//
// [World] and its entries are the one Go form of the format. A world
// written by hand or generated may give its times relative to the moment
// it is handed to a server ("now-3h", see [Time]); [World.Materialize]
// resolves them and gives every agent and runner a fresh token, and
// [Decode] reads such a world. A server reads a materialized one with
// [Schema.Parse], which checks it against the schema first. Every problem
// of a document is an [*Error] naming its place: a JSON path, and a line
// and column when the world was read from text.
//
// The tokens a world gives its agents and runners are [Token]s, the form
// of a tokens file ([ReadTokens], [WriteTokens]).
//
// It imports only the ground floor of internal/: the spec, servers and the
// conformance suite import it, so it must not import any of them.
package world

import (
	"bytes"
	"encoding/json"
)

// The entries of a world. The schema says which fields are required and
// what their values may be; FIXTURE.md gives the defaults of the fields
// left out. A field the format makes optional is omitted when it is zero
// (a nil pointer: null or absent).
type (
	// Project is an entry of projects.
	Project struct {
		Slug string `json:"slug"`
		Name string `json:"name,omitzero"`
	}
	// Person is an entry of people.
	Person struct {
		Handle      string  `json:"handle"`
		DisplayName string  `json:"display_name"`
		AvatarURL   *string `json:"avatar_url,omitzero"`
		Color       int     `json:"color,omitzero"`
		Away        bool    `json:"away,omitzero"`
	}
	// Membership is an entry of memberships: a person in a project.
	Membership struct {
		Project string `json:"project"`
		Person  string `json:"person"`
	}
	// Capability is one of an agent's capabilities.
	Capability struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	}
	// Agent is an entry of agents; ID is "owner/name".
	Agent struct {
		ID           string       `json:"id"`
		AvatarURL    *string      `json:"avatar_url,omitzero"`
		Model        string       `json:"model"`
		Client       string       `json:"client"`
		Role         string       `json:"role,omitzero"`
		Capabilities []Capability `json:"capabilities,omitzero"`
		Availability string       `json:"availability"`
		TrustLevel   string       `json:"trust_level"`
		LastSeenAt   Time         `json:"last_seen_at,omitzero"`
		Token        string       `json:"token,omitzero"`
	}
	// Runner is an entry of runners, paired to one agent.
	Runner struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
		Name  string `json:"name,omitzero"`
		Token string `json:"token,omitzero"`
	}
	// Room is an entry of rooms: a project's general room, or a private
	// room of its owner.
	Room struct {
		ID      string  `json:"id"`
		Project string  `json:"project"`
		Kind    string  `json:"kind"`
		Owner   *string `json:"owner,omitzero"`
		Name    string  `json:"name,omitzero"`
	}
	// Message is an entry of messages; with ReplyTurn and ReplyRole it is
	// a reply, the one record of what was posted in a turn.
	Message struct {
		ID               string  `json:"id"`
		Room             string  `json:"room"`
		Kind             string  `json:"kind"`
		Author           string  `json:"author"`
		Body             string  `json:"body"`
		Provenance       string  `json:"provenance,omitzero"`
		ProvenanceStatus string  `json:"provenance_status,omitzero"`
		CreatedAt        Time    `json:"created_at,omitzero"`
		ReplyTurn        *string `json:"reply_turn,omitzero"`
		ReplyRole        *string `json:"reply_role,omitzero"`
	}
	// TurnAgent is an agent a turn woke.
	TurnAgent struct {
		Agent string `json:"agent"`
		// ReplyPosted is deprecated: derived from the replies; when given it
		// must agree.
		ReplyPosted *bool `json:"reply_posted,omitzero"`
	}
	// Turn is an entry of turns: the agents a message woke, in wake order
	// (the first leads).
	Turn struct {
		Message    string      `json:"message"`
		State      string      `json:"state,omitzero"`
		Agents     []TurnAgent `json:"agents"`
		ReplyLimit *int        `json:"reply_limit,omitzero"`
		ExpiresAt  Time        `json:"expires_at,omitzero"`
	}
	// Task is an entry of tasks, routed to one agent.
	Task struct {
		ID             string  `json:"id"`
		Project        string  `json:"project"`
		Agent          string  `json:"agent"`
		Title          string  `json:"title,omitzero"`
		RequestMessage *string `json:"request_message,omitzero"`
	}
	// Attempt is an entry of attempts: an earlier claim_task claim.
	Attempt struct {
		ID             string `json:"id,omitzero"`
		Task           string `json:"task"`
		Runner         string `json:"runner"`
		IdempotencyKey string `json:"idempotency_key"`
		ClaimedAt      Time   `json:"claimed_at,omitzero"`
		LiveUntil      Time   `json:"live_until,omitzero"`
		Superseded     bool   `json:"superseded,omitzero"`
	}
	// DiscussionClaim is an entry of discussion_claims: an earlier
	// claim_discussion claim.
	DiscussionClaim struct {
		ID             string  `json:"id,omitzero"`
		Message        string  `json:"message"`
		Runner         string  `json:"runner"`
		IdempotencyKey string  `json:"idempotency_key"`
		Role           string  `json:"role"`
		Reviewing      *string `json:"reviewing,omitzero"`
		ClaimedAt      Time    `json:"claimed_at,omitzero"`
		LiveUntil      Time    `json:"live_until,omitzero"`
		Superseded     bool    `json:"superseded,omitzero"`
		// ReplyMessage and ReplyPosted are deprecated: derived from the
		// replies; when given they must agree.
		ReplyMessage *string `json:"reply_message,omitzero"`
		ReplyPosted  *bool   `json:"reply_posted,omitzero"`
	}
)

// Version is the format version a world declares, the schema's "version"
// const.
const Version = 1

// World is a whole world, as one document describes it.
type World struct {
	Version          int               `json:"version"`
	Projects         []Project         `json:"projects,omitzero"`
	People           []Person          `json:"people,omitzero"`
	Memberships      []Membership      `json:"memberships,omitzero"`
	Agents           []Agent           `json:"agents,omitzero"`
	Runners          []Runner          `json:"runners,omitzero"`
	Rooms            []Room            `json:"rooms,omitzero"`
	Messages         []Message         `json:"messages,omitzero"`
	Turns            []Turn            `json:"turns,omitzero"`
	Tasks            []Task            `json:"tasks,omitzero"`
	Attempts         []Attempt         `json:"attempts,omitzero"`
	DiscussionClaims []DiscussionClaim `json:"discussion_claims,omitzero"`

	// doc is the text w was read from, which places its errors.
	doc *document
}

// Marshal returns w as an indented JSON document ending in a newline.
func (w *World) Marshal() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(w); err != nil {
		panic("world: " + err.Error()) // a World holds only strings, numbers and booleans
	}
	return b.Bytes()
}

// Clone returns a deep copy of w, placed in the same text.
func (w *World) Clone() *World {
	c, err := decode(w.Marshal())
	if err != nil {
		panic("world: " + err.Error()) // Marshal writes what decode reads
	}
	c.doc = w.doc
	return c
}
