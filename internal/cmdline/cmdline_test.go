package cmdline

import (
	"bytes"
	"flag"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args       []string
		positional bool
		code       int
		ok         bool
		stderr     string
	}{
		{[]string{"-v"}, false, ExitOK, true, ""},
		{[]string{"-h"}, false, ExitOK, false, "Usage of tool"},
		{[]string{"-nope"}, false, ExitUsage, false, "flag provided but not defined: -nope"},
		{[]string{"-v", "extra"}, false, ExitUsage, false, `tool: unexpected argument "extra"`},
		{[]string{"-v", "extra"}, true, ExitOK, true, ""},
	} {
		var out bytes.Buffer
		fs := flag.NewFlagSet("tool", flag.ContinueOnError)
		fs.SetOutput(&out)
		fs.Bool("v", false, "verbose")
		code, ok := Parse(fs, c.args, c.positional)
		if code != c.code || ok != c.ok || !strings.Contains(out.String(), c.stderr) || (c.stderr == "" && out.Len() > 0) {
			t.Errorf("Parse(%q, %v) = %d, %v, output %q; want %d, %v, output with %q", c.args, c.positional, code, ok, out.String(), c.code, c.ok, c.stderr)
		}
		// A bad command line gets its reason and the way to the flags,
		// not the whole usage.
		if code == ExitUsage && (strings.Contains(out.String(), "verbose") || !strings.HasSuffix(out.String(), "run 'tool -h' for its flags\n")) {
			t.Errorf("Parse(%q): output %q, want the reason and a pointer to -h only", c.args, out.String())
		}
	}
}

func TestVersionOf(t *testing.T) {
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Path: "github.com/prickle-dev/prickle", Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Path: "example.com/user", Version: "v9.0.0"},
			Deps: []*debug.Module{{Path: "github.com/prickle-dev/prickle", Version: "v1.4.0"}}}, "v1.4.0"},
		{debug.BuildInfo{Main: debug.Module{Path: "github.com/prickle-dev/prickle", Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "0123456789ab+dirty"},
		{debug.BuildInfo{Main: debug.Module{Path: "github.com/prickle-dev/prickle", Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "abc"},
		{debug.BuildInfo{Main: debug.Module{Path: "github.com/prickle-dev/prickle", Version: "(devel)"}}, "devel"},
	} {
		if got := versionOf(&c.bi); got != c.want {
			t.Errorf("versionOf(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
	if Version() == "" {
		t.Error("empty version")
	}
}

func TestMCPEndpoint(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/mcp", ""},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/mcp", ""},
		{"https://example.com/custom/mcp", "https://example.com/custom/mcp", ""},
		{"127.0.0.1:8080", "", "not an http(s) URL"},
		{"ftp://host", "", "not an http(s) URL"},
	} {
		got, err := MCPEndpoint(c.in)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("MCPEndpoint(%q) = %q, %v; want %q, %q", c.in, got, err, c.want, c.err)
		}
	}
}
