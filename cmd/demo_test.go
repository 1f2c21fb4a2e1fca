package cmd

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// demoPrinted is what the demo printed, parsed.
type demoPrinted struct {
	base, link, key, dataDir string
	campaignID               int64
}

var (
	demoServiceRe  = regexp.MustCompile(`(?m)^  service +(http://\S+) \(data in (.+), (removed on exit|kept)\)$`)
	demoLinkRe     = regexp.MustCompile(`(?m)^Sign in: +(http://\S+/console/sign-in/link\?token=\S+)`)
	demoKeyRe      = regexp.MustCompile(`(?m)^API key: +(odk_[A-Za-z0-9_-]{43})\s`)
	demoCampaignRe = regexp.MustCompile(`(?m)^Campaign (\d+) "[^"]+" is running: 200 contacts`)
)

// parseDemo parses the demo's output once it printed "Ctrl-C to stop.".
func parseDemo(t *testing.T, out string) demoPrinted {
	t.Helper()
	svc, link, key, camp := demoServiceRe.FindStringSubmatch(out), demoLinkRe.FindStringSubmatch(out),
		demoKeyRe.FindStringSubmatch(out), demoCampaignRe.FindStringSubmatch(out)
	if svc == nil || link == nil || key == nil || camp == nil {
		t.Fatalf("demo output lacks the service, sign-in link, API key or campaign line:\n%s", out)
	}
	id, _ := strconv.ParseInt(camp[1], 10, 64)
	if !strings.HasPrefix(link[1], svc[1]+"/") || !strings.Contains(out, "Console:  "+svc[1]+"/console/\n") {
		t.Errorf("the links do not name the service's address %s:\n%s", svc[1], out)
	}
	return demoPrinted{base: svc[1], link: link[1], key: key[1], dataDir: svc[2], campaignID: id}
}

// TestDemo runs `outdial demo --addr 127.0.0.1:0` as a user does: the
// printed link signs in once, the campaign completes by itself with every
// contact ending as its scripted story says (every outcome present,
// retries included), and SIGINT stops the process with status 0 and
// removes its temporary data directory.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a one-minute campaign; skipped with -short")
	}
	bin := BuildBinary(t)
	tmp := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OUTDIAL_") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	var stdout, stderr syncBuffer
	cmd := exec.Command(bin, "demo", "--addr", "127.0.0.1:0")
	cmd.Env = append(env, "TMPDIR="+tmp)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	waitPrinted(t, &stdout, &stderr, exited, 60*time.Second)
	p := parseDemo(t, stdout.String())
	if filepath.Dir(p.dataDir) != tmp {
		t.Errorf("data directory %s is not a temporary directory (under %s)", p.dataDir, tmp)
	}
	if _, err := os.Stat(filepath.Join(p.dataDir, "outdial.db")); err != nil {
		t.Fatalf("no database in the data directory: %v", err)
	}

	browser := signIn(t, p)
	// The printed key is the organization's too.
	if status, _ := demoGet(t, http.DefaultClient, p, "/api/v1/campaign", p.key); status != http.StatusOK {
		t.Errorf("GET /api/v1/campaign with the printed key: status %d", status)
	}
	waitCompleted(t, browser, p, exited, &stderr)
	checkDemoOutcomes(t, browser, p)

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("demo did not exit within 15 s of SIGINT:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGINT, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(p.dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary data directory left after exit: %v", err)
	}
	if !strings.HasSuffix(stdout.String(), "Stopped.\n") {
		t.Errorf("no final line 'Stopped.':\n%s", stdout.String())
	}
	if s := stderr.String(); strings.Contains(s, "level=ERROR") {
		t.Errorf("errors logged:\n%s", s)
	}
}

// waitPrinted waits until the demo printed its last line, failing when it
// exits first or the deadline passes.
func waitPrinted(t *testing.T, stdout, stderr *syncBuffer, exited <-chan struct{}, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(stdout.String(), "Ctrl-C to stop.\n") {
		select {
		case <-exited:
			t.Fatalf("demo exited before it was ready:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo not ready within %s:\nstdout:\n%s\nstderr:\n%s", within, stdout.String(), stderr.String())
		}
	}
}

// signIn follows the printed link as a browser does and returns the
// signed-in browser: the link answers a redirect to the console with an
// HttpOnly session cookie, the console then answers without sending the
// browser to the sign-in page, and the API accepts the cookie. A second
// browser following the same link is not signed in.
func signIn(t *testing.T, p demoPrinted) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	noFollow := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(p.link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := res.Location()
	if res.StatusCode != http.StatusSeeOther || loc == nil || loc.Path != "/console/" {
		t.Fatalf("sign-in link: status %d, Location %v; want 303 to /console/", res.StatusCode, loc)
	}
	if sc := strings.Join(res.Header.Values("Set-Cookie"), "\n"); !strings.Contains(sc, "HttpOnly") {
		t.Fatalf("sign-in link set no HttpOnly cookie: %q", sc)
	}
	base, _ := url.Parse(p.base)
	if len(jar.Cookies(base)) == 0 {
		t.Fatal("no session cookie kept after the sign-in link")
	}
	res, err = browser.Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || strings.HasPrefix(res.Request.URL.Path, "/console/sign-in") {
		t.Fatalf("console after sign-in: status %d at %s, want 200 signed in", res.StatusCode, res.Request.URL.Path)
	}
	path := fmt.Sprintf("/api/v1/campaign/%d", p.campaignID)
	if status, body := demoGet(t, browser, p, path, ""); status != http.StatusOK {
		t.Fatalf("GET %s with the session cookie: status %d: %s", path, status, body)
	}

	// The link works once.
	jar2, _ := cookiejar.New(nil)
	other := &http.Client{Jar: jar2, Timeout: 10 * time.Second}
	res, err = other.Get(p.link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range jar2.Cookies(base) {
		if ck.Value != "" {
			t.Errorf("second use of the link set cookie %s", ck.Name)
		}
	}
	if res.StatusCode == http.StatusOK && !strings.HasPrefix(res.Request.URL.Path, "/console/sign-in") {
		t.Errorf("second use of the link reached %s, want the sign-in page or an error", res.Request.URL.Path)
	}
	if status, _ := demoGet(t, other, p, path, ""); status != http.StatusUnauthorized {
		t.Errorf("GET %s after the second use of the link: status %d, want 401", path, status)
	}
	return browser
}

// demoGet GETs path with client (and key, when set) and returns the status
// and body.
func demoGet(t *testing.T, client *http.Client, p demoPrinted, path, key string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return res.StatusCode, b
}

// demoGetJSON GETs path with the signed-in browser and decodes the 200
// answer into out.
func demoGetJSON(t *testing.T, browser *http.Client, p demoPrinted, path string, out any) {
	t.Helper()
	status, b := demoGet(t, browser, p, path, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// waitCompleted polls the campaign until it is completed (about a
// minute), failing when it ends otherwise, the demo exits, or three
// minutes pass.
func waitCompleted(t *testing.T, browser *http.Client, p demoPrinted, exited <-chan struct{}, stderr *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	path := fmt.Sprintf("/api/v1/campaign/%d", p.campaignID)
	for {
		var camp struct {
			State         string `json:"state"`
			ProcessedRows int    `json:"processed_rows"`
		}
		demoGetJSON(t, browser, p, path, &camp)
		switch camp.State {
		case "completed":
			return
		case "running":
		default:
			t.Fatalf("campaign is %s, want running then completed\n%s", camp.State, stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("campaign not completed within 3 minutes (%d of 200 contacts final)\n%s", camp.ProcessedRows, stderr.String())
		}
		select {
		case <-exited:
			t.Fatalf("demo exited while its campaign ran:\n%s", stderr.String())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// demoFinal is the final outcome and attempt count of a contact whose
// calls play story under the demo's retry_config (one retry, on busy and
// no answer).
func demoFinal(story demoStory) (string, int) {
	attempts := 1
	if story[0] == twiliosim.Busy || story[0] == twiliosim.NoAnswer {
		attempts = 2
	}
	outcome := twiliosim.Human
	if attempts <= len(story) {
		outcome = story[attempts-1]
	}
	return map[twiliosim.Outcome]string{twiliosim.Human: "answered", twiliosim.Machine: "voicemail",
		twiliosim.Busy: "busy", twiliosim.NoAnswer: "no_answer", twiliosim.Failed: "failed"}[outcome], attempts
}

// checkDemoOutcomes checks the completed campaign: every call's outcome is
// among the five the demo scripts, each of them shows up in the final
// outcomes, some contacts were retried, and the report gives every contact
// the outcome and attempt count its story makes.
func checkDemoOutcomes(t *testing.T, browser *http.Client, p demoPrinted) {
	t.Helper()
	var calls []map[string]any
	for after := int64(0); ; {
		var page struct {
			Calls []map[string]any `json:"calls"`
		}
		demoGetJSON(t, browser, p, fmt.Sprintf("/api/v1/campaign/%d/calls?limit=1000&after_id=%d", p.campaignID, after), &page)
		if len(page.Calls) == 0 {
			break
		}
		calls = append(calls, page.Calls...)
		after = int64(page.Calls[len(page.Calls)-1]["id"].(float64))
	}
	retried := 0
	for _, c := range calls {
		if c["attempt"].(float64) > 1 {
			retried++
		}
		switch c["outcome"] {
		case "answered", "voicemail", "busy", "no_answer", "failed":
		default:
			t.Errorf("call %v (attempt %v) ended %v (%v)", c["id"], c["attempt"], c["outcome"], c["error"])
		}
	}

	status, body := demoGet(t, browser, p, fmt.Sprintf("/api/v1/campaign/%d/report", p.campaignID), "")
	if status != http.StatusOK {
		t.Fatalf("report: status %d: %s", status, body)
	}
	recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(recs) != 201 {
		t.Fatalf("report: %v, %d records, want 201", err, len(recs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	rows, err := demoRows(demoContacts)
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]int{}
	wantCalls := 0
	for _, rec := range recs[1:] {
		row, ok := rows[rec[col["phone_number"]]]
		if !ok {
			t.Fatalf("report row of an unknown number: %v", rec)
		}
		outcome, attempts := demoFinal(demoStoryOf(row))
		wantCalls += attempts
		if rec[col["outcome"]] != outcome || rec[col["attempts"]] != strconv.Itoa(attempts) {
			t.Errorf("row %d: outcome %s after %s attempts, want %s after %d", row+2, rec[col["outcome"]], rec[col["attempts"]], outcome, attempts)
		}
		final[rec[col["outcome"]]]++
	}
	for _, o := range []string{"answered", "voicemail", "busy", "no_answer", "failed"} {
		if final[o] == 0 {
			t.Errorf("no contact ended %s: %v", o, final)
		}
	}
	if len(calls) != wantCalls || retried != wantCalls-200 || retried == 0 {
		t.Errorf("%d calls (%d retries), want %d (%d retries)", len(calls), retried, wantCalls, wantCalls-200)
	}
	t.Logf("final outcomes %v; %d calls, %d retries", final, len(calls), retried)
	checkDemoAgent(t, calls, rows)
}

// checkDemoAgent checks the simulated agent's effect on the calls: every
// answered call has its verdict, most have their answer_to_first_audio_ms,
// at least one is abandoned and every call whose plan has no audio (never,
// failed) is, without a time; no other call has a verdict.
func checkDemoAgent(t *testing.T, calls []map[string]any, rows map[string]int) {
	t.Helper()
	answered, timed, abandoned := 0, 0, 0
	for _, c := range calls {
		if c["outcome"] != "answered" {
			if c["abandoned"] != nil || c["answer_to_first_audio_ms"] != nil {
				t.Errorf("call %v (%v) has a verdict: abandoned %v, %v ms", c["id"], c["outcome"], c["abandoned"], c["answer_to_first_audio_ms"])
			}
			continue
		}
		answered++
		ab, ok := c["abandoned"].(bool)
		if !ok {
			t.Errorf("answered call %v has no abandoned verdict: %v", c["id"], c["abandoned"])
			continue
		}
		if ab {
			abandoned++
		}
		_, hasMs := c["answer_to_first_audio_ms"].(float64)
		if hasMs {
			timed++
		}
		plan := demoAgentPlanOf(rows[c["phone_number"].(string)], int(c["attempt"].(float64)))
		if plan.Event != "first_audio" && (!ab || hasMs) {
			t.Errorf("call %v: the agent's plan %+v, yet abandoned %v, %v ms", c["id"], plan, ab, c["answer_to_first_audio_ms"])
		}
	}
	if abandoned == 0 || timed*10 < answered*9 {
		t.Errorf("%d answered calls: %d abandoned, %d with a first audio; want some abandoned, 90 %% with audio", answered, abandoned, timed)
	}
	t.Logf("%d answered calls: %d abandoned, %d with a first audio", answered, abandoned, timed)
}

// startDemoInProcess runs the demo command in this process until ctx ends,
// and waits until it is ready.
func startDemoInProcess(t *testing.T, ctx context.Context, args ...string) (*syncBuffer, <-chan error) {
	t.Helper()
	var out, errOut syncBuffer
	root := newRoot()
	root.SetArgs(append([]string{"demo"}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() { done <- root.ExecuteContext(ctx); close(exited) }()
	waitPrinted(t, &out, &errOut, exited, 30*time.Second)
	return &out, done
}

// TestDemoKeepsData runs the demo twice on one --data directory: the
// directory is kept, and the second run reuses the configuration and the
// workflow of the first (same names) and starts a second campaign.
func TestDemoKeepsData(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "demo-data")
	for run := 1; run <= 2; run++ {
		ctx, cancel := context.WithCancel(context.Background())
		out, done := startDemoInProcess(t, ctx, "--addr", "127.0.0.1:0", "--data", dir)
		p := parseDemo(t, out.String())
		if p.dataDir != dir || !strings.Contains(out.String(), "(data in "+dir+", kept)") {
			t.Errorf("run %d: data directory %q, want %q kept", run, p.dataDir, dir)
		}
		if p.campaignID != int64(run) {
			t.Errorf("run %d started campaign %d, want %d", run, p.campaignID, run)
		}
		for path, field := range map[string]string{"/api/v1/organizations/telephony-configs": "configurations", "/api/v1/workflow": "workflows"} {
			status, body := demoGet(t, http.DefaultClient, p, path, p.key)
			var list map[string][]any
			if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil || len(list[field]) != 1 {
				t.Errorf("run %d: GET %s: status %d, %d %s, want 1: %s", run, path, status, len(list[field]), field, body)
			}
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d: demo returned %v", run, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("run %d: demo did not stop within 15 s", run)
		}
		if _, err := os.Stat(filepath.Join(dir, "outdial.db")); err != nil {
			t.Fatalf("run %d: database not kept: %v", run, err)
		}
	}
}

// TestDemoAddrInUse: a taken --addr is an error that says so (no other
// port is picked), and the temporary data directory is removed.
func TestDemoAddrInUse(t *testing.T) {
	clearEnv(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out, _, err := run(t, "demo", "--addr", ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()+" is already in use") {
		t.Fatalf("err = %v, want one saying %s is in use", err, ln.Addr())
	}
	if out != "" {
		t.Errorf("printed %q", out)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in the temporary directory: %v", entries)
	}
}
