package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

// A mutant is the reference server with exactly one documented rule
// broken, by wrapping its tool handler or its HTTP transport. Mutants live
// here, in test code, never as switches in the server.
type mutant struct {
	name string
	rule string // the rule it breaks
	// breaks cites what it breaks (power.go): a page sentence's ID, a
	// page's schema ("TOOL: output schema"), a decision of
	// server/README.md ("server/README.md: TITLE") or an MCP rule.
	breaks string
	// caughtBy are the scripts that must fail against it.
	caughtBy []string
	// core: the core profile catches it too (with the same scripts).
	core bool
	// explore are the profiles in which stateful exploration alone (the
	// scripts off, the default budget) catches it: every mutant that needs
	// several calls or a state built up must be caught this way.
	explore []conformance.Profile
	// handler wraps the tool handler; scene gives the mutant the script's
	// fixture and the server (set once it exists).
	handler func(w *scene) func(api.Handler) api.Handler
	// http wraps the HTTP handler.
	http func(w *scene) func(http.Handler) http.Handler
	// load rewrites the world the mutant's store loads (a store that
	// ignores part of it).
	load func(fixture []byte) []byte
	// race: the mutant shows only when calls overlap (race_mutants_test.go).
	race bool
	// auth wraps how a token resolves to its principal.
	auth func(w *scene) func(authenticate) authenticate
	// replicas, for a mutant correct as one process only
	// (replica_mutants_test.go), is how many replicas of it its target
	// starts per world, on one SQLite file; 0 for a mutant of one
	// in-memory server.
	replicas int
}

// authenticate resolves a token's hash to its principal
// (server.Config.WrapAuthenticate).
type authenticate = func(context.Context, store.TokenHash) (*store.Principal, error)

// scene is what a mutant may know: the fixture and the running server;
// for a replica, its number and the database file the replicas share.
type scene struct {
	fixture []byte
	srv     *server.Server
	replica int
	db      string
	// closers run when the replica stops: what its mutant opened.
	closers []func()
	// cache is the replica's cache of principals (replica_mutants_test.go).
	cache *principalCache
}

func (w *scene) projects() []string {
	fx, err := world.Decode(w.fixture)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range fx.Projects {
		out = append(out, p.Slug)
	}
	return out
}

// mutantTarget starts m: a server of its own per world, in memory, or m's
// replicas.
func mutantTarget(m mutant) *conformance.HandlerTarget {
	if m.replicas > 0 {
		return &conformance.HandlerTarget{Name: fmt.Sprintf("mutant %s (replicas: %d)", m.name, m.replicas), Replicas: m.replicas,
			NewReplica: func(ctx context.Context, r int, stateDir string, fixture []byte) (http.Handler, func(), error) {
				w := &scene{fixture: fixture, replica: r, db: filepath.Join(stateDir, "prickled.db")}
				cfg := server.Config{DB: w.db}
				if r == 0 {
					cfg.World = bytes.NewReader(fixture)
				}
				return m.start(ctx, w, cfg)
			}}
	}
	return &conformance.HandlerTarget{
		Name: "mutant " + m.name,
		New: func(ctx context.Context, fixture []byte) (http.Handler, func(), error) {
			w := &scene{fixture: fixture}
			if m.load != nil {
				fixture = m.load(fixture)
			}
			return m.start(ctx, w, server.Config{World: bytes.NewReader(fixture)})
		},
	}
}

// start starts the reference server configured by cfg, with m's wrappers
// given scene w.
func (m mutant) start(ctx context.Context, w *scene, cfg server.Config) (http.Handler, func(), error) {
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if m.handler != nil {
		cfg.WrapHandler = m.handler(w)
	}
	if m.http != nil {
		cfg.WrapHTTP = m.http(w)
	}
	if m.auth != nil {
		cfg.WrapAuthenticate = m.auth(w)
	}
	stop := func() {
		for _, f := range slices.Backward(w.closers) {
			f()
		}
	}
	srv, _, err := server.New(ctx, cfg)
	if err != nil {
		stop()
		return nil, nil, err
	}
	w.srv = srv
	return srv.Handler(), func() { srv.Close(); stop() }, nil
}

// wrapped delegates every tool to the handler it embeds (tools documented
// later too) unless a field overrides it.
type wrapped struct {
	api.Handler
	claimTask       func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error)
	claimDiscussion func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error)
	discover        func(ctx context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error)
}

func (w *wrapped) ClaimTask(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
	if w.claimTask != nil {
		return w.claimTask(ctx, in)
	}
	return w.Handler.ClaimTask(ctx, in)
}

func (w *wrapped) ClaimDiscussion(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
	if w.claimDiscussion != nil {
		return w.claimDiscussion(ctx, in)
	}
	return w.Handler.ClaimDiscussion(ctx, in)
}

func (w *wrapped) DiscoverTeamAgents(ctx context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
	if w.discover != nil {
		return w.discover(ctx, in)
	}
	return w.Handler.DiscoverTeamAgents(ctx, in)
}

func refusedWith(err error, code string) bool {
	te, ok := rt.AsToolError(err)
	return ok && te.Code == code
}

// fakeTaskClaim is a claim_task answer the store never granted.
func fakeTaskClaim(taskID string) *api.ClaimTaskOutput {
	now := time.Now().UTC()
	return &api.ClaimTaskOutput{
		Attempt: api.ClaimTaskOutputAttempt{AttemptID: "att_mutant", TaskID: taskID, ClaimedAt: now},
		ExecutionCredential: api.ClaimTaskOutputExecutionCredential{Token: "prk_mutant_execution", ExpiresAt: now.Add(store.DefaultLaunchTimeout),
			AllowedTools: []api.ToolName{"checkpoint", "return_result"}},
	}
}

// fakeDiscussionClaim is a claim_discussion answer the store never granted.
func fakeDiscussionClaim() *api.ClaimDiscussionOutput {
	yes := true
	return &api.ClaimDiscussionOutput{
		Project: "website-v2", OwnRoom: &yes, RepliesLeft: 8, Lead: true, Role: "draft",
		DiscussionCredential: api.ClaimDiscussionOutputDiscussionCredential{Token: "prk_mutant_discussion",
			ExpiresAt: time.Now().UTC().Add(10 * time.Minute), AllowedTools: []api.ToolName{"read_room", "post_message"}},
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// answerAsAgent replaces res, a refusal of a discover_team_agents call by
// a caller for which which holds, with the answer the caller's agent
// would get: the call computed as if nothing scoped the caller.
func (w *scene) answerAsAgent(r *http.Request, params, res map[string]any, which func(*store.Principal) bool) {
	if params["name"] != "discover_team_agents" {
		return
	}
	p, err := w.srv.Store().Authenticate(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	if err != nil || !which(p) {
		return
	}
	asAgent := *p
	asAgent.Kind, asAgent.AllowedTools, asAgent.Scope = store.KindAgent, nil, store.Scope{}
	args, _ := params["arguments"].(map[string]any)
	project, _ := args["project"].(string)
	out, err := w.srv.Store().DiscoverTeamAgents(r.Context(), &asAgent, project)
	if err != nil {
		return
	}
	var sc any
	b, _ := json.Marshal(out)
	_ = json.Unmarshal(b, &sc)
	delete(res, "isError")
	delete(res, "_meta")
	setStructured(res, sc)
}

// privateRoomOwner is the owner of the private room message id is in,
// "" for a message of a general room or none.
func (w *scene) privateRoomOwner(id string) string {
	fx, err := world.Decode(w.fixture)
	if err != nil {
		return ""
	}
	for _, m := range fx.Messages {
		for _, r := range fx.Rooms {
			if m.ID == id && r.ID == m.Room && r.Kind == "private" && r.Owner != nil {
				return *r.Owner
			}
		}
	}
	return ""
}

// grantDiscussion is a claim_discussion answer the store never granted,
// for message id (its project from the fixture), with a fresh token.
func (w *scene) grantDiscussion(id, role string) *api.ClaimDiscussionOutput {
	fx, err := world.Decode(w.fixture)
	if err != nil {
		fx = &world.World{}
	}
	project := ""
	for _, m := range fx.Messages {
		for _, r := range fx.Rooms {
			if m.ID == id && r.ID == m.Room {
				project = r.Project
			}
		}
	}
	out := fakeDiscussionClaim()
	out.Project, out.Role, out.Lead = project, api.ClaimDiscussionOutputRole(role), role != "review"
	out.DiscussionCredential.Token = "prk_mutant_" + rand.Text()
	return out
}

func handlerMutant(f func(w *scene, inner api.Handler) *wrapped) func(w *scene) func(api.Handler) api.Handler {
	return func(w *scene) func(api.Handler) api.Handler {
		return func(inner api.Handler) api.Handler {
			h := f(w, inner)
			h.Handler = inner
			return h
		}
	}
}

// rewriteMessage rewrites the JSON-RPC messages of POST responses, JSON or
// event stream. fn gets the request (method and params) and the response
// message, and may change the message in place.
func rewriteMessage(fn func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any)) func(w *scene) func(http.Handler) http.Handler {
	return func(w *scene) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					next.ServeHTTP(rw, r)
					return
				}
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var req struct {
					Method string         `json:"method"`
					Params map[string]any `json:"params"`
				}
				_ = json.Unmarshal(body, &req)
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				edit := func(b []byte) []byte {
					var msg map[string]any
					if json.Unmarshal(b, &msg) != nil {
						return b
					}
					fn(w, r, req.Method, req.Params, msg)
					out, err := json.Marshal(msg)
					if err != nil {
						return b
					}
					return out
				}
				res := rec.Result()
				out := rec.Body.Bytes()
				switch ct := res.Header.Get("Content-Type"); {
				case strings.HasPrefix(ct, "application/json"):
					out = edit(out)
				case strings.HasPrefix(ct, "text/event-stream"):
					var b bytes.Buffer
					sc := bufio.NewScanner(bytes.NewReader(out))
					sc.Buffer(make([]byte, 1<<20), 8<<20)
					for sc.Scan() {
						line := sc.Text()
						if data, ok := strings.CutPrefix(line, "data: "); ok {
							line = "data: " + string(edit([]byte(data)))
						}
						b.WriteString(line + "\n")
					}
					out = b.Bytes()
				}
				for k, v := range res.Header {
					if k != "Content-Length" {
						rw.Header()[k] = v
					}
				}
				rw.WriteHeader(res.StatusCode)
				rw.Write(out)
			})
		}
	}
}

// toolResult returns the result of a tools/call answer, or nil.
func toolResult(method string, msg map[string]any) map[string]any {
	if method != "tools/call" {
		return nil
	}
	res, _ := msg["result"].(map[string]any)
	return res
}

func refusalCode(res map[string]any) string {
	if isErr, _ := res["isError"].(bool); !isErr {
		return ""
	}
	meta, _ := res["_meta"].(map[string]any)
	code, _ := meta["code"].(string)
	return code
}

// replaceAll replaces every value for which f returns (v, true), depth first.
func replaceAll(v any, f func(key string, v any) (any, bool)) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if nv, ok := f(k, e); ok {
				x[k] = nv
			} else {
				x[k] = replaceAll(e, f)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = replaceAll(e, f)
		}
	}
	return v
}

// setStructured replaces a result's structuredContent and its JSON text.
func setStructured(res map[string]any, sc any) {
	res["structuredContent"] = sc
	b, _ := json.Marshal(sc)
	res["content"] = []any{map[string]any{"type": "text", "text": string(b)}}
}

var mutants = []mutant{
	{
		name:     "replay-same-token",
		breaks:   `claim_task#1d2c6a82`,
		rule:     "claim_task: a replay comes with a fresh credential",
		caughtBy: []string{"claim_task_replay"},
		core:     true,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			var mu sync.Mutex
			first := map[string]string{}
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				out, err := inner.ClaimTask(ctx, in)
				if err != nil {
					return nil, err
				}
				mu.Lock()
				defer mu.Unlock()
				key := in.TaskID + "\x00" + in.IdempotencyKey
				if tok, ok := first[key]; ok {
					out.ExecutionCredential.Token = tok
				} else {
					first[key] = out.ExecutionCredential.Token
				}
				return out, nil
			}}
		}),
	},
	{
		name:     "missing-harness-accepted",
		breaks:   `claim_discussion#9a6c81c1`,
		rule:     "claim_discussion: a claim without harness 2 is refused",
		caughtBy: []string{"claim_discussion_harness"},
		core:     true,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				if in.Harness == nil {
					two := int64(2)
					in.Harness = &two
				}
				return inner.ClaimDiscussion(ctx, in)
			}}
		}),
	},
	{
		name:     "review-without-quote",
		breaks:   `claim_discussion#587ee1ed`,
		rule:     "claim_discussion: to review, the answer quotes the draft",
		caughtBy: []string{"claim_discussion_roles"},
		explore:  []conformance.Profile{conformance.Core, conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				if err == nil && out.Role == "review" {
					out.Reviewing = nil
				}
				return out, err
			}}
		}),
	},
	{
		name:     "discussion-credential-hour",
		breaks:   `claim_discussion#373f9dbc`,
		rule:     "claim_discussion: the credential expires after 10 minutes",
		caughtBy: []string{"claim_discussion_credential", "claim_discussion_replay"},
		core:     true,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				if err == nil {
					out.DiscussionCredential.ExpiresAt = time.Now().UTC().Add(time.Hour)
				}
				return out, err
			}}
		}),
	},
	{
		name:     "empty-list-null",
		breaks:   `discover_team_agents: output schema`,
		rule:     "discover_team_agents: empty lists are [], not null",
		caughtBy: []string{"discover_team_agents_empty_lists", "discover_team_agents_invisible"},
		core:     true,
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			res := toolResult(method, msg)
			if res == nil || res["structuredContent"] == nil {
				return
			}
			sc := replaceAll(res["structuredContent"], func(_ string, v any) (any, bool) {
				if a, ok := v.([]any); ok && len(a) == 0 {
					return nil, true
				}
				return nil, false
			})
			setStructured(res, sc)
		}),
	},
	{
		name:     "mention-as-cause",
		breaks:   `claim_task#fa24cf09`,
		rule:     "claim_task: a mention is never a run's cause",
		caughtBy: []string{"claim_task_cause"},
		core:     true,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				out, err := inner.ClaimTask(ctx, in)
				if refusedWith(err, store.CodeMentionNotCause) {
					in.Wake = nil
					return inner.ClaimTask(ctx, in)
				}
				return out, err
			}}
		}),
	},
	{
		name:     "credential-outside-allowed-tools",
		breaks:   `claim_discussion#373f9dbc`,
		rule:     "a credential may call only its allowed_tools",
		caughtBy: []string{"claim_discussion_credential"},
		core:     true,
		// The refusal is replaced by the real answer, computed for the
		// credential's agent as if the tool were allowed.
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			if res := toolResult(method, msg); res != nil && refusalCode(res) == store.CodeToolNotAllowed {
				w.answerAsAgent(r, params, res, func(*store.Principal) bool { return true })
			}
		}),
	},
	{
		name:     "tools-list-no-pattern",
		breaks:   `MCP tools/list: each tool's input and output schemas are the documented ones`,
		rule:     "tools/list serves the documented schemas",
		caughtBy: []string{"spec.tools"},
		core:     true,
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			if method != "tools/list" {
				return
			}
			res, _ := msg["result"].(map[string]any)
			tools, _ := res["tools"].([]any)
			for _, t := range tools {
				tool, _ := t.(map[string]any)
				if tool["name"] != "discover_team_agents" {
					continue
				}
				in, _ := tool["inputSchema"].(map[string]any)
				props, _ := in["properties"].(map[string]any)
				project, _ := props["project"].(map[string]any)
				delete(project, "pattern")
			}
		}),
	},
	{
		name:   "refusal-as-jsonrpc-error",
		breaks: `MCP tools: a refusal is a tool result with isError: true, not a protocol error`,
		rule:   "a refusal is an isError tool result, not a JSON-RPC error",
		caughtBy: []string{"claim_task_runner_only", "claim_task_routing", "discover_team_agents_invisible",
			"claim_discussion_harness", "spec.claim_task.task_id.pattern", "spec.discover_team_agents.project.required"},
		core: true,
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			res := toolResult(method, msg)
			if res == nil {
				return
			}
			if isErr, _ := res["isError"].(bool); !isErr {
				return
			}
			delete(msg, "result")
			msg["error"] = map[string]any{"code": -32000, "message": "refused"}
		}),
	},
	{
		name:     "invisible-project-distinguishable",
		breaks:   `server/README.md: discover_team_agents`,
		rule:     "discover_team_agents: a project the caller cannot see is refused like a missing one (reference: with the same message)",
		caughtBy: []string{"discover_team_agents_invisible"},
		explore:  []conformance.Profile{conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{discover: func(ctx context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
				out, err := inner.DiscoverTeamAgents(ctx, in)
				if refusedWith(err, store.CodeProjectNotVisible) && slices.Contains(w.projects(), in.Project) {
					return nil, rt.Refuse("not_a_member", "you are not a member of project %q", in.Project)
				}
				return out, err
			}}
		}),
	},
	{
		name:     "turn-replaced-accepted",
		breaks:   `claim_discussion#a6f19e4e`,
		rule:     "claim_discussion: refused once the turn was replaced by the owner's next message",
		caughtBy: []string{"claim_discussion_turn_over"},
		core:     true,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				if refusedWith(err, store.CodeTurnReplaced) {
					return fakeDiscussionClaim(), nil
				}
				return out, err
			}}
		}),
	},
	{
		name:     "any-private-room",
		breaks:   `claim_discussion#fc26a52b`,
		rule:     "claim_discussion: only in your room (this server accepts a room wake in any owner's private room, refusing only general rooms)",
		caughtBy: []string{"claim_discussion_room_wake"},
		core:     true,
		explore:  []conformance.Profile{conformance.Core, conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				owner := w.privateRoomOwner(in.MessageID)
				ti := rt.TokenInfoFrom(ctx)
				if !refusedWith(err, store.CodeNotYourRoom) || owner == "" || ti == nil {
					return out, err
				}
				p, ok := ti.Extra["prickle.principal"].(*store.Principal)
				if !ok {
					return out, err
				}
				// The claim as if the runner's owner owned the room: every
				// other rule (not_woken, the turn, harness 2) still
				// applies. The principal is this request's own copy.
				own := p.Owner
				p.Owner = owner
				defer func() { p.Owner = own }()
				return inner.ClaimDiscussion(ctx, in)
			}}
		}),
	},
	{
		name:     "routing-ignored",
		breaks:   `claim_task#5e5dfcd3`,
		rule:     "claim_task: only a task routed to the runner's agent",
		caughtBy: []string{"claim_task_routing"},
		core:     true,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				out, err := inner.ClaimTask(ctx, in)
				if refusedWith(err, store.CodeNotRouted) {
					return fakeTaskClaim(in.TaskID), nil
				}
				return out, err
			}}
		}),
	},
	{
		name:     "replay-after-reply",
		breaks:   `claim_discussion#393d6bef`,
		rule:     "claim_discussion: replays stop once the reply is posted",
		caughtBy: []string{"claim_discussion_replay"},
		core:     true,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				if refusedWith(err, store.CodeReplyPosted) {
					return fakeDiscussionClaim(), nil
				}
				return out, err
			}}
		}),
	},
	{
		name:     "launch-timeout-two-hours",
		breaks:   `server/README.md: The launch timeout`,
		rule:     "claim_task: the credential expires with the launch timeout (reference: 15 minutes by default)",
		caughtBy: []string{"claim_task_credential"},
		core:     false, // the pages do not fix the launch timeout
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				out, err := inner.ClaimTask(ctx, in)
				if err == nil {
					out.ExecutionCredential.ExpiresAt = time.Now().UTC().Add(2 * time.Hour)
				}
				return out, err
			}}
		}),
	},
	{
		name:     "null-omitted",
		breaks:   `discover_team_agents: output schema`,
		rule:     "discover_team_agents: nullable fields are null, not absent",
		caughtBy: []string{"discover_team_agents_seed", "discover_team_agents_empty_lists"},
		core:     true,
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			res := toolResult(method, msg)
			if res == nil || res["structuredContent"] == nil {
				return
			}
			var drop func(v any)
			drop = func(v any) {
				switch x := v.(type) {
				case map[string]any:
					for k, e := range x {
						if e == nil {
							delete(x, k)
						} else {
							drop(e)
						}
					}
				case []any:
					for _, e := range x {
						drop(e)
					}
				}
			}
			drop(res["structuredContent"])
			setStructured(res, res["structuredContent"])
		}),
	},
	{
		name:     "structured-refusal",
		breaks:   `MCP tools: a refusal's structuredContent, if any, matches the output schema`,
		rule:     "a refusal carries no structuredContent (clients validate it against the output schema)",
		caughtBy: []string{"claim_task_runner_only", "discover_team_agents_invisible", "spec.claim_task.task_id.pattern"},
		core:     true,
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			res := toolResult(method, msg)
			if res == nil || refusalCode(res) == "" {
				return
			}
			res["structuredContent"] = map[string]any{"error": refusalCode(res)}
		}),
	},
	{
		name:     "agent-may-claim",
		breaks:   `claim_task#e94d1a5d`,
		rule:     "claim_task: only a paired runner can claim",
		caughtBy: []string{"claim_task_runner_only"},
		core:     true,
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			res := toolResult(method, msg)
			if res == nil || refusalCode(res) != store.CodeNotRunner || params["name"] != "claim_task" {
				return
			}
			args, _ := params["arguments"].(map[string]any)
			task, _ := args["task_id"].(string)
			var sc any
			b, _ := json.Marshal(fakeTaskClaim(task))
			_ = json.Unmarshal(b, &sc)
			delete(res, "isError")
			delete(res, "_meta")
			setStructured(res, sc)
		}),
	},
	// Stateful mutants: each breaks a rule that only shows after several
	// calls or in a world with history. Exploration alone must catch them.
	{
		name:    "team-cache-per-caller",
		breaks:  `discover_team_agents#05161da5`,
		rule:    "discover_team_agents: the team of the project asked for (a directory cached per caller answers one caller's first team for every project)",
		explore: []conformance.Profile{conformance.Core, conformance.Reference},
		http: func(w *scene) func(http.Handler) http.Handler {
			var mu sync.Mutex
			cache := map[string]map[string]any{} // bearer token -> first team answer
			return rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
				res := toolResult(method, msg)
				if res == nil || params["name"] != "discover_team_agents" || refusalCode(res) != "" {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				caller := r.Header.Get("Authorization")
				if first, ok := cache[caller]; ok {
					setStructured(res, first["structuredContent"])
					return
				}
				cache[caller] = map[string]any{"structuredContent": res["structuredContent"]}
			})(w)
		},
	},
	{
		name:    "no-reply-limit",
		breaks:  `server/README.md: claim_discussion`,
		rule:    "claim_discussion (reference): a claim when the turn allows no more replies is no_replies_left (a store that never checks the limit)",
		explore: []conformance.Profile{conformance.Reference},
		// The store loads every turn whose replies reached its limit with
		// one more reply allowed: it grants what the limit forbids.
		load: func(fixture []byte) []byte {
			fx, err := world.Decode(fixture)
			if err != nil {
				return fixture
			}
			posted := map[string]int{}
			for _, m := range fx.Messages {
				if m.ReplyTurn != nil {
					posted[*m.ReplyTurn]++
				}
			}
			for _, t := range fx.Turns {
				if limit := t.ReplyLimit; limit != nil && *limit <= posted[t.Message] && *limit < 8 {
					*limit++
				}
			}
			return fx.Marshal()
		},
	},
	{
		name:    "no-reviews-pending",
		breaks:  `server/README.md: claim_discussion`,
		rule:    "claim_discussion (reference): the lead claims again before every review is posted: reviews_pending",
		explore: []conformance.Profile{conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				if refusedWith(err, store.CodeReviewsPending) {
					return w.grantDiscussion(in.MessageID, "combine"), nil
				}
				return out, err
			}}
		}),
	},
	{
		name:    "second-discussion-key",
		breaks:  `server/README.md: claim_discussion`,
		rule:    "claim_discussion (reference): a different key while the agent's claim is live is discussion_in_progress",
		explore: []conformance.Profile{conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				if refusedWith(err, store.CodeDiscussionInProgress) {
					return w.grantDiscussion(in.MessageID, "draft"), nil
				}
				return out, err
			}}
		}),
	},
	{
		name:    "replay-new-claimed-at",
		breaks:  `claim_task#1d2c6a82`,
		rule:    "claim_task: a replay answers the attempt as claimed, with its claimed_at (this one stamps a replay of an attempt made long ago with the time of the replay)",
		explore: []conformance.Profile{conformance.Core, conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				out, err := inner.ClaimTask(ctx, in)
				if err == nil && time.Since(out.Attempt.ClaimedAt) > time.Minute {
					out.Attempt.ClaimedAt = time.Now().UTC()
				}
				return out, err
			}}
		}),
	},
	{
		name:     "expired-turn-accepted",
		breaks:   `claim_discussion#a6f19e4e`,
		rule:     "claim_discussion: refused once the turn is out of time (a store that ignores a turn's deadline)",
		caughtBy: []string{"claim_discussion_turn_over"},
		core:     true,
		explore:  []conformance.Profile{conformance.Core, conformance.Reference},
		load: func(fixture []byte) []byte {
			fx, err := world.Decode(fixture)
			if err != nil {
				return fixture
			}
			for i := range fx.Turns {
				fx.Turns[i].ExpiresAt = ""
			}
			return fx.Marshal()
		},
	},
	{
		name:    "superseded-attempt-replayed",
		breaks:  `server/README.md: claim_task`,
		rule:    "claim_task (reference): replaying a superseded attempt's key is attempt_superseded",
		explore: []conformance.Profile{conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				out, err := inner.ClaimTask(ctx, in)
				if refusedWith(err, store.CodeAttemptSuperseded) {
					return fakeTaskClaim(in.TaskID), nil
				}
				return out, err
			}}
		}),
	},
	{
		name:     "second-attempt-while-live",
		breaks:   `server/README.md: claim_task`,
		rule:     "claim_task (reference): a different key while an attempt is live is attempt_in_progress",
		caughtBy: []string{"claim_task_replay"},
		explore:  []conformance.Profile{conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				out, err := inner.ClaimTask(ctx, in)
				if refusedWith(err, store.CodeAttemptInProgress) {
					return fakeTaskClaim(in.TaskID), nil
				}
				return out, err
			}}
		}),
	},
	{
		name:     "execution-credential-any-project",
		breaks:   `server/README.md: discover_team_agents`,
		rule:     "discover_team_agents (reference): an execution credential sees only its task's project",
		caughtBy: []string{"discover_team_agents_credentials"},
		explore:  []conformance.Profile{conformance.Reference},
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			if res := toolResult(method, msg); res != nil && refusalCode(res) == store.CodeProjectNotVisible {
				w.answerAsAgent(r, params, res, func(p *store.Principal) bool { return p.Kind == store.KindExecution })
			}
		}),
	},
	{
		name:     "lead-of-every-turn",
		breaks:   `server/README.md: claim_discussion`,
		rule:     "claim_discussion (reference): only the first agent a message woke leads",
		caughtBy: []string{"claim_discussion_roles"},
		explore:  []conformance.Profile{conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				out, err := inner.ClaimDiscussion(ctx, in)
				if err == nil {
					out.Lead = true
				}
				return out, err
			}}
		}),
	},
}

// Mutants of the sequential classes of issue 20: each breaks a rule that
// only a key reused across scopes, a credential used before its
// replacement, a documented order or a pattern read by another engine
// shows.
var sequentialMutants = []mutant{
	{
		name:    "idempotency-key-per-runner",
		breaks:  `claim_task#1d2c6a82`,
		rule:    "claim_task: a key replays the claim of its own task only (this server keys claims by runner and key, so a key reused on another task replays the first task's attempt)",
		explore: []conformance.Profile{conformance.Core, conformance.Reference},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			var mu sync.Mutex
			first := map[string]string{} // runner and key -> the task first claimed with them
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				runner := ""
				if ti := rt.TokenInfoFrom(ctx); ti != nil {
					if p, ok := ti.Extra["prickle.principal"].(*store.Principal); ok {
						runner = p.RunnerID
					}
				}
				k := runner + "\x00" + in.IdempotencyKey
				mu.Lock()
				task, seen := first[k]
				mu.Unlock()
				if seen && task != in.TaskID {
					other := *in
					other.TaskID = task
					return inner.ClaimTask(ctx, &other)
				}
				out, err := inner.ClaimTask(ctx, in)
				if err == nil {
					mu.Lock()
					first[k] = in.TaskID
					mu.Unlock()
				}
				return out, err
			}}
		}),
	},
	{
		name:    "replaced-credential-warm",
		breaks:  `server/README.md: claim_task`,
		rule:    "a replay revokes the earlier credential (reference; this server keeps authenticating a credential it has seen used, after its replacement)",
		explore: []conformance.Profile{conformance.Reference},
		http: func(w *scene) func(http.Handler) http.Handler {
			var mu sync.Mutex
			used := map[string]bool{}     // bearer tokens that authenticated a call
			family := map[string]string{} // credential -> its claim (caller, tool, task or message, key)
			newest := map[string]string{} // claim -> its newest credential
			record := rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
				res := toolResult(method, msg)
				if res == nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				used[r.Header.Get("Authorization")] = true
				sc, _ := res["structuredContent"].(map[string]any)
				args, _ := params["arguments"].(map[string]any)
				for _, path := range []string{"execution_credential", "discussion_credential"} {
					cred, ok := sc[path].(map[string]any)
					if !ok {
						continue
					}
					claim := fmt.Sprint(r.Header.Get("Authorization"), params["name"], args["task_id"], args["message_id"], args["idempotency_key"])
					tok := "Bearer " + fmt.Sprint(cred["token"])
					family[tok], newest[claim] = claim, tok
				}
			})(w)
			return func(next http.Handler) http.Handler {
				inner := record(next)
				return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					tok := r.Header.Get("Authorization")
					mu.Lock()
					if claim, ok := family[tok]; ok && used[tok] && newest[claim] != tok {
						r.Header.Set("Authorization", newest[claim]) // the cache still knows its caller
					}
					mu.Unlock()
					inner.ServeHTTP(rw, r)
				})
			}
		},
	},
	{
		name:    "agents-by-name",
		breaks:  "server/README.md: The order of `people` and `agents`",
		rule:    "discover_team_agents (reference): agents are listed by agent id in byte order (this server lists them by name)",
		explore: []conformance.Profile{conformance.Reference},
		http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
			res := toolResult(method, msg)
			sc, _ := res["structuredContent"].(map[string]any)
			agents, ok := sc["agents"].([]any)
			if !ok || params["name"] != "discover_team_agents" {
				return
			}
			slices.SortStableFunc(agents, func(a, b any) int {
				x, _ := a.(map[string]any)
				y, _ := b.(map[string]any)
				return strings.Compare(fmt.Sprint(x["name"]), fmt.Sprint(y["name"]))
			})
			setStructured(res, sc)
		}),
	},
	{
		name:     "pattern-newline-end",
		breaks:   `claim_task: input schema`,
		rule:     "input patterns are ECMA-262's: $ does not match before a final newline (this server's pattern check, as Python's re, lets \"t1\\n\" through)",
		caughtBy: []string{"spec.claim_task.task_id.pattern-newline-end", "spec.discover_team_agents.project.pattern-newline-end"},
		core:     true,
		// The check passes a value that matches once its final newline is
		// dropped, and the server goes on with that value.
		http: func(w *scene) func(http.Handler) http.Handler {
			return func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					var msg map[string]any
					if json.Unmarshal(body, &msg) == nil && msg["method"] == "tools/call" {
						params, _ := msg["params"].(map[string]any)
						replaceAll(params["arguments"], func(_ string, v any) (any, bool) {
							s, ok := v.(string)
							if t, cut := strings.CutSuffix(s, "\n"); ok && cut {
								return t, true
							}
							return nil, false
						})
						body, _ = json.Marshal(msg)
					}
					r.Body = io.NopCloser(bytes.NewReader(body))
					r.ContentLength = int64(len(body))
					next.ServeHTTP(rw, r)
				})
			}
		},
	},
}

func init() { mutants = append(mutants, sequentialMutants...) }

// stubMutants are, for every documented tool, the reference server with
// that tool stubbed: served on tools/list, its arguments validated, and
// every valid call refused with not_implemented.
func stubMutants(sp *spec.Spec) []mutant {
	var out []mutant
	for _, t := range sp.Tools {
		name := t.Name
		out = append(out, mutant{
			name:   "stub-" + name,
			breaks: name + ": every documented tool is served",
			rule:   "every documented tool is served: a stub that refuses every call of " + name + " is never certified",
			http: rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
				res := toolResult(method, msg)
				if res == nil || params["name"] != name || refusalCode(res) == "invalid_arguments" {
					return
				}
				text := "not_implemented: " + name + " is not implemented"
				for k := range res {
					delete(res, k)
				}
				res["isError"] = true
				res["_meta"] = map[string]any{"code": "not_implemented"}
				res["content"] = []any{map[string]any{"type": "text", "text": text}}
			}),
		})
	}
	return out
}

// mutantSeed seeds the mutants' exploration: with the default budget,
// each stateful mutant is caught from this seed (and from others: the
// test of a seed of the day would find the mutants that one seed misses).
const mutantSeed = 20260101

func runMutant(t *testing.T, sp *spec.Spec, scripts []*conformance.Script, m mutant, prof conformance.Profile, sel string, explore int, save string, seed int64) *conformance.Report {
	t.Helper()
	o := conformance.Options{Target: mutantTarget(m), Profile: prof, Spec: sp, Parallel: 2,
		Explore: explore, Seed: seed, ExploreFailFast: true, SaveDir: save}
	if sel != "" {
		o.Run = regexp.MustCompile(sel)
	}
	rep, err := conformance.Run(context.Background(), scripts, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestMutants runs, against every mutant, the scripts named for it, and
// checks that each of them fails: the suite catches a server that breaks
// that one rule. Where the pages themselves state the rule (core), the
// core profile must catch it too. A stateful mutant must also be caught by
// exploration alone, at the default budget (a race mutant in one of
// raceRuns runs). What caught each, in how many tries, must be what
// power.json lists (-update writes it).
func TestMutants(t *testing.T) {
	needMutants(t)
	sp, scripts := loadSuite(t)
	if len(mutants) < 25 {
		t.Fatalf("only %d mutants", len(mutants))
	}
	all := slices.Concat(mutants, replicaMutants)
	var names []string
	for _, m := range all {
		names = append(names, m.name)
	}
	rec := recordPower(t, names, noStubs)
	for _, m := range all {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			rec.start(m.name)
			if len(m.caughtBy) == 0 && len(m.explore) == 0 {
				t.Fatal("a mutant must be caught by scripts or by exploration")
			}
			if m.replicas > 0 {
				oneReplicaCertified(t, sp, scripts, m)
			}
			got, misses := measureMutant(t, sp, scripts, m)
			for _, miss := range misses {
				t.Error(miss)
			}
			rec.measured(got)
		})
	}
}

// oneReplicaCertified checks that a full run against one replica of
// replica mutant m certifies it, in both profiles: it is correct as one
// process, and only a replica bug.
func oneReplicaCertified(t *testing.T, sp *spec.Spec, scripts []*conformance.Script, m mutant) {
	t.Helper()
	one := m
	one.replicas = 1
	for _, prof := range []conformance.Profile{conformance.Reference, conformance.Core} {
		rep := runMutant(t, sp, scripts, one, prof, "", conformance.DefaultExplore, "", mutantSeed)
		if rep.Verdict != conformance.Certified {
			t.Errorf("%s profile: one replica of mutant %q is not certified, so it is not only a replica bug: %s; failed: %s; missing: %s",
				prof, m.name, rep.Summary(), failedNames(rep), strings.Join(rep.Missing, "; "))
			continue
		}
		t.Logf("%s profile, one replica: %s", prof, rep.Summary())
	}
}

// raceRuns is how many explorations a race mutant gets to be caught in,
// each from a seed of its own, with a run of the sequence it saved: a
// saved race that shrank to a few calls may need a quieter moment to show
// again. A run that does not catch it must not certify it either: its
// race evidence is short (the machine could not make its calls overlap),
// and the test ends there, about the verdict, not about luck.
const raceRuns = 3

// exploreCatches checks that exploration alone, at the default budget,
// catches mutant m in profile prof, and that the shrunk sequence, saved as
// a script, fails against the mutant and passes against the reference
// server; it returns the catcher, with the runs and sequences it took,
// or what missed. A race mutant that exploration does not catch must
// leave the run short of race evidence (short): never a pass by luck.
func exploreCatches(t *testing.T, sp *spec.Spec, scripts []*conformance.Script, m mutant, prof conformance.Profile) (c *conformance.PowerCatcher, short bool, miss string) {
	t.Helper()
	runs := 1
	if m.race {
		runs = raceRuns
	}
	var misses []string
	for i := range runs {
		seed := mutantSeed + int64(i)
		save := t.TempDir()
		rep := runMutant(t, sp, scripts, m, prof, "^explore$", conformance.DefaultExplore, save, seed)
		if r := rep.Result(report.ExploreScript); r == nil || r.Status != report.Fail {
			if m.race {
				if short := shortRaces(rep); short != "" {
					t.Logf("%s profile: seed %d: not caught, and not certified: race evidence short (%s)", prof, seed, short)
					return nil, true, ""
				}
			}
			misses = append(misses, fmt.Sprintf("seed %d: exploration alone (%d sequences) does not catch it; race evidence: %v", seed, conformance.DefaultExplore, rep.Races))
			if m.race {
				break // with its evidence complete, a miss is a miss
			}
			continue
		}
		f := rep.Explore.Failures[0]
		t.Logf("%s profile: exploration from seed %d catches it in sequence %d (%d run): %s [%s], shrunk to %d calls", prof, seed, f.Sequence, rep.Explore.Sequences, f.Message, f.Source, f.Calls)
		if os.Getenv("SHOW") != "" {
			t.Logf("%s", f.Script)
		}
		saved, err := conformance.LoadScripts(save)
		if err != nil || len(saved) != 1 {
			t.Fatalf("--save wrote %d scripts: %v", len(saved), err)
		}
		if m.replicas >= 2 && !strings.Contains(f.Script, " -replica 1 ") {
			t.Errorf("%s profile: seed %d: the shrunk script does not name the replica each call went to:\n%s", prof, seed, f.Script)
		}
		// A loaded machine makes a long race script slow, never wrong.
		o := conformance.Options{Target: mutantTarget(m), Profile: prof, Spec: sp, ScriptTimeout: 10 * time.Minute}
		got := runSaved(t, saved, o)
		switch {
		case conformance.ShortEvidence(got):
			t.Logf("%s profile: seed %d: the shrunk script against the mutant: not caught, and not passed: %s", prof, seed, got.Reason)
			return nil, true, ""
		case got.Status != report.Fail:
			misses = append(misses, fmt.Sprintf("seed %d: the shrunk script against the mutant: %s, want fail\n%s\n%s", seed, got.Status, got.Log, f.Script))
			continue
		}
		o.Target = referenceTarget("reference", nil, nil)
		if m.replicas > 0 { // the reference server, replicated alike
			o.Target = mutantTarget(mutant{name: "reference", replicas: m.replicas})
		}
		if got := runSaved(t, saved, o); got.Status != report.Pass && !conformance.ShortEvidence(got) {
			t.Errorf("%s profile: seed %d: the shrunk script against the reference server: %s (%s), want pass\n%s\n%s", prof, seed, got.Status, got.Reason, got.Log, f.Script)
		}
		return &conformance.PowerCatcher{By: conformance.CatchExplore, Runs: i + 1, Sequences: f.Sequence + 1, Replicas: m.replicas}, false, ""
	}
	return nil, false, fmt.Sprintf("%s profile: mutant %q (%s) is not caught, in %d attempt(s):\n%s", prof, m.name, m.rule, runs, strings.Join(misses, "\n"))
}

// shortRaces names the race classes of rep short of evidence ("" if
// none is).
func shortRaces(rep *conformance.Report) string {
	var out []string
	for _, e := range rep.Races {
		if e.Short() {
			out = append(out, e.String())
		}
	}
	return strings.Join(out, "; ")
}

// runSaved runs the one script of saved and returns its result.
func runSaved(t *testing.T, saved []*conformance.Script, o conformance.Options) *report.Result {
	t.Helper()
	rep, err := conformance.Run(context.Background(), saved, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Result(saved[0].Name)
}

// needMutants skips the mutant self-test unless PRICKLE_MUTANTS=1: its
// runs against every mutant outlast go test's default timeout, so CI runs
// it in a step of its own, with a longer one (.ci/run).
func needMutants(t *testing.T) {
	t.Helper()
	if os.Getenv("PRICKLE_MUTANTS") != "1" {
		t.Skip("the mutant self-test: set PRICKLE_MUTANTS=1 (and -timeout 60m)")
	}
}

// TestMutantsFullRun: a full certification run (every script, exploration
// at the default budget) never certifies a mutant, the stubs included. A
// race mutant gets one run, as a user's server would: FAILED or
// INCOMPLETE (its race evidence short, on a loaded machine) are both
// right, CERTIFIED never. A replica mutant, run as two replicas, is
// FAILED.
func TestMutantsFullRun(t *testing.T) {
	needMutants(t)
	sp, scripts := loadSuite(t)
	stubs := stubMutants(sp)
	var names []string
	for _, m := range stubs {
		names = append(names, m.name)
	}
	rec := recordPower(t, names, stubsOnly)
	for _, m := range slices.Concat(mutants, replicaMutants, stubs) {
		t.Run(m.name, func(t *testing.T) {
			stub := strings.HasPrefix(m.name, "stub-")
			if stub {
				rec.start(m.name)
			}
			got := measured{PowerMutant: describe(sp, m)}
			profiles := []conformance.Profile{conformance.Reference}
			if m.core || slices.Contains(m.explore, conformance.Core) || stub {
				profiles = append(profiles, conformance.Core)
			}
			for _, prof := range profiles {
				rep := runMutant(t, sp, scripts, m, prof, "", conformance.DefaultExplore, "", mutantSeed)
				if rep.Verdict == conformance.Certified || m.replicas > 0 && rep.Verdict != conformance.Failed {
					t.Errorf("%s profile: a full run against mutant %q (%s) is %s; race evidence: %v", prof, m.name, m.rule, rep.Verdict, rep.Races)
				}
				t.Logf("%s profile: %s; failed: %s; missing: %d; races short: %s", prof, rep.Summary(), failedNames(rep), len(rep.Missing), shortRaces(rep))
				// A stub is caught by the coverage the verdict asks for.
				served := "no call of " + got.Tool + " succeeded"
				if stub && rep.Verdict != conformance.Certified && slices.ContainsFunc(rep.Missing, func(s string) bool { return strings.Contains(s, served) }) {
					addCatchers(&got.PowerMutant, prof, conformance.PowerCatcher{By: conformance.CatchCoverage, Runs: 1})
				}
			}
			if stub {
				rec.measured(got)
			}
		})
	}
}

func failedNames(rep *conformance.Report) string {
	var out []string
	for _, r := range rep.Results {
		if r.Status == report.Fail {
			out = append(out, r.Name)
		}
	}
	return strings.Join(out, " ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\t" + strings.Join(lines, "\n\t")
}
