package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/prickle-dev/prickle/api"
)

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
//
// The answer is the tool's output as the generated api package types it:
// the people by handle, the agents by agent id, every value one the
// output schema documents (a value the database holds that it does not,
// such as an unknown availability, is an error, never an answer).
func (s *Store) DiscoverTeamAgents(ctx context.Context, p *Principal, project string) (api.DiscoverTeamAgentsOutput, error) {
	if p == nil {
		return api.DiscoverTeamAgentsOutput{}, refuse(CodeUnauthenticated, "no caller identity")
	}
	notVisible := refuse(CodeProjectNotVisible, "the project does not exist or you cannot see it")
	if p.Scope.Project != "" && p.Scope.Project != project {
		return api.DiscoverTeamAgentsOutput{}, notVisible
	}
	projects, err := s.projectsOf(ctx, p.Owner)
	if err != nil {
		return api.DiscoverTeamAgentsOutput{}, opError("discover team agents", err)
	}
	if !projects[project] {
		return api.DiscoverTeamAgentsOutput{}, notVisible
	}
	d, ok, gen := s.dir.get(project)
	if !ok {
		var err error
		if d, err = s.readDirectory(ctx, project); err != nil {
			return api.DiscoverTeamAgentsOutput{}, opError("discover team agents", err)
		}
		if len(d.People) > 0 { // only projects that exist and have members
			s.dir.put(project, d, gen)
		}
	}
	// The caller sees the project if its agent's owner is a member.
	if !slices.ContainsFunc(d.People, func(pe api.DiscoverTeamAgentsOutputPerson) bool { return pe.Handle == p.Owner }) {
		return api.DiscoverTeamAgentsOutput{}, notVisible
	}
	return cloneDirectory(d), nil
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

// cloneDirectory returns a deep copy of d, so that callers never share a
// cached value.
func cloneDirectory(d api.DiscoverTeamAgentsOutput) api.DiscoverTeamAgentsOutput {
	out := api.DiscoverTeamAgentsOutput{People: slices.Clone(d.People), Agents: slices.Clone(d.Agents)}
	for i := range out.People {
		out.People[i].AvatarURL = clonePtr(out.People[i].AvatarURL)
	}
	for i := range out.Agents {
		a := &out.Agents[i]
		a.AvatarURL = clonePtr(a.AvatarURL)
		a.LastSeenAt = clonePtr(a.LastSeenAt)
		a.Capabilities = slices.Clone(a.Capabilities)
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
func (s *Store) readDirectory(ctx context.Context, project string) (api.DiscoverTeamAgentsOutput, error) {
	var d api.DiscoverTeamAgentsOutput
	err := s.inReadTx(ctx, func(tx *txn) error {
		var err error
		if d.People, err = readPeople(ctx, tx, project); err != nil {
			return err
		}
		d.Agents, err = readAgents(ctx, tx, project)
		return err
	})
	if err != nil {
		return api.DiscoverTeamAgentsOutput{}, err
	}
	return d, nil
}

// readPeople reads the members of project, by handle.
func readPeople(ctx context.Context, tx *txn, project string) ([]api.DiscoverTeamAgentsOutputPerson, error) {
	rows, err := tx.stmt(ctx, stProjectPeople).QueryContext(ctx, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var people []api.DiscoverTeamAgentsOutputPerson
	for rows.Next() {
		var pe api.DiscoverTeamAgentsOutputPerson
		var av sql.NullString
		if err := rows.Scan(&pe.Handle, &pe.DisplayName, &av, &pe.Color, &pe.Away); err != nil {
			return nil, err
		}
		pe.AvatarURL = nullString(av)
		people = append(people, pe)
	}
	return people, rows.Err()
}

// readAgents reads the agents of project's members, by agent id. Their
// capabilities are stored as the world gave them (a JSON array of
// world.Capability), which is the output's shape too.
func readAgents(ctx context.Context, tx *txn, project string) ([]api.DiscoverTeamAgentsOutputAgent, error) {
	rows, err := tx.stmt(ctx, stProjectAgents).QueryContext(ctx, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var agents []api.DiscoverTeamAgentsOutputAgent
	for rows.Next() {
		var a api.DiscoverTeamAgentsOutputAgent
		var av sql.NullString
		var caps string
		var seen sql.NullInt64
		if err := rows.Scan(&a.AgentID, &a.Owner, &a.Name, &av, &a.Model, &a.Client, &a.Role, &caps,
			&a.Availability, &a.TrustLevel, &seen); err != nil {
			return nil, err
		}
		a.AvatarURL = nullString(av)
		a.LastSeenAt = nullTime(seen)
		if err := json.Unmarshal([]byte(caps), &a.Capabilities); err != nil {
			return nil, fmt.Errorf("agent %s capabilities: %w", a.AgentID, err)
		}
		if err := checkAgentEnums(a); err != nil {
			return nil, err
		}
		agents = append(agents, a)
	}
	return agents, rows.Err()
}

// checkAgentEnums refuses an agent whose availability, trust level or
// capability kind is not one the output schema documents: bad data, which
// is never sent.
func checkAgentEnums(a api.DiscoverTeamAgentsOutputAgent) error {
	bad := func(what, v string) error {
		return fmt.Errorf("agent %s: %s %q is not one of the documented values", a.AgentID, what, v)
	}
	if !a.Availability.Valid() {
		return bad("availability", string(a.Availability))
	}
	if !a.TrustLevel.Valid() {
		return bad("trust level", string(a.TrustLevel))
	}
	for _, c := range a.Capabilities {
		if !c.Kind.Valid() {
			return bad("capability kind", string(c.Kind))
		}
	}
	return nil
}
