package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// chromium is Debian's Chromium, which e2e/install.sh installs.
const chromium = "/usr/bin/chromium"

// needChromium returns a browser context on a headless Chromium, or skips
// the test when Chromium is not installed, unless PRICKLE_E2E=1.
func needChromium(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		msg := chromium + " is not installed: run e2e/install.sh"
		if os.Getenv("PRICKLE_E2E") == "1" {
			t.Fatal(msg + " (PRICKLE_E2E=1: not skipping)")
		}
		t.Skip(msg + ", or set PRICKLE_E2E=1 to make this a failure")
	}
	// The flags keep Chromium off the network (this machine has none) and
	// out of the user's profile.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestHTMLReportInABrowser: the HTML report of a failing run, opened in
// headless Chromium as a reader opens it, offline: the verdict shows; the
// sentence the server breaks is marked failed on its page; following it
// leads to its requirement and from there to the failing script, open
// with its reason and rerun command; exploration's shrunk sequence is
// there; and the page fetched nothing. The screenshot is kept in
// $PRICKLE_E2E_ARTIFACTS when set.
func TestHTMLReportInABrowser(t *testing.T) {
	ctx := needChromium(t)
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	scripts, _, err := conformance.Suite(sp)
	if err != nil {
		t.Fatal(err)
	}
	// A server whose credentials live 1 minute breaks the reference
	// profile's 15-minute default.
	rep, err := conformance.Run(context.Background(), scripts, conformance.Options{
		Profile: conformance.Reference, Spec: sp, Run: regexp.MustCompile(`^(claim_task_credential|claim_task_replay|explore)$`),
		Explore: 6, Seed: 7, SaveDir: t.TempDir(),
		Target: &conformance.CmdTarget{Command: "exec " + prickledBin(t) + ` --addr "$PRICKLE_ADDR" --db :memory: --fixture "$PRICKLE_FIXTURE" --launch-timeout 1m`},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result("claim_task_credential").Status != report.Fail {
		t.Fatalf("claim_task_credential: %s, want a failure to report", rep.Result("claim_task_credential").Status)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page, sp); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	mark := chromedp.CSS(`#tool-claim_task .page a[href="#req-claim_task-d58db1d3"]`) // "... which expires with the launch timeout."
	markJS := "document.querySelector('#tool-claim_task .page a[href=\"#req-claim_task-d58db1d3\"]')"
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("browsing the report: %v", err)
		}
	}
	text := func(sel string) string { t.Helper(); return get(t, ctx, chromedp.Text(chromedp.CSS(sel))) }
	do(chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS("#verdict")))
	verdict := text("#verdict")
	markClass := get(t, ctx, chromedp.AttributeValue(mark, "class"))
	markBg := get(t, ctx, chromedp.Evaluate[string]("getComputedStyle("+markJS+").backgroundColor"))
	markBox := get(t, ctx, chromedp.Evaluate[[]float64]("(r => [r.width, r.height])("+markJS+".getBoundingClientRect())"))
	shot := get(t, ctx, chromedp.FullScreenshot(100))
	// Following the sentence: its requirement, then its failing script.
	do(chromedp.Click(mark))
	hash := get(t, ctx, chromedp.Evaluate[string]("location.hash"))
	reqText := text("#req-claim_task-d58db1d3")
	do(chromedp.Click(chromedp.CSS(`#req-claim_task-d58db1d3 a[href="#script-claim_task_credential"]`)),
		chromedp.WaitVisible(chromedp.CSS("#script-claim_task_credential details[open] summary")))
	scriptHash := get(t, ctx, chromedp.Evaluate[string]("location.hash"))
	summary := text("#script-claim_task_credential details summary")
	rerun := text("#script-claim_task_credential details p code")
	sequence := get(t, ctx, chromedp.Evaluate[string]("document.body.innerText"))
	resources := get(t, ctx, chromedp.Evaluate[int]("performance.getEntriesByType('resource').length"))
	if dir := os.Getenv("PRICKLE_E2E_ARTIFACTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "report.png"), shot, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "report.html"), page.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(verdict, "FAILED") || !strings.Contains(verdict, "reference") {
		t.Errorf("verdict line %q, want FAILED and the profile", verdict)
	}
	if !strings.Contains(markClass.Value, "req-failed") || markBg != "rgb(255, 235, 233)" || len(markBox) != 2 || markBox[0] == 0 || markBox[1] == 0 {
		t.Errorf("the broken sentence on its page: class %q, background %s, box %v; want it shown, marked failed", markClass.Value, markBg, markBox)
	}
	if hash != "#req-claim_task-d58db1d3" || !strings.Contains(reqText, "FAILED") || !strings.Contains(reqText, "claim_task_credential") {
		t.Errorf("after following the sentence: at %q, requirement %q; want its result and its script", hash, reqText)
	}
	if scriptHash != "#script-claim_task_credential" || !strings.Contains(summary, "15m0s") ||
		!strings.Contains(rerun, "--run '^claim_task_credential$'") {
		t.Errorf("the failing script: at %q, reason %q, rerun %q; want its reason and rerun command shown", scriptHash, summary, rerun)
	}
	if rep.Explore == nil || len(rep.Explore.Failures) == 0 || !strings.Contains(sequence, fmt.Sprintf("sequence %d: ", rep.Explore.Failures[0].Sequence)) {
		t.Errorf("exploration's failure is not on the page")
	}
	if resources != 0 {
		t.Errorf("the report fetched %d resources; it must open offline, self-contained", resources)
	}
	if len(shot) < 10000 {
		t.Errorf("a screenshot of %d bytes: nothing rendered?", len(shot))
	}
}

// get runs an action of the browser and returns its value.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browsing the report: %v", err)
	}
	return v
}
