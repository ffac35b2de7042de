package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/explore"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/cireport"
)

// Refusal evidence: a refusal a page states is certified only once the
// run has seen the server refuse a call for that reason alone, in every
// situation in which it applies (another owner's private room as well as
// a general room). A refusal that another reason would explain as well
// shows nothing: a server that accepts a message of any private room
// still refuses one that did not wake its agent. Exploration aims calls
// at each situation and counts, by the model, the refusals no other
// reason explains (report.Exploration.Provoked); which refusals the pages
// state is the model's to say (explore.PageRefusals).

// refusalEvidence is, for each refusal a page states, how often
// exploration (x) provoked it alone in a run of profile.
func refusalEvidence(profile Profile, x *report.Exploration) ([]report.RefusalEvidence, error) {
	exempt, err := unprovokable()
	if err != nil {
		return nil, err
	}
	var out []report.RefusalEvidence
	for _, r := range explore.PageRefusals() {
		out = append(out, report.RefusalEvidence{Tool: r.Tool, Code: r.Code, Sentence: r.Sentence, What: r.What, Situation: r.Situation,
			Provoked: x.Provoked[r.Key()], Untestable: exempt[unprovokableKey{r.Key(), profile}]})
	}
	return out, nil
}

// refusalGaps names the refusals a page states that ev shows were never
// provoked alone: each keeps the run from certifying.
func refusalGaps(ev []report.RefusalEvidence) []gap {
	never := map[string][]string{} // by the tool whose page states it
	var tools []string
	for _, e := range ev {
		if e.Provoked == 0 && e.Untestable == "" {
			// The page that states a refusal owns its gap: provoking it
			// may need that tool (a discussion credential refused by
			// discover_team_agents needs claim_discussion).
			t := sentenceTool(e.Sentence)
			if t == "" {
				t = e.Tool
			}
			if never[t] == nil {
				tools = append(tools, t)
			}
			never[t] = append(never[t], e.Name())
		}
	}
	var out []gap
	for _, t := range tools {
		out = append(out, gap{t, fmt.Sprintf("%d refusals stated on %s's page were never provoked alone (by a call no other reason refuses), so the run cannot tell that the server enforces them: %s",
			len(never[t]), t, strings.Join(never[t], "; "))})
	}
	return out
}

// unprovokableHeading opens the section of untestable.md that lists the
// refusals no call can provoke alone.
const unprovokableHeading = "## Refusals no call can provoke alone"

type unprovokableKey struct {
	key     string
	profile Profile
}

var unprovokableRe = regexp.MustCompile("^- `([^`]+)` in (core|reference): (.+)$")

// unprovokable reads untestable.md's section of refusals no call can
// provoke alone: "- `KEY` in PROFILE: reason", KEY a refusal's Name.
func unprovokable() (map[unprovokableKey]string, error) {
	known := map[string]bool{}
	for _, r := range explore.PageRefusals() {
		known[r.Key()] = true
	}
	out := map[unprovokableKey]string{}
	sc := bufio.NewScanner(bytes.NewReader(untestableMD))
	in := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == unprovokableHeading
			continue
		}
		if !in || !strings.HasPrefix(line, "- ") {
			continue
		}
		m := unprovokableRe.FindStringSubmatch(line)
		switch {
		case m == nil:
			return nil, fmt.Errorf("untestable.md:%d: want \"- `TOOL CODE (SENTENCE)[: SITUATION]` in PROFILE: reason\", got %q", n, line)
		case !known[m[1]]:
			return nil, fmt.Errorf("untestable.md:%d: %q is no refusal a page states (was the model or a sentence edited?)", n, m[1])
		}
		out[unprovokableKey{m[1], Profile(m[2])}] = m[3]
	}
	return out, sc.Err()
}

// RefusalSummary is one line on the refusal evidence: how many of the
// refusals the pages state the run provoked alone, and the fewest
// provocations of one; "" when exploration did not run.
func (r *Report) RefusalSummary() string {
	if len(r.Refusals) == 0 {
		return ""
	}
	provoked, untestable, fewest := 0, 0, -1
	var which string
	for _, e := range r.Refusals {
		switch {
		case e.Untestable != "" && e.Provoked == 0:
			untestable++
			continue
		case e.Provoked > 0:
			provoked++
		}
		if fewest < 0 || e.Provoked < fewest {
			fewest, which = e.Provoked, e.Name()
		}
	}
	line := fmt.Sprintf("refusals the pages state, provoked alone: %d of %d", provoked, len(r.Refusals)-untestable)
	if untestable > 0 {
		line += fmt.Sprintf(" (%d more cannot be in this profile: untestable.md)", untestable)
	}
	if fewest >= 0 {
		line += fmt.Sprintf("; fewest %d, %s", fewest, which)
	}
	return line
}

// writeRefusalsMarkdown writes the refusal evidence as a folded table.
func (r *Report) writeRefusalsMarkdown(b *strings.Builder) {
	if len(r.Refusals) == 0 {
		return
	}
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n", r.RefusalSummary())
	var rows [][]string
	for _, e := range r.Refusals {
		n := strconv.Itoa(e.Provoked)
		switch {
		case e.Provoked == 0 && e.Untestable != "":
			n = "0 (cannot be: untestable.md)"
		case e.Provoked == 0:
			n = "**never**"
		}
		rows = append(rows, []string{e.Tool, cireport.Code(e.Code), cireport.Code(e.Sentence), e.Situation, n})
	}
	cireport.Table(b, []string{"Tool", "Code", "Sentence", "Situation", "Provoked alone"}, rows)
	b.WriteString("\n</details>\n")
}
