package load

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what one Run measured. Latencies are microseconds; the
// percentiles are read from a histogram, within 0.8% of the exact value.
type Report struct {
	// Endpoints are the URLs loaded (Config.Endpoints).
	Endpoints []string `json:"endpoints"`
	// Protocol is the MCP protocol version the sessions negotiated.
	Protocol string    `json:"protocol"`
	Mix      string    `json:"mix"`
	Clients  int       `json:"clients"`
	Started  time.Time `json:"started"`
	// Warmup and Measured are the phases' wall times, in seconds.
	Warmup   float64 `json:"warmup_s"`
	Measured float64 `json:"measured_s"`
	// LoadStart and LoadEnd are the machine's 1-, 5- and 15-minute load
	// averages before and after the measured phase (zero where unknown).
	LoadStart [3]float64 `json:"loadavg_start"`
	LoadEnd   [3]float64 `json:"loadavg_end"`
	// Ops has one entry per operation of the mix; Total sums them.
	Ops   []OpReport `json:"ops"`
	Total OpReport   `json:"total"`
	// ClientCPUPerCallUS is the CPU time this generator spent per call.
	ClientCPUPerCallUS float64 `json:"client_cpu_per_call_us"`
	// Server is the memory and CPU of the server's processes (Config.PIDs),
	// Database those of its database server's (Config.DBPIDs).
	Server   *ServerStats `json:"server,omitempty"`
	Database *ServerStats `json:"database,omitempty"`
	// FreshExhausted: fresh claims stopped early, out of tasks.
	FreshExhausted bool `json:"fresh_exhausted,omitempty"`
	// freshUsed is how many fresh tasks the run claimed or tried to.
	freshUsed int64
}

// OpReport is one operation's measurements. Latencies count successful
// calls only; failed calls are in Errors.
type OpReport struct {
	Op          string       `json:"op"`
	Calls       uint64       `json:"calls"` // successful and failed
	OK          uint64       `json:"ok"`
	Failed      uint64       `json:"errors"`
	CallsPerSec float64      `json:"calls_per_s"` // successful calls per second
	P50         float64      `json:"p50_us"`
	P90         float64      `json:"p90_us"`
	P99         float64      `json:"p99_us"`
	Max         float64      `json:"max_us"`
	Mean        float64      `json:"mean_us"`
	Bytes       float64      `json:"mean_bytes"` // size of the answer's JSON
	Errors      []ErrorCount `json:"error_kinds,omitempty"`
}

// ErrorCount is one kind of failure and how often it happened.
type ErrorCount struct {
	Kind    string `json:"kind"` // ErrorCall, ErrorRefused, ErrorNoStructured
	Code    string `json:"code,omitempty"`
	Count   uint64 `json:"count"`
	Example string `json:"example"`
}

// ServerStats is a server's processes over the run: the processes PIDs
// and their descendants, summed.
type ServerStats struct {
	PIDs []int `json:"pids"`
	// Processes is how many processes were summed at the end.
	Processes int `json:"processes"`
	// RSSStart, RSSEnd and RSSMax are the resident set size (bytes) at the
	// start and end of the measured phase, and its largest sample there.
	RSSStart int64 `json:"rss_start_bytes"`
	RSSEnd   int64 `json:"rss_end_bytes"`
	RSSMax   int64 `json:"rss_max_bytes"`
	// RSSSlope is the least-squares slope of the measured phase's samples,
	// in bytes per minute: near 0 when memory is flat.
	RSSSlope float64 `json:"rss_slope_bytes_per_min"`
	// CPUSeconds is the CPU time (user + system) of the measured phase;
	// CPUPerCallUS divides it by the calls made.
	CPUSeconds   float64  `json:"cpu_s"`
	CPUPerCallUS float64  `json:"cpu_per_call_us"`
	Samples      []Sample `json:"samples"`
	Error        string   `json:"error,omitempty"`
	cpu          float64
}

// Sample is one reading of the server process.
type Sample struct {
	T   float64 `json:"t_s"` // seconds since the measured phase started
	RSS int64   `json:"rss_bytes"`
	CPU float64 `json:"cpu_s"` // CPU time since the process started
	at  time.Time
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// summarize merges the workers' measurements.
func (rep *Report) summarize(mix []Weighted, workers []*worker, elapsed time.Duration) {
	var all Histogram
	var allBytes int64
	errs := map[errorKey]*ErrorCount{}
	for _, op := range Ops {
		if !slices.ContainsFunc(mix, func(w Weighted) bool { return w.Op == op }) {
			continue
		}
		var h Histogram
		var bytes int64
		opErrs := map[errorKey]*ErrorCount{}
		for _, w := range workers {
			s := w.stats[op]
			h.Merge(&s.hist)
			bytes += s.bytes
			mergeErrors(opErrs, s.errors)
		}
		all.Merge(&h)
		allBytes += bytes
		mergeErrors(errs, opErrs)
		rep.Ops = append(rep.Ops, opReport(op, &h, bytes, opErrs, elapsed))
	}
	rep.Total = opReport("total", &all, allBytes, errs, elapsed)
	for _, s := range []*ServerStats{rep.Server, rep.Database} {
		if s != nil {
			s.RSSSlope = rssSlope(s.Samples)
		}
	}
}

func mergeErrors(into, from map[errorKey]*ErrorCount) {
	for k, e := range from {
		if have, ok := into[k]; ok {
			have.Count += e.Count
			continue
		}
		c := *e
		into[k] = &c
	}
}

func opReport(op string, h *Histogram, bytes int64, errs map[errorKey]*ErrorCount, elapsed time.Duration) OpReport {
	r := OpReport{Op: op, OK: h.Count()}
	for _, e := range errs {
		r.Failed += e.Count
		r.Errors = append(r.Errors, *e)
	}
	slices.SortFunc(r.Errors, func(a, b ErrorCount) int {
		return strings.Compare(a.Kind+"\x00"+a.Code, b.Kind+"\x00"+b.Code)
	})
	r.Calls = r.OK + r.Failed
	if elapsed > 0 {
		r.CallsPerSec = float64(r.OK) / elapsed.Seconds()
	}
	if r.OK > 0 {
		r.P50, r.P90, r.P99 = us(h.Percentile(50)), us(h.Percentile(90)), us(h.Percentile(99))
		r.Max, r.Mean = us(h.Max()), us(h.Mean())
		r.Bytes = float64(bytes) / float64(r.OK)
	}
	return r
}

// rssSlope is the least-squares slope of RSS over time (bytes per minute)
// for the samples of the measured phase; 0 with fewer than two.
func rssSlope(ss []Sample) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, s := range ss {
		if s.T < 0 {
			continue
		}
		x, y := s.T/60, float64(s.RSS)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	d := n*sxx - sx*sx
	if n < 2 || d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func formatPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// MiB formats a byte count.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// WriteText writes the report for people.
func (rep *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s  protocol %s  clients %d  mix %s\n", strings.Join(rep.Endpoints, " "), rep.Protocol, rep.Clients, rep.Mix)
	fmt.Fprintf(w, "warm-up %.1fs, measured %.2fs; load average %.2f before, %.2f after\n",
		rep.Warmup, rep.Measured, rep.LoadStart[0], rep.LoadEnd[0])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tcalls\terrors\tcalls/s\tp50 µs\tp90 µs\tp99 µs\tmax µs\tbytes\t")
	for _, r := range append(slices.Clone(rep.Ops), rep.Total) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
			r.Op, r.Calls, r.Failed, r.CallsPerSec, r.P50, r.P90, r.P99, r.Max, r.Bytes)
	}
	tw.Flush()
	for _, r := range rep.Ops {
		for _, e := range r.Errors {
			code := e.Code
			if code == "" {
				code = "-"
			}
			fmt.Fprintf(w, "  %s: %d × %s %s: %s\n", r.Op, e.Count, e.Kind, code, e.Example)
		}
	}
	fmt.Fprintf(w, "generator CPU %.0f µs/call\n", rep.ClientCPUPerCallUS)
	for _, p := range []struct {
		name string
		s    *ServerStats
	}{{"server", rep.Server}, {"database", rep.Database}} {
		if s := p.s; s != nil {
			fmt.Fprintf(w, "%s pid %s (%d processes): CPU %.0f µs/call; RSS %s at start, %s at end, %s max, slope %s/min\n",
				p.name, formatPIDs(s.PIDs), s.Processes, s.CPUPerCallUS, MiB(s.RSSStart), MiB(s.RSSEnd), MiB(s.RSSMax), MiB(int64(s.RSSSlope)))
			if s.Error != "" {
				fmt.Fprintf(w, "%s sampling stopped: %s\n", p.name, s.Error)
			}
		}
	}
	if rep.FreshExhausted {
		fmt.Fprintln(w, "fresh claims ran out of tasks: generate a world with more (prickle-load fixture -tasks N)")
	}
}
