//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/spec"
)

// pyCases writes what python/sdk_client.py reads: the export's tools, each
// tool's example input with the model of its output (claim_discussion's
// also with harness 2, which its page says a claim needs), and arguments
// that break an input schema, with the pointer a refusal must name. With
// models nil the calls name no output model: bad-args makes none of them.
func pyCases(t *testing.T, sp *spec.Spec, export string, models map[string][2]string) string {
	t.Helper()
	type call struct {
		Tool         string         `json:"tool"`
		Arguments    map[string]any `json:"arguments"`
		OutputModule string         `json:"output_module,omitempty"`
		OutputClass  string         `json:"output_class,omitempty"`
		Pointer      string         `json:"pointer,omitempty"`
	}
	var calls, bad []call
	for _, tool := range sp.Tools {
		var ex map[string]any
		if err := json.Unmarshal(tool.ExampleInput.JSON, &ex); err != nil {
			t.Fatalf("%s example: %v", tool.Name, err)
		}
		m := models[tool.Name+".output.json"]
		_, module, _ := strings.Cut(m[0], ".")
		calls = append(calls, call{Tool: tool.Name, Arguments: ex, OutputModule: module, OutputClass: m[1]})
		if tool.Name == "claim_discussion" {
			withHarness := maps.Clone(ex)
			withHarness["harness"] = 2
			calls = append(calls, call{Tool: tool.Name, Arguments: withHarness, OutputModule: module, OutputClass: m[1]})
		}
		required := requiredOf(t, tool.InputSchema.Body())
		if len(required) > 0 {
			missing := maps.Clone(ex)
			delete(missing, required[0])
			bad = append(bad, call{Tool: tool.Name, Arguments: missing, Pointer: required[0]})
			wrong := maps.Clone(ex)
			wrong[required[0]] = []any{}
			bad = append(bad, call{Tool: tool.Name, Arguments: wrong, Pointer: "/" + required[0]})
			if s, ok := ex[required[0]].(string); ok {
				newline := maps.Clone(ex)
				newline[required[0]] = s + "\n"
				bad = append(bad, call{Tool: tool.Name, Arguments: newline, Pointer: "/" + required[0]})
			}
		}
	}
	bad = append(bad, call{Tool: "no_such_tool", Arguments: map[string]any{}})
	var tools []any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(export, "tools.json"))), &tools); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cases.json")
	b := mustJSON(t, map[string]any{"tools": tools, "calls": calls, "bad_args": bad})
	if err := os.WriteFile(file, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestPythonStarter certifies examples/python, a Python third party's
// third step: the starter, on the official MCP Python SDK, serves the
// export as it is, and certifyStarter's run shows discover_team_agents
// certified. Then the SDK client sends prickled and the starter the same
// arguments that break an input schema, and a call of a tool that is not
// served: the starter answers each as prickled does.
func TestPythonStarter(t *testing.T) {
	e := needPython(t)
	export, sp := exportPages(t)
	starter := t.TempDir()
	copyFile(t, filepath.Join("..", "examples", "python", "server.py"), filepath.Join(starter, "server.py"))
	if err := os.Rename(export, filepath.Join(starter, "export")); err != nil {
		t.Fatal(err)
	}
	t.Logf("server.py: %d lines", starterLines(t, filepath.Join(starter, "server.py")))
	server := filepath.Join(starter, "server.py")
	certifyStarter(t, sp, "Python", starter, "exec "+e.python+" "+server)

	cases := pyCases(t, sp, filepath.Join(starter, "export"), nil)
	answers := func(url, token string) []map[string]any {
		t.Helper()
		r := run(t, e.dir, []string{"PRICKLE_RUNNER_TOKEN=" + token}, e.python, filepath.Join(e.dir, "sdk_client.py"),
			"bad-args", "--url", url, "--cases", cases)
		var out struct{ Answers []map[string]any }
		if err := json.Unmarshal(r.stdout, &out); r.code != 0 || err != nil {
			t.Fatalf("sdk_client.py bad-args %s: %v\n%v", url, err, r)
		}
		return out.Answers
	}
	p := startPrickled(t)
	want := answers(p.mcpURL(), p.token(t, "runner", "maya/builder"))
	fixture, err := filepath.Abs(filepath.Join("testdata", "world.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := answers(startStarter(t, e.python, server, fixture), fixtureRunnerToken)
	var sent struct {
		Bad []struct{ Pointer string } `json:"bad_args"`
	}
	if err := json.Unmarshal([]byte(readFile(t, cases)), &sent); err != nil {
		t.Fatal(err)
	}
	bad := sent.Bad
	if len(got) != len(want) || len(got) != len(bad) || len(got) < 4 {
		t.Fatalf("%d answers from the starter, %d from prickled, for %d calls", len(got), len(want), len(bad))
	}
	for i, w := range want {
		g := got[i]
		call := fmt.Sprintf("%v %v", w["tool"], mustJSON(t, w["arguments"]))
		if fmt.Sprint(g["error"], g["refused"]) != fmt.Sprint(w["error"], w["refused"]) {
			t.Errorf("%s: the starter answers error %v, refusal %v; prickled error %v, refusal %v", call, g["error"], g["refused"], w["error"], w["refused"])
		}
		for who, a := range map[string]map[string]any{"starter": g, "prickled": w} {
			if a["refused"] == nil {
				continue
			}
			if a["refused"] != "invalid_arguments" || a["text_has_code"] != true || a["structured"] != false ||
				!strings.Contains(fmt.Sprint(a["text"]), bad[i].Pointer) {
				t.Errorf("%s: the %s's refusal is not invalid_arguments naming %s: %v", call, who, bad[i].Pointer, a)
			}
		}
		t.Logf("%s: %v", call, map[bool]string{true: fmt.Sprintf("refused %v", w["refused"]), false: fmt.Sprintf("JSON-RPC error %v", w["error"])}[w["refused"] != nil])
	}
}

// startStarter starts the Python starter on a free port with the world of
// fixture, and returns its MCP URL once /healthz answers; SIGTERM stops it
// when the test ends.
func startStarter(t *testing.T, python, server, fixture string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(python, server)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PRICKLE_ADDR="+addr, "PRICKLE_FIXTURE="+fixture)
	var log testkit.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
	})
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return "http://" + addr + "/mcp"
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the starter did not answer /healthz within %v (%v):\n%s", startTimeout, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pySession is one identity's part of python/sdk_client.py's summary.
type pySession struct {
	Who      string
	Protocol string
	Tools    []any
	Calls    []struct {
		Tool        string         `json:"tool"`
		Arguments   map[string]any `json:"arguments"`
		OK          bool           `json:"ok"`
		TextMirrors bool           `json:"text_mirrors"`
		ParsedAs    string         `json:"parsed_as"`
		Refused     string         `json:"refused"`
		TextHasCode bool           `json:"text_has_code"`
		Structured  bool           `json:"structured"`
		Text        string         `json:"text"`
	}
}

// TestPythonSDKClient drives prickled with the official MCP Python SDK's
// client, over streamable HTTP and over stdio (prickled --stdio with
// PRICKLE_TOKEN), as the runner and as the agent: the tools it lists are
// tools.json's; every tool's example (claim_discussion's also with
// harness 2) is answered, each success's structuredContent parsed by the
// pydantic model of the tool's output, each refusal an isError result with
// its code (_meta.code and the text's prefix) and no structuredContent.
func TestPythonSDKClient(t *testing.T) {
	e := needPython(t)
	export, sp := exportPages(t)
	pkg, models := pydanticModels(t, e, filepath.Join(export, "schemas"), t.TempDir(), "models")
	cases := pyCases(t, sp, export, models)
	var tools []any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(export, "tools.json"))), &tools); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, r result, transport string) {
		t.Helper()
		var out struct{ Sessions []pySession }
		if err := json.Unmarshal(r.stdout, &out); r.code != 0 || err != nil || len(out.Sessions) != 2 {
			t.Fatalf("sdk_client.py %s: %v\n%v", transport, err, r)
		}
		succeeded := map[string]bool{}
		refused := map[string]string{}
		for _, s := range out.Sessions {
			if mustJSON(t, s.Tools) != mustJSON(t, tools) {
				t.Errorf("%s: tools/list is not tools.json:\n%s", s.Who, mustJSON(t, s.Tools))
			}
			for _, c := range s.Calls {
				call := fmt.Sprintf("%s: %s %s", s.Who, c.Tool, mustJSON(t, c.Arguments))
				switch {
				case c.OK && (c.ParsedAs == "" || !c.TextMirrors):
					t.Errorf("%s: a success not parsed by its model, or whose text is not its structuredContent: %+v", call, c)
				case c.OK:
					succeeded[c.Tool] = true
				case c.Refused == "" || !c.TextHasCode || c.Structured:
					t.Errorf("%s: a refusal not as documented (isError, _meta.code, text \"CODE: ...\", no structuredContent): %+v", call, c)
				default:
					refused[s.Who+" "+c.Tool+" "+mustJSON(t, c.Arguments)] = c.Refused
				}
			}
			t.Logf("%s over %s (protocol %s): %d calls", s.Who, transport, s.Protocol, len(s.Calls))
		}
		for _, tool := range sp.Tools {
			if !succeeded[tool.Name] {
				t.Errorf("no call of %s succeeded", tool.Name)
			}
		}
		// The refusals the pages promise: claim_discussion's example has no
		// harness (conformance/examples.md), and only runners claim.
		for call, code := range map[string]string{
			"runner claim_discussion " + mustJSON(t, exampleOf(t, sp, "claim_discussion")): "harness_outdated",
			"agent claim_task " + mustJSON(t, exampleOf(t, sp, "claim_task")):              "not_runner",
		} {
			if refused[call] != code {
				t.Errorf("%s: refused %q, want %s", call, refused[call], code)
			}
		}
		t.Logf("refusals read: %v", refused)
	}
	script := filepath.Join(e.dir, "sdk_client.py")
	t.Run("http", func(t *testing.T) {
		p := startPrickled(t)
		p.wantCalls = true
		env := []string{"PRICKLE_RUNNER_TOKEN=" + p.token(t, "runner", "maya/builder"), "PRICKLE_AGENT_TOKEN=" + p.token(t, "agent", "maya/builder")}
		check(t, run(t, e.dir, env, e.python, script, "http", "--url", p.mcpURL(), "--cases", cases, "--models", pkg), "http")
	})
	t.Run("stdio", func(t *testing.T) {
		fixture, _ := filepath.Abs(filepath.Join("testdata", "world.json"))
		env := []string{"PRICKLE_RUNNER_TOKEN=" + fixtureRunnerToken, "PRICKLE_AGENT_TOKEN=" + fixtureAgentToken}
		check(t, run(t, e.dir, env, e.python, script, "stdio", "--prickled", prickledBin(t), "--fixture", fixture,
			"--cases", cases, "--models", pkg), "stdio")
	})
}

// exampleOf is a tool's documented example input.
func exampleOf(t *testing.T, sp *spec.Spec, tool string) map[string]any {
	t.Helper()
	for _, tl := range sp.Tools {
		if tl.Name == tool && tl.ExampleInput != nil {
			var ex map[string]any
			if err := json.Unmarshal(tl.ExampleInput.JSON, &ex); err != nil {
				t.Fatal(err)
			}
			return ex
		}
	}
	t.Fatalf("%s has no example input", tool)
	return nil
}
