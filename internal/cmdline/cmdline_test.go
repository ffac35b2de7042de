package cmdline

import (
	"bytes"
	"flag"
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
