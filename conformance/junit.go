package conformance

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/prickle-dev/prickle/conformance/report"
)

// The JUnit XML report (WriteJUnit): one test case per script.

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Props    []junitProp `xml:"properties>property"`
	Cases    []junitCase `xml:"testcase"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure"`
	Skipped   *junitMessage `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: one test case per script.
// An expected failure that fails is reported as skipped.
func (r *Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{
		Name:  "prickle-conformance (" + string(r.Profile) + ")",
		Tests: len(r.Results), Failures: r.Failed, Skipped: r.Skipped + r.XFailed,
		Time: fmt.Sprintf("%.3f", r.Duration.Seconds()),
		Props: []junitProp{
			{Name: "suite", Value: r.Suite},
			{Name: "profile", Value: string(r.Profile)},
			{Name: "target", Value: r.Target},
			{Name: "spec_hash", Value: r.SpecHash},
			{Name: "spec_source", Value: r.SpecSource},
			{Name: "seed", Value: fmt.Sprint(r.Seed)},
			{Name: "verdict", Value: string(r.Verdict)},
			{Name: "missing", Value: strings.Join(r.Missing, "; ")},
			{Name: "checks", Value: fmt.Sprint(r.Checks)},
			{Name: "refusals", Value: r.RefusalSummary()},
		},
	}
	if r.Replicas >= 2 {
		s.Props = append(s.Props, junitProp{Name: "replicas", Value: r.ReplicaSummary()})
	}
	if r.Power != nil {
		s.Props = append(s.Props, junitProp{Name: "power", Value: r.Power.String()})
	}
	for _, e := range r.Races {
		s.Props = append(s.Props, junitProp{Name: "race_evidence." + e.Class, Value: e.String()})
	}
	for _, res := range r.Results {
		c := junitCase{Name: res.Name, Classname: "conformance." + string(r.Profile), Time: fmt.Sprintf("%.3f", res.Duration.Seconds())}
		switch res.Status {
		case report.Fail:
			msg := res.Reason
			if msg == "" {
				msg = firstFailure(res.Log)
			}
			c.Failure = &junitMessage{Message: msg, Body: res.Log}
		case report.Skip:
			c.Skipped = &junitMessage{Message: res.Reason}
		case report.XFail:
			c.Skipped = &junitMessage{Message: "expected failure", Body: res.Log}
		default:
			c.SystemOut = fmt.Sprintf("%d checks", res.Checks)
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// firstFailure picks the FAIL line of a testscript log.
func firstFailure(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if i := strings.Index(line, "FAIL: "); i >= 0 {
			return strings.TrimSpace(line[i+len("FAIL: "):])
		}
	}
	return "failed"
}
