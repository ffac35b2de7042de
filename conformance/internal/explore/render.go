package explore

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/spec/world"
)

// Rendering a sequence as a script.

var varRe = regexp.MustCompile(`\$([A-Z]+)([0-9]+)\b`)

// renderPrincipal writes who a step calls as.
func renderPrincipal(p principal) string {
	switch p.kind {
	case "agent", "runner":
		return p.kind + ":" + p.id
	case "cred":
		return fmt.Sprintf("$T%d", p.step)
	case "none":
		return "none"
	}
	return "not-a-token-anyone-issued"
}

// onReplica is " -replica R", the flag that sends cmd's call to the
// replica it went to, against two replicas or more; "" against one.
func onReplica(cmd *command, replicas int) string {
	if replicas < 2 {
		return ""
	}
	return fmt.Sprintf(" -replica %d", cmd.slot%replicas)
}

// renderScript writes the run as a testscript file with its fixture: each
// call with what the model demanded of it (and, against replicas, the
// replica it went to), and at the failing step the checks that failed.
func renderScript(header []string, w *world.World, x *exploreRun, profile suite.Profile, replicas int) string {
	var out []renderedStep
	idx := map[int]int{} // step -> position in out
	for i, st := range x.steps {
		if ls, ok := groupLines(x, i, replicas); ok {
			if len(ls) > 0 {
				idx[i] = len(out)
				out = append(out, renderedStep{lines: ls})
			}
			continue
		}
		if st.skipped || st.exp == nil {
			continue
		}
		idx[i] = len(out)
		out = append(out, renderedStep{lines: stepLines(x, i, profile, replicas)})
	}
	addSaves(out, idx, x)
	return writeScript(header, out, w)
}

// renderedStep is a step of a script as rendered: its lines (the call
// first), and the saves of the variables later lines use, which go right
// after the call.
type renderedStep struct {
	lines []string
	saves []string
}

// stepLines renders step i of x, one call: the call, then the check of
// what the model demanded of it, or at the failing step the checks that
// failed.
func stepLines(x *exploreRun, i int, profile suite.Profile, replicas int) []string {
	st := x.steps[i]
	var ls []string
	args := script.Quote(script.JSON(st.cmd.args))
	as := renderPrincipal(st.cmd.p) + onReplica(st.cmd, replicas)
	e, a := st.exp, st.ans
	switch {
	case e.deny && profile == suite.Reference:
		ls = append(ls, fmt.Sprintf("! call -as %s %s %s", as, st.cmd.tool, args))
		if i != x.failAt {
			ls = append(ls, "stdout 'HTTP 401'")
		}
	case e.deny || (a != nil && a.protoErr != nil && e.protoOK):
		ls = append(ls, fmt.Sprintf("deny -as %s %s %s", as, st.cmd.tool, args))
	default:
		ls = append(ls, fmt.Sprintf("call -as %s %s %s", as, st.cmd.tool, args))
		if i == x.failAt || a == nil {
			break
		}
		switch {
		case a.refused && len(e.must) > 0 && profile == suite.Reference:
			ls = append(ls, "refused "+strings.Join(e.codes(), "|"))
		case a.refused && len(e.must) > 0:
			ls = append(ls, "refused")
		case a.refused:
			ls = append(ls, fmt.Sprintf("# the pages leave this open; the server refused (%s)", a.code))
		case len(e.must) == 0 && len(e.may) == 0:
			ls = append(ls, "ok")
		default:
			ls = append(ls, "# the pages leave this open; the server granted it")
		}
	}
	if i == x.failAt {
		for _, f := range x.fails {
			ls = append(ls, "# fails: "+suite.OneLine(f.msg)+" ["+f.src+"]")
			ls = append(ls, f.lines...)
		}
	}
	return ls
}

// addSaves adds to out the saves of the variables its lines use
// ($T3: step 3's credential, $A, $CA, $NV), each to the step that gives
// it (its place in out by idx).
func addSaves(out []renderedStep, idx map[int]int, x *exploreRun) {
	saved := map[string]bool{}
	for _, r := range out {
		for _, l := range r.lines {
			for _, m := range varRe.FindAllStringSubmatch(l, -1) {
				name := m[1] + m[2]
				if saved[name] {
					continue
				}
				saved[name] = true
				var step int
				fmt.Sscan(m[2], &step)
				pos, ok := idx[step]
				if !ok {
					continue
				}
				st := x.steps[step]
				var s string
				switch m[1] {
				case "T":
					path := "execution_credential.token"
					if st.cmd.tool == "claim_discussion" {
						path = "discussion_credential.token"
					}
					s = fmt.Sprintf("save %s %s", path, name)
				case "A":
					s = "save attempt.attempt_id " + name
				case "CA":
					s = "save attempt.claimed_at " + name
				case "NV":
					s = fmt.Sprintf("save -text -redact %s %s", st.cmd.args["project"], name)
				}
				out[pos].saves = append(out[pos].saves, s)
			}
		}
	}
}

// writeScript writes the script: the header's comment lines, each step
// (its call, its saves sorted, its checks), then w as its fixture.
func writeScript(header []string, out []renderedStep, w *world.World) string {
	var b strings.Builder
	for _, h := range header {
		b.WriteString("# " + h + "\n")
	}
	for _, r := range out {
		b.WriteString("\n")
		b.WriteString(r.lines[0] + "\n")
		sort.Strings(r.saves)
		for _, s := range r.saves {
			b.WriteString(s + "\n")
		}
		for _, l := range r.lines[1:] {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n-- " + suite.FixtureFile + " --\n")
	b.Write(w.Marshal())
	return b.String()
}
