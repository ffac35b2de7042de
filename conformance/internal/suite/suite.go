// Package suite is the vocabulary the conformance suite's engines share:
// a script, the profile a run checks, the target that starts the server
// under test, and the world a run hands it. Package conformance exports
// these names as aliases; what a run reports of them is package
// conformance/report's.
package suite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/prickle-dev/prickle/spec/world"
)

// Profile selects which rules the suite checks.
type Profile string

const (
	// Core checks only what the pages say. Any conforming server passes it.
	Core Profile = "core"
	// Reference also checks the reference server's documented choices:
	// refusal codes (in _meta.code and as the "CODE: " prefix of the text),
	// no structuredContent on a refusal, the launch timeout default, the
	// harness rules (roles, lead, revise/combine), the exact tool list and
	// allowed_tools sets.
	Reference Profile = "reference"
)

// ParseProfile parses "core" or "reference".
func ParseProfile(s string) (Profile, error) {
	switch Profile(s) {
	case Core, Reference:
		return Profile(s), nil
	}
	return "", fmt.Errorf("unknown profile %q (want core or reference)", s)
}

// FixtureFile is the name of the file in a script's archive that holds the
// world the script needs. A script without one runs against the standard
// seed world (package seed).
const FixtureFile = "fixture.json"

// RefusalsDecision is the server/README.md decision that names the code of
// a refusal of invalid arguments (checked in the reference profile).
const RefusalsDecision = "Refusals"

// TimeTolerance is how far a time a server stamps may be from when the
// suite expects it (clock skew between the suite and the server, and
// rounding): `time PATH ~ D` in scripts, and exploration's checks.
const TimeTolerance = 30 * time.Second

// Script is one conformance script.
type Script struct {
	// Name identifies the script (its file name without .txtar).
	Name string
	// Summary is the script's first comment line.
	Summary string
	// Covers lists the spec sentence IDs the script tests ("# covers:").
	Covers []string
	// OwnFixture is true when the script carries its own fixture.json;
	// otherwise it runs against the standard seed world.
	OwnFixture bool
	// Derived is true for the cases produced from the spec at run time.
	Derived bool
	// Path is where the script lives, as failures cite it:
	// scripts/NAME.txtar for the embedded ones, the file for a script read
	// from a folder, "" for derived cases.
	Path string
	// Archive is the script's txtar source.
	Archive []byte
}

// Cite is how failures name the script's file.
func (s *Script) Cite() string {
	if s.Path != "" {
		return s.Path
	}
	return "derived/" + s.Name + ".txtar"
}

var coversRe = regexp.MustCompile(`^#\s*covers:\s*(.*)$`)

// ParseScript reads a script's metadata from its txtar source.
func ParseScript(name string, src []byte, derived bool) (*Script, error) {
	a := txtar.Parse(src)
	s := &Script{Name: name, Derived: derived, Archive: src}
	sc := bufio.NewScanner(bytes.NewReader(a.Comment))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := coversRe.FindStringSubmatch(line); m != nil {
			s.Covers = append(s.Covers, strings.Fields(m[1])...)
			continue
		}
		if s.Summary == "" && strings.HasPrefix(line, "#") {
			s.Summary = strings.TrimSpace(strings.TrimPrefix(line, "#"))
		}
	}
	for _, f := range a.Files {
		if f.Name == FixtureFile {
			s.OwnFixture = true
		}
	}
	if strings.TrimSpace(string(a.Comment)) == "" {
		return nil, fmt.Errorf("script %s: no commands", name)
	}
	return s, nil
}

// Target brings up the server under test for one script.
type Target interface {
	// Start starts (or reaches) a server holding the world in fixtureFile:
	// the script's own fixture, or the standard seed world. dir is a fresh
	// empty folder the server may keep its state in.
	Start(ctx context.Context, s *Script, fixtureFile, dir string) (*Instance, error)
	// Skip returns a reason when the target cannot run s, "" otherwise.
	Skip(s *Script) string
	// String describes the target for reports.
	String() string
}

// Instance is a running server for one script.
type Instance struct {
	// Endpoint is the MCP streamable HTTP endpoint (of replica 0, for a
	// deployment of replicas).
	Endpoint string
	// Replicas are, for a deployment of two or more replicas, every
	// replica's MCP endpoint in replica order (Replicas[0] is Endpoint);
	// nil for one server.
	Replicas []string
	// Tokens are the agent and runner tokens of its world.
	Tokens []world.Token
	// Stop stops it (nil: nothing to stop).
	Stop func()
	// Output, if not nil, returns what the server printed (shown when a
	// script fails).
	Output func() string
	// PID is the server's process id when the target started a process
	// (with `exec` in the command, the server itself); 0 otherwise.
	PID int
}

// Endpoints are the endpoints the calls spread over: every replica's,
// or Endpoint alone.
func (i *Instance) Endpoints() []string {
	if len(i.Replicas) > 0 {
		return i.Replicas
	}
	return []string{i.Endpoint}
}

// Indent indents every line of s by a tab, for a block inside a log.
func Indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "\t(nothing)"
	}
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// OneLine is s on one line, its runs of white space single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
