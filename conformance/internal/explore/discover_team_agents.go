package explore

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
)

// The model of discover_team_agents.

// sDTList is the sentence of discover_team_agents the model cites.
var sDTList = sentence("discover_team_agents#05161da5")

// The reasons to refuse a discover_team_agents call.
var (
	ruleDiscCredTool     = newRule("discover_team_agents", "a discussion credential may only read its room", "tool_not_allowed", sCDCredential, dWhoMayCall)
	ruleExecCredTool     = newRule("discover_team_agents", "a credential may call only its allowed_tools", "tool_not_allowed", "", dWhoMayCall)
	ruleProjectInvisible = newRule("discover_team_agents", "the project does not exist or the caller is not a member", "project_not_visible", sDTList, dDiscover).in(sitNoSuchProject, sitNotMember)
	ruleCredScope        = newRule("discover_team_agents", "an execution credential sees only its task's project", "project_not_visible", "", dDiscover)
)

// The situations in which discover_team_agents' page refusal applies.
const (
	sitNoSuchProject = "no such project"
	sitNotMember     = "a project the caller is not in"
)

func init() {
	order([]*rule{ruleDiscCredTool, ruleExecCredTool}, []*rule{ruleProjectInvisible, ruleCredScope})
}

// team is the project's people and agents as discover_team_agents lists
// them (FIXTURE.md: a project's people are its members; its agents are
// those their owners' are).
func (m *model) team(project string) (people, agents []any) {
	people, agents = []any{}, []any{}
	for _, p := range m.w.People {
		if !m.members[project][p.Handle] {
			continue
		}
		var avatar any
		if p.AvatarURL != nil {
			avatar = *p.AvatarURL
		}
		people = append(people, map[string]any{"handle": p.Handle, "display_name": p.DisplayName, "avatar_url": avatar,
			"color": float64(p.Color), "away": p.Away})
	}
	for _, a := range m.w.Agents {
		owner, name, _ := strings.Cut(a.ID, "/")
		if !m.members[project][owner] {
			continue
		}
		var avatar, seen any
		if a.AvatarURL != nil {
			avatar = *a.AvatarURL
		}
		if a.LastSeenAt != "" {
			seen = mustTime(a.LastSeenAt, m.now).UTC().Format(time.RFC3339)
		}
		caps := []any{}
		for _, c := range a.Capabilities {
			caps = append(caps, map[string]any{"kind": c.Kind, "name": c.Name})
		}
		agents = append(agents, map[string]any{"agent_id": a.ID, "owner": owner, "name": name, "avatar_url": avatar,
			"model": a.Model, "client": a.Client, "role": a.Role, "capabilities": caps, "availability": a.Availability,
			"trust_level": a.TrustLevel, "last_seen_at": seen})
	}
	return people, agents
}

func (m *model) expectDiscover(e *expectation, cmd *command, c caller) {
	project, _ := argString(cmd.args, "project")
	if c.kind == "disc" {
		e.add(m, ruleDiscCredTool)
		return
	}
	if c.kind == "exec" && !slices.Contains(c.cred.allowed, "discover_team_agents") {
		e.add(m, ruleExecCredTool)
		return
	}
	if _, exists := m.members[project]; !exists {
		e.addIn(m, ruleProjectInvisible, sitNoSuchProject)
	} else if !m.visible(c.owner, project) {
		e.addIn(m, ruleProjectInvisible, sitNotMember)
	} else if c.kind == "exec" && project != c.cred.project {
		e.add(m, ruleCredScope)
	}
	switch c.kind {
	case "agent":
		e.successSrc = sDTList
	case "runner":
		e.open(m, &rule{what: "the pages do not say whether a runner may list a team"})
		e.successSrc = dWhoMayCall
	case "exec":
		e.open(m, &rule{what: "the pages do not say what an execution credential may list"})
		e.successSrc = dDiscover
	}
	e.refused = func(a *answer) []failure {
		if m.profile != suite.Reference || a.code != ruleProjectInvisible.code {
			return nil
		}
		// One refusal for a missing and an invisible project: nothing but
		// the project's name may tell them apart.
		text := strings.ReplaceAll(a.text, project, "<redacted>")
		if m.notVisibleText == "" {
			m.notVisibleText, m.notVisibleVar = text, fmt.Sprintf("NV%d", a.step)
			return nil
		}
		if text != m.notVisibleText {
			return []failure{{src: dDiscover, msg: fmt.Sprintf("project_not_visible says %q here and %q before: a missing and an invisible project must get the same message", text, m.notVisibleText),
				lines: []string{fmt.Sprintf("eq $NV%d $%s", a.step, m.notVisibleVar)}}}
		}
		return nil
	}
	e.success = func(a *answer) []failure {
		people, agents := m.team(project)
		var fs []failure
		for _, part := range []struct {
			path, key string
			want      []any
		}{{"people", "handle", people}, {"agents", "agent_id", agents}} {
			got, _ := a.structured[part.path].([]any)
			normalizeTimes(got, "last_seen_at")
			if d := diffSet(part.want, got, part.key); d != "" {
				fs = append(fs, failure{src: sDTList, msg: fmt.Sprintf("the %s of project %s: %s", part.path, project, d),
					lines: m.teamLines(part.path, part.key, part.want, got)})
			} else if m.profile == suite.Reference {
				fs = append(fs, orderLines(part.path, part.key, got)...)
			}
		}
		return fs
	}
}

// teamLines are the script checks of a list of the team: its length, and
// for each element the suite expects, the fields the answer got wrong (a
// time as relative to the fixture's now, so that the script runs again
// later).
func (m *model) teamLines(path, key string, want, got []any) []string {
	lines := []string{fmt.Sprintf("json %s len %d", path, len(want))}
	byKey := map[string]map[string]any{}
	for _, g := range got {
		if obj, ok := g.(map[string]any); ok {
			byKey[fmt.Sprint(obj[key])] = obj
		}
	}
	for _, w := range want {
		obj := w.(map[string]any)
		sel := fmt.Sprintf("%s[%s=%s]", path, key, obj[key])
		g := byKey[fmt.Sprint(obj[key])]
		if g == nil {
			lines = append(lines, "json "+sel+" exists")
			continue
		}
		for _, f := range slices.Sorted(maps.Keys(obj)) {
			if reflect.DeepEqual(obj[f], g[f]) {
				continue
			}
			switch v := obj[f].(type) {
			case nil:
				lines = append(lines, fmt.Sprintf("json %s.%s null", sel, f))
			case string:
				if t, err := time.Parse(time.RFC3339, v); err == nil && f == "last_seen_at" {
					lines = append(lines, fmt.Sprintf("time %s.%s == %s", sel, f, m.relTime(t)))
					continue
				}
				lines = append(lines, fmt.Sprintf("json %s.%s == %s", sel, f, script.Quote(script.JSON(v))))
			default:
				lines = append(lines, fmt.Sprintf("json %s.%s == %s", sel, f, script.Quote(script.JSON(v))))
			}
		}
	}
	return lines
}

// normalizeTimes rewrites field of every object in list as RFC 3339 in
// UTC, to the second, where it parses: any spelling of the same instant
// compares equal.
func normalizeTimes(list []any, field string) {
	for _, x := range list {
		obj, _ := x.(map[string]any)
		if s, ok := obj[field].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil && t.Equal(t.Truncate(time.Second)) {
				obj[field] = t.UTC().Format(time.RFC3339)
			}
		}
	}
}

// diffSet compares two lists of objects keyed by key, ignoring order.
func diffSet(want, got []any, key string) string {
	index := func(xs []any) (map[string]any, []string) {
		m := map[string]any{}
		var keys []string
		for _, x := range xs {
			obj, _ := x.(map[string]any)
			k := fmt.Sprint(obj[key])
			m[k] = x
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return m, keys
	}
	wm, wk := index(want)
	gm, gk := index(got)
	if !slices.Equal(wk, gk) {
		return fmt.Sprintf("want %s [%s], got [%s]", key, strings.Join(wk, " "), strings.Join(gk, " "))
	}
	for _, k := range wk {
		if !reflect.DeepEqual(wm[k], gm[k]) {
			return fmt.Sprintf("%s %s: want %s, got %s", key, k, wire.Compact(wm[k]), wire.Compact(gm[k]))
		}
	}
	return ""
}

// discover is a discover_team_agents call on one of the world's
// projects, by anyone; sometimes the same caller asks about every project
// first, up to n calls in all.
func (g *generator) discover(n int) *command {
	r := g.r
	c := &command{tool: "discover_team_agents", args: map[string]any{"project": g.w.Projects[r.IntN(len(g.w.Projects))].Slug}}
	switch y := r.IntN(100); {
	case y < 40:
		c.p = principal{kind: "agent", id: g.pick(g.agents)}
	case y < 60:
		c.p = principal{kind: "runner", id: g.pick(g.runners)}
	case y < 90:
		c.p = g.credOrElse(principal{kind: "agent", id: g.pick(g.agents)})
	default:
		c.p = g.nobody()
	}
	if r.IntN(8) == 0 {
		c.args["project"] = "no-such-project"
	}
	if r.IntN(3) == 0 && len(g.out) < n-1 && len(g.w.Projects) > 1 {
		// The same caller asks about every project, one after the other:
		// what one answer says must not leak into the next.
		for _, p := range g.w.Projects {
			if len(g.out) < n-1 && p.Slug != c.args["project"] {
				g.out = append(g.out, &command{p: c.p, tool: c.tool, args: map[string]any{"project": p.Slug}})
			}
		}
	}
	return c
}

// orderLines checks the reference order of a listed team (server/README.md:
// people by handle, agents by agent id, in byte order).
func orderLines(path, key string, got []any) []failure {
	var keys []string
	for _, g := range got {
		obj, _ := g.(map[string]any)
		keys = append(keys, fmt.Sprint(obj[key]))
	}
	if slices.IsSorted(keys) {
		return nil
	}
	want := slices.Sorted(slices.Values(keys))
	var lines []string
	for i, k := range want {
		lines = append(lines, fmt.Sprintf("json %s.%d.%s == %s", path, i, key, script.Quote(script.JSON(k))))
	}
	return []failure{{src: dOrders, msg: fmt.Sprintf("%s listed as [%s], want them by %s in byte order [%s]", path, strings.Join(keys, " "), key, strings.Join(want, " ")), lines: lines}}
}
