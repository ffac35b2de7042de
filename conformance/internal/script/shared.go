package script

import (
	"context"
	"slices"
	"strings"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec/world"
)

// Shared is a server that scripts run against one after the other, and
// the world it loaded: the standard seed world, materialized once.
type Shared struct {
	Inst    *suite.Instance
	Fixture []byte
	Now     time.Time
	Tokens  []world.Token
}

// RunShared runs script s in dir against sh's server instead of a server
// of its own. Only a script that RefusalsOnly accepts may: it sees the
// seed world as if alone.
func (rn *Runner) RunShared(ctx context.Context, s *suite.Script, dir string, sh *Shared) *report.Result {
	return rn.run(ctx, s, dir, sh)
}

// RefusalsOnly reports whether script s runs against the standard seed
// world and changes nothing in it on a conforming server: each of its
// calls is one it asserts must be refused (`call` followed by `refused`
// under the same condition, or `deny`), or tools/list, and its other
// commands only read the last answer. Such scripts may share one server:
// none of them sees what another did, unless the server broke a rule
// one of them checks, and then that one fails.
func RefusalsOnly(s *suite.Script) bool {
	if s.OwnFixture {
		return false
	}
	var pendingCall string // the condition of a call not yet said refused
	calling := false
	for _, line := range strings.Split(string(txtar.Parse(s.Archive).Comment), "\n") {
		cond, cmd := splitCommand(line)
		if cmd == "" {
			continue
		}
		if calling {
			if cmd != "refused" || (cond != "" && cond != pendingCall) {
				return false
			}
			calling = false
			continue
		}
		switch cmd {
		case "call":
			calling, pendingCall = true, cond
		case "deny", "tools", "stdout", "stderr", "json", "save", "eq", "time",
			"!stdout", "!stderr", "!json", "!eq", "!time":
		default: // ok, accepted, ! refused, ! call, exec and the like
			return false
		}
	}
	return !calling
}

// splitCommand returns the conditions ("[reference]") and the command
// name of a script line ("! call" is "!call"); "" for a comment or a
// blank line.
func splitCommand(line string) (cond, cmd string) {
	f := strings.Fields(line)
	for len(f) > 0 && strings.HasPrefix(f[0], "[") {
		cond += f[0]
		f = f[1:]
	}
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		return "", ""
	}
	if f[0] == "!" && len(f) > 1 {
		return cond, "!" + f[1]
	}
	return cond, f[0]
}

// CalledTools lists the tools script s calls (`call`, `deny` and `race`,
// whatever their conditions), sorted, each once.
func CalledTools(s *suite.Script) []string {
	var tools []string
	for _, line := range strings.Split(string(txtar.Parse(s.Archive).Comment), "\n") {
		_, cmd := splitCommand(line)
		switch strings.TrimPrefix(cmd, "!") {
		case "call", "deny", "race":
		default:
			continue
		}
		f := strings.Fields(line)
		for len(f) > 0 && (strings.HasPrefix(f[0], "[") || f[0] == "!") {
			f = f[1:]
		}
		f = f[1:] // the command
		for len(f) >= 2 && (f[0] == "-as" || f[0] == "-replica") {
			f = f[2:]
		}
		if len(f) > 0 && !slices.Contains(tools, f[0]) {
			tools = append(tools, f[0])
		}
	}
	slices.Sort(tools)
	return tools
}
