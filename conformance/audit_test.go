package conformance

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/prickle-dev/prickle/conformance/internal/derive"
	"github.com/prickle-dev/prickle/conformance/internal/explore"
	"github.com/prickle-dev/prickle/spec"
)

// The reference profile checks only what server/README.md documents: these
// tests read the codes and decisions the suite demands from where the
// suite defines them (the scripts' `refused` lines and `# decisions:`
// headers, the model's rules) and the README's decision paragraphs, and
// fail when the two drift apart.

const serverREADME = "../server/README.md"

// readmeDecisions returns the paragraphs of server/README.md's
// "Decisions" section, and the items of its lists, by their bold title
// ("claim_task", "Who may call what").
func readmeDecisions(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile(serverREADME)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "\n## Decisions\n")
	if !ok {
		t.Fatalf("%s has no Decisions section", serverREADME)
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	titleRe := regexp.MustCompile(`^\*\*([^*]+?)\.?\*\*`)
	out := map[string]string{}
	for _, para := range strings.Split(strings.ReplaceAll(after, "\n- **", "\n\n**"), "\n\n") {
		para = strings.TrimSpace(para)
		if m := titleRe.FindStringSubmatch(para); m != nil {
			out[m[1]] = para
		}
	}
	if len(out) < 5 {
		t.Fatalf("%s: found only %d decision paragraphs", serverREADME, len(out))
	}
	return out
}

func names(para string, code string) bool {
	return strings.Contains(para, "`"+code+"`")
}

// TestModelRulesAreDocumented: every rule of the exploration model names a
// README decision that exists and names the rule's refusal code; every
// decision the model cites exists.
func TestModelRulesAreDocumented(t *testing.T) {
	decisions := readmeDecisions(t)
	for _, title := range explore.Decisions() {
		if decisions[title] == "" {
			t.Errorf("the model cites the decision %q, which server/README.md does not have", title)
		}
	}
	for _, r := range explore.Rules() {
		para := decisions[r.Decision]
		switch {
		case para == "":
			t.Errorf("rule %q: decision %q is not in server/README.md", r.What, r.Decision)
		case !names(para, r.Code):
			t.Errorf("rule %q: the reference profile demands %s, which server/README.md's %q paragraph does not name", r.What, r.Code, r.Decision)
		}
	}
}

// TestModelSentencesExist: every sentence the model cites is in the
// bundled spec.
func TestModelSentencesExist(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	if stale := explore.StaleCitations(sp); len(stale) > 0 {
		t.Errorf("the model cites sentences the pages do not have: %v", stale)
	}
}

var refusedRe = regexp.MustCompile(`^(?:\[[a-z]+\]\s+)?!?\s*refused\s+(\S+)`)

// TestScriptsNameTheirDecisions: a script whose checks go beyond the
// pages (a refusal code, anything [reference]) names the README decisions
// they come from ("# decisions: A; B"), each decision exists, and every
// code the script demands is named by one of them.
func TestScriptsNameTheirDecisions(t *testing.T) {
	decisions := readmeDecisions(t)
	scripts, err := handWritten()
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	derived, _ := derive.Scripts(sp)
	for _, s := range append(scripts, derived...) {
		a := txtar.Parse(s.Archive)
		var named []string
		var codes []string
		reference, http401 := false, false
		sc := bufio.NewScanner(bytes.NewReader(a.Comment))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if h, ok := strings.CutPrefix(line, "# decisions:"); ok {
				for _, d := range strings.Split(h, ";") {
					named = append(named, strings.TrimSpace(d))
				}
				continue
			}
			if strings.HasPrefix(line, "#") {
				continue
			}
			if strings.HasPrefix(line, "[reference]") {
				reference = true
			}
			if strings.Contains(line, "HTTP 401") {
				http401 = true
			}
			if m := refusedRe.FindStringSubmatch(line); m != nil {
				codes = append(codes, strings.Split(m[1], "|")...)
			}
		}
		if (reference || len(codes) > 0) && len(named) == 0 {
			t.Errorf("%s: checks the reference server's choices but names no decision (# decisions: TITLE; TITLE)", s.Name)
		}
		for _, d := range named {
			if decisions[d] == "" {
				t.Errorf("%s: names the decision %q, which server/README.md does not have", s.Name, d)
			}
		}
		if http401 && !slices.Contains(named, "Identity and tokens") {
			t.Errorf("%s: expects HTTP 401 but does not name the decision \"Identity and tokens\"", s.Name)
		}
		for _, c := range codes {
			if !slices.ContainsFunc(named, func(d string) bool { return names(decisions[d], c) }) {
				t.Errorf("%s: demands the refusal code %s, which none of its decisions (%s) names in server/README.md", s.Name, c, strings.Join(named, "; "))
			}
		}
	}
}
