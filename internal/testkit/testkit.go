// Package testkit holds small helpers that the project's tests share:
// a goroutine-safe buffer for process output and logs, a bearer-token
// RoundTripper, a fake clock, and building a command of this module into a
// test folder.
//
// Only tests import it, and it imports nothing of this module.
package testkit

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer that concurrent writers may share.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Bearer is an http.RoundTripper that sends Token as a bearer token.
type Bearer struct {
	Token string
	Base  http.RoundTripper // http.DefaultTransport when nil
}

// RoundTrip adds the Authorization header to a clone of r.
func (t Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.Token)
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// GoBuild builds the package pkg (an import path of this module) into dir,
// with the race detector when race is set, and returns the binary's path.
func GoBuild(dir, pkg string, race bool) (string, error) {
	bin := filepath.Join(dir, path.Base(pkg))
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, pkg)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Clock is a fake clock for the injectable Now of the server and the store:
// it stands still until Advance moves it. Safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// FreeToolName returns name, or the first of name_2, name_3, … that taken
// reports free. A test that adds its own page to the bundled ones takes
// its tool's name from it, with taken reporting the names the bundled
// pages use: were the name fixed, a real page arriving under it would make
// two pages document one tool, and the test fail for it.
func FreeToolName(name string, taken func(string) bool) string {
	free := name
	for i := 2; taken(free); i++ {
		free = name + "_" + strconv.Itoa(i)
	}
	return free
}

// NamesTool reports whether a line of a conformance run's output (what is
// missing, say) names the tool: as a word, before a sentence ID's "#", or
// with "'s".
func NamesTool(line, tool string) bool {
	line = " " + line
	for _, form := range []string{" " + tool + " ", " " + tool + "#", " " + tool + "'s "} {
		if strings.Contains(line, form) {
			return true
		}
	}
	return false
}

// FirstDiff describes the first line where got and want differ.
func FirstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b || i >= len(g) || i >= len(w) {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + a + "\nwant: " + b
		}
	}
	return "(no line differs)"
}

// PageFences returns every JSON fence of the repository's pages (the
// bundled reference, testdata's pages and grown pages), root being the
// repository's root as seen from the test.
func PageFences(t testing.TB, root string) []string {
	t.Helper()
	var docs []string
	for _, glob := range []string{"spec/reference/*.md", "testdata/pages/*/*.md", "testdata/pages/*/*/*.md", "testdata/grow/*.md"} {
		files, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range jsonFence.FindAllStringSubmatch(string(b), -1) {
				docs = append(docs, m[1])
			}
		}
	}
	if len(docs) < 50 {
		t.Fatalf("only %d JSON fences under %s", len(docs), root)
	}
	return docs
}

var jsonFence = regexp.MustCompile("(?s)```json\n(.*?)```")
