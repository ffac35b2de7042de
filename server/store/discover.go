package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Person is a person in a project, as discover_team_agents returns it.
type Person struct {
	// Handle is the person's handle.
	Handle string `json:"handle"`
	// DisplayName is the person's display name.
	DisplayName string `json:"display_name"`
	// AvatarURL is nil when the person has no avatar.
	AvatarURL *string `json:"avatar_url"`
	// Color is 0-7.
	Color int `json:"color"`
	// Away is true when the person is away.
	Away bool `json:"away"`
}

// Capability is one capability of an agent.
type Capability struct {
	// Kind is mcp, repo, deploy, data or other.
	Kind string `json:"kind"`
	// Name names the capability.
	Name string `json:"name"`
}

// Agent is an agent in a project, as discover_team_agents returns it.
type Agent struct {
	// AgentID is "owner/name".
	AgentID string `json:"agent_id"`
	// Owner is the owner's handle.
	Owner string `json:"owner"`
	// Name is the agent's name within its owner.
	Name string `json:"name"`
	// AvatarURL is nil when the agent has no avatar.
	AvatarURL *string `json:"avatar_url"`
	// Model is the model the agent runs.
	Model string `json:"model"`
	// Client is the client the agent connects with.
	Client string `json:"client"`
	// Role is a short description of the agent's role.
	Role string `json:"role"`
	// Capabilities is never nil.
	Capabilities []Capability `json:"capabilities"`
	// Availability is online, working, idle, asleep, away or offline.
	Availability string `json:"availability"`
	// TrustLevel is owner_verified or unverified.
	TrustLevel string `json:"trust_level"`
	// LastSeenAt is nil when the agent was never seen.
	LastSeenAt *time.Time `json:"last_seen_at"`
}

// DiscoverResult is the discover_team_agents answer. Both slices are
// non-nil (they marshal as [] when empty).
type DiscoverResult struct {
	// People are the project's members, by handle.
	People []Person `json:"people"`
	// Agents are the agents owned by the project's members, by agent id.
	Agents []Agent `json:"agents"`
}

// DiscoverTeamAgents lists the people and agents of project. The caller's
// agent's owner must be a member of the project; a credential scoped to a
// project sees only that project. (Which callers may call the tool at all
// is the server's policy.) A project that does not exist and one the caller
// cannot see give the same refusal, project_not_visible, with the same
// message.
//
// Both refusals take one path, which reads no project: the projects the
// caller's owner is a member of decide, so that the time a refusal takes
// does not tell whether the project exists. A project's directory and a
// person's memberships are cached (see cache.go): loading a world
// invalidates them, and no tool changes people, agents or memberships.
func (s *Store) DiscoverTeamAgents(ctx context.Context, p *Principal, project string) (DiscoverResult, error) {
	if p == nil {
		return DiscoverResult{}, refuse(CodeUnauthenticated, "no caller identity")
	}
	notVisible := refuse(CodeProjectNotVisible, "the project does not exist or you cannot see it")
	if p.Scope.Project != "" && p.Scope.Project != project {
		return DiscoverResult{}, notVisible
	}
	projects, err := s.projectsOf(ctx, p.Owner)
	if err != nil {
		return DiscoverResult{}, opError("discover team agents", err)
	}
	if !projects[project] {
		return DiscoverResult{}, notVisible
	}
	d, ok, gen := s.dir.get(project)
	if !ok {
		var err error
		if d, err = s.readDirectory(ctx, project); err != nil {
			return DiscoverResult{}, opError("discover team agents", err)
		}
		if len(d.People) > 0 { // only projects that exist and have members
			s.dir.put(project, d, gen)
		}
	}
	// The caller sees the project if its agent's owner is a member.
	if !slices.ContainsFunc(d.People, func(pe Person) bool { return pe.Handle == p.Owner }) {
		return DiscoverResult{}, notVisible
	}
	return d.clone(), nil
}

// projectsOf returns the projects person is a member of (cached). The
// map is shared: callers only read it.
func (s *Store) projectsOf(ctx context.Context, person string) (map[string]bool, error) {
	projects, ok, gen := s.members.get(person)
	if ok {
		return projects, nil
	}
	projects = map[string]bool{}
	err := s.inReadTx(ctx, func(tx *txn) error {
		rows, err := tx.stmt(ctx, stPersonProjects).QueryContext(ctx, person)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var project string
			if err := rows.Scan(&project); err != nil {
				return err
			}
			projects[project] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	s.members.put(person, projects, gen)
	return projects, nil
}

// clone returns a deep copy, so that callers never share a cached value.
func (r DiscoverResult) clone() DiscoverResult {
	out := DiscoverResult{People: make([]Person, len(r.People)), Agents: make([]Agent, len(r.Agents))}
	for i, pe := range r.People {
		pe.AvatarURL = clonePtr(pe.AvatarURL)
		out.People[i] = pe
	}
	for i, a := range r.Agents {
		a.AvatarURL = clonePtr(a.AvatarURL)
		a.LastSeenAt = clonePtr(a.LastSeenAt)
		a.Capabilities = slices.Clone(a.Capabilities)
		out.Agents[i] = a
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// readDirectory reads project's people and agents in one read transaction.
// A project that does not exist has no people.
func (s *Store) readDirectory(ctx context.Context, project string) (DiscoverResult, error) {
	res := DiscoverResult{People: []Person{}, Agents: []Agent{}}
	err := s.inReadTx(ctx, func(tx *txn) error {
		rows, err := tx.stmt(ctx, stProjectPeople).QueryContext(ctx, project)
		if err != nil {
			return err
		}
		for rows.Next() {
			var pe Person
			var av sql.NullString
			if err := rows.Scan(&pe.Handle, &pe.DisplayName, &av, &pe.Color, &pe.Away); err != nil {
				rows.Close()
				return err
			}
			pe.AvatarURL = nullString(av)
			res.People = append(res.People, pe)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.stmt(ctx, stProjectAgents).QueryContext(ctx, project)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a Agent
			var av sql.NullString
			var caps string
			var seen sql.NullInt64
			if err := rows.Scan(&a.AgentID, &a.Owner, &a.Name, &av, &a.Model, &a.Client, &a.Role, &caps,
				&a.Availability, &a.TrustLevel, &seen); err != nil {
				return err
			}
			a.AvatarURL = nullString(av)
			a.LastSeenAt = nullTime(seen)
			a.Capabilities = []Capability{}
			if err := json.Unmarshal([]byte(caps), &a.Capabilities); err != nil {
				return fmt.Errorf("agent %s capabilities: %w", a.AgentID, err)
			}
			if a.Capabilities == nil {
				a.Capabilities = []Capability{}
			}
			res.Agents = append(res.Agents, a)
		}
		return rows.Err()
	})
	if err != nil {
		return DiscoverResult{}, err
	}
	return res, nil
}
