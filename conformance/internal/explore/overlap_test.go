package explore

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec"
)

// prickledProc starts a prickled binary per world, on a database file.
type prickledProc struct{ bin string }

func (prickledProc) Skip(*suite.Script) string { return "" }
func (p prickledProc) String() string          { return p.bin }

func (p prickledProc) Start(ctx context.Context, _ *suite.Script, fixtureFile, dir string) (*suite.Instance, error) {
	w, _, err := readWorld(fixtureFile)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(p.bin, "--addr", addr, "--db", filepath.Join(dir, "db.sqlite"), "--fixture", fixtureFile)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("%s did not answer /healthz", p.bin)
		}
	}
	return &suite.Instance{Endpoint: "http://" + addr + "/mcp", Tokens: w.Tokens(), Stop: stop}, nil
}

// TestOverlapFraction measures, for conformance/README.md, the fraction
// of concurrent groups whose calls overlap on the wire, by how they are
// sent: PRICKLE_OVERLAP names a prickled binary (run on a database file);
// PRICKLE_OVERLAP_LABEL labels the rows (quiet, loaded).
func TestOverlapFraction(t *testing.T) {
	bin := os.Getenv("PRICKLE_OVERLAP")
	if bin == "" {
		t.Skip("a measurement: set PRICKLE_OVERLAP=/path/to/prickled")
	}
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name  string
		group int
		cold  bool
		noKA  bool
	}
	variants := []variant{
		{"cold (sessions opened after the barrier)", 8, true, false},
		{"warm, keep-alive (the sender)", 2, false, false},
		{"warm, keep-alive (the sender)", 4, false, false},
		{"warm, keep-alive (the sender)", 8, false, false},
		{"warm, keep-alive (the sender)", 16, false, false},
		{"warm, keep-alive (the sender)", 32, false, false},
		{"warm, a connection per call", 8, false, true},
		{"warm, a connection per call", 16, false, true},
	}
	if v := os.Getenv("PRICKLE_OVERLAP_ONLY"); v != "" {
		variants = variants[:0:0]
		for _, g := range strings.Split(v, ",") {
			var n int
			fmt.Sscan(g, &n)
			variants = append(variants, variant{"warm, keep-alive (the sender)", n, false, false})
		}
	}
	label := os.Getenv("PRICKLE_OVERLAP_LABEL")
	for _, v := range variants {
		e := &explorer{c: &Config{Target: prickledProc{bin}, Index: wire.NewIndex(sp), Profile: suite.Reference, Parallel: 2, Timeout: 2 * time.Minute}, dir: t.TempDir(),
			mode: sendMode{cold: v.cold, noKeepAlive: v.noKA, noCheck: true}}
		var seqs []*exploreSequence
		next := 0
		for i, c := range RaceClasses {
			for len(seqs) < 3*(i+1) {
				if s := genRaceSequence(1, next, c, raceTries, v.group); s != nil {
					seqs = append(seqs, s)
				}
				next++
			}
		}
		start := time.Now()
		runs, _ := e.runAll(context.Background(), "overlap", seqs, 2)
		tally := raceTally{}
		for _, x := range runs {
			if x != nil {
				tally.merge(x.races)
			}
		}
		g, o := 0, 0
		for _, c := range tally.counts() {
			g += c.Groups
			o += c.Overlapped
		}
		fmt.Printf("| %s | %s | %d | %d | %d | %.0f%% | %.1fs |\n", label, v.name, v.group, g, o, 100*float64(o)/float64(max(g, 1)), time.Since(start).Seconds())
	}
}
