package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"
)

// Accounting: where the server under test spends CPU per call that the
// bare baseline does not. Both servers are profiled (CPU, net/http/pprof)
// over the measured phase of every run of a scenario; each sample is
// charged to one cause (Causes), and the causes' CPU is divided by the
// calls made. A profile says where one server's time goes; two of them,
// charged to the same causes, say where the difference goes.

// Cause is one line of the accounting: the CPU of every sample with a
// frame that Frames matches, unless an earlier cause took the sample.
type Cause struct {
	Name   string
	Frames *regexp.Regexp
}

// Causes are the accounting's lines, in the order a sample is charged:
// the first cause with a frame anywhere on the sample's stack takes it.
// The order puts what a call does (the store, validation, the log line)
// before the layers it runs in (the MCP SDK, net/http), so that a
// statement run under the SDK's handler is charged to the statement, and
// the runtime's own work (garbage collection, yields) first of all.
var Causes = []Cause{
	{"GC (background marking, sweeping, assists)", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge|gcAssistAlloc|gcStart)$`)},
	{"yields (runtime.Gosched)", regexp.MustCompile(`^runtime\.gosched_m$`)},
	// A growth is charged to it, not to the frame that needed the room:
	// the MCP SDK runs each call on a new goroutine, whose stack grows.
	{"stack growth", regexp.MustCompile(`^runtime\.(newstack|copystack)$`)},
	{"token check", regexp.MustCompile(`^github\.com/prickle-dev/prickle/server(/store)?\.\(\*(Server|Store)\)\.(verify|authorize|Authenticate|AuthenticateHash|lookupToken)$`)},
	// The writer's begin returns its commit as a closure (begin.funcN).
	{"SQLite commit and WAL", regexp.MustCompile(`^github\.com/prickle-dev/prickle/server/store\.\(\*writer\)\.(begin\.func\d+|commit\w*)$|^database/sql\.\(\*Tx\)\.Commit$|^modernc\.org/sqlite/lib\._sqlite3(WalFrames|PagerCommitPhaseOne)$`)},
	{"SQLite begin", regexp.MustCompile(`^github\.com/prickle-dev/prickle/server/store\.\(\*writer\)\.begin$|^database/sql\.\(\*(DB|Conn)\)\.BeginTx$`)},
	{"SQLite statements", regexp.MustCompile(`^modernc\.org/(sqlite|libc)|^database/sql\.|^github\.com/prickle-dev/prickle/server/store\.`)},
	{"validation", regexp.MustCompile(`^github\.com/prickle-dev/prickle/(rt\.(Validate|\(\*Validator\)|\(\*Checker\)|\(\*Pattern\))|api\.check)`)},
	{"arguments and results (JSON)", regexp.MustCompile(`^github\.com/prickle-dev/prickle/rt\.(Unmarshal|MarshalJSON|Marshal)`)},
	{"log line", regexp.MustCompile(`^log/slog\.|^github\.com/prickle-dev/prickle/server\.\(\*Server\)\.logCall$`)},
	{"MCP SDK and JSON-RPC", regexp.MustCompile(`^github\.com/modelcontextprotocol/go-sdk/|^github\.com/segmentio/`)},
	// Before the server's layers: prickled accepts through its own
	// listener (the connection budget), the bare server through net/http's.
	{"accepting connections", regexp.MustCompile(`^net\.\(\*TCPListener\)\.Accept$`)},
	{"server's HTTP layers (bounds, origin, bodies)", regexp.MustCompile(`^github\.com/prickle-dev/prickle/`)},
	{"net/http and the network", regexp.MustCompile(`^net/http\.|^net\.|^internal/poll\.|^syscall\.|^bufio\.`)},
	{"runtime (scheduler, other)", regexp.MustCompile(`^runtime\.`)},
}

// otherCause takes the samples no cause matches.
const otherCause = "other"

// Account is the CPU per call of one server by cause.
type Account struct {
	// Calls is the calls made while the profiles were taken.
	Calls int64 `json:"calls"`
	// Total is the CPU of every sample, per call, in µs.
	Total float64 `json:"total_us"`
	// ByCause is the CPU per call of each cause, in µs.
	ByCause map[string]float64 `json:"by_cause_us"`
	// Samples is the number of profile samples of each cause: a cause
	// of n samples is known to about ±√n of them (sampling noise).
	Samples map[string]int64 `json:"samples_by_cause"`
}

// account charges the samples of p to the causes and divides by calls.
func account(p *profile.Profile, calls int64) (*Account, error) {
	vi, si := -1, -1
	for i, st := range p.SampleType {
		switch {
		case st.Type == "cpu" && st.Unit == "nanoseconds":
			vi = i
		case st.Type == "samples" && st.Unit == "count":
			si = i
		}
	}
	if vi < 0 {
		return nil, errors.New("not a CPU profile (no cpu/nanoseconds sample type)")
	}
	a := &Account{Calls: calls, ByCause: map[string]float64{}, Samples: map[string]int64{}}
	if calls <= 0 {
		return a, nil
	}
	for _, s := range p.Sample {
		ns := float64(s.Value[vi])
		a.Total += ns
		c := causeOf(s)
		a.ByCause[c] += ns
		if si >= 0 {
			a.Samples[c] += s.Value[si]
		} else {
			a.Samples[c]++
		}
	}
	perCall := func(ns float64) float64 { return ns / 1e3 / float64(calls) }
	a.Total = perCall(a.Total)
	for c, ns := range a.ByCause {
		a.ByCause[c] = perCall(ns)
	}
	return a, nil
}

// causeOf names the cause a sample is charged to.
func causeOf(s *profile.Sample) string {
	for _, c := range Causes {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && c.Frames.MatchString(line.Function.Name) {
					return c.Name
				}
			}
		}
	}
	return otherCause
}

// profiler takes CPU profiles of a server from its net/http/pprof, one
// slice after another, from start until stop, and merges them. A server
// profiled while the other one of the pair is loaded is idle, so slices
// that run past the measured phase add little.
type profiler struct {
	url   string
	stop  chan struct{}
	done  chan struct{}
	parts []*profile.Profile
	err   error
}

// profileSlice is the length of one profile slice.
const profileSlice = time.Second

func startProfiler(ctx context.Context, addr string) *profiler {
	p := &profiler{
		url:  fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(profileSlice/time.Second)),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go func() {
		defer close(p.done)
		for {
			part, err := fetchProfile(ctx, p.url)
			if err != nil {
				p.err = err
				return
			}
			p.parts = append(p.parts, part)
			select {
			case <-p.stop:
				return
			default:
			}
		}
	}()
	return p
}

// finish waits for the slice under way and returns the merged profile.
func (p *profiler) finish() (*profile.Profile, error) {
	close(p.stop)
	<-p.done
	if p.err != nil {
		return nil, p.err
	}
	return profile.Merge(p.parts)
}

func fetchProfile(ctx context.Context, url string) (*profile.Profile, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("profile: %w (does the server serve net/http/pprof? prickled needs -tags pprof)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("profile: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return profile.Parse(resp.Body)
}

// freeAddr is a loopback address with a port free at the time of asking.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// profiles gathers, per scenario and side, the profiles of every run.
type profiles struct {
	mu    sync.Mutex
	parts map[string][]*profile.Profile // by scenario name + side
	calls map[string]int64
}

func (ps *profiles) add(key string, p *profile.Profile, calls int64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.parts[key] = append(ps.parts[key], p)
	ps.calls[key] += calls
}

// AccountRow is one scenario's accounting on both servers.
type AccountRow struct {
	Scenario string   `json:"scenario"`
	Server   *Account `json:"server"`
	Baseline *Account `json:"baseline"`
}

// accounts merges each scenario's profiles, writes them to dir (for
// go tool pprof -diff_base) and charges them to the causes.
func (ps *profiles) accounts(scenarios []Scenario, dir string) ([]AccountRow, error) {
	var rows []AccountRow
	for _, s := range scenarios {
		row := AccountRow{Scenario: s.Name()}
		for _, side := range []string{"server", "baseline"} {
			key := s.Name() + "/" + side
			if len(ps.parts[key]) == 0 {
				continue
			}
			p, err := profile.Merge(ps.parts[key])
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", s.Name(), side, err)
			}
			if dir != "" {
				if err := writeProfile(filepath.Join(dir, profileFile(s, side)), p); err != nil {
					return nil, err
				}
			}
			a, err := account(p, ps.calls[key])
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", s.Name(), side, err)
			}
			if side == "server" {
				row.Server = a
			} else {
				row.Baseline = a
			}
		}
		if row.Server != nil && row.Baseline != nil {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// profileFile names a scenario's merged profile: claim_task-1-server.pprof.
func profileFile(s Scenario, side string) string {
	return fmt.Sprintf("%s-%d-%s.pprof", s.Op, s.Clients, side)
}

func writeProfile(file string, p *profile.Profile) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	return f.Close()
}

// writeAccounts writes the accounting for people: per scenario, each
// cause's CPU per call on both servers and the difference, largest
// difference first.
func writeAccounts(w io.Writer, rows []AccountRow, dir string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCPU per call by cause (µs; from CPU profiles of the measured phases, all runs;")
	fmt.Fprintln(w, "samples: how many profile samples each figure rests on, known to about ±√n):")
	names := []string{otherCause}
	for _, c := range Causes {
		names = append(names, c.Name)
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s (%d calls server, %d baseline):\n", r.Scenario, r.Server.Calls, r.Baseline.Calls)
		diff := r.Server.Total - r.Baseline.Total
		type line struct {
			name    string
			s, b, d float64
		}
		var lines []line
		for _, n := range names {
			s, b := r.Server.ByCause[n], r.Baseline.ByCause[n]
			if s == 0 && b == 0 {
				continue
			}
			lines = append(lines, line{n, s, b, s - b})
		}
		slices.SortStableFunc(lines, func(a, b line) int { return cmp.Compare(b.d, a.d) })
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "cause\tserver\tbaseline\tdifference\tshare of difference\tsamples\t")
		for _, l := range lines {
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%+.1f\t%s\t%d/%d\t\n", l.name, l.s, l.b, l.d, share(l.d, diff),
				r.Server.Samples[l.name], r.Baseline.Samples[l.name])
		}
		fmt.Fprintf(tw, "total\t%.1f\t%.1f\t%+.1f\t%s\t\n", r.Server.Total, r.Baseline.Total, diff, share(diff, diff))
		tw.Flush()
	}
	if dir != "" {
		fmt.Fprintf(w, "profiles in %s: go tool pprof -diff_base %s %s\n", dir,
			filepath.Join(dir, "OP-N-baseline.pprof"), filepath.Join(dir, "OP-N-server.pprof"))
	}
}

func share(part, whole float64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*part/whole)
}
