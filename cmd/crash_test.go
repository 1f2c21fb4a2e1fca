package cmd_test

// The crash test of issue 5: the real binary, killed with SIGKILL in the
// middle of a campaign, started again on the same data directory and port.

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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/outdial/outdial/cmd"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// Shape of the crash test's campaign. Every call is answered at once and
// talks for crashTalk; the simulator holds every create request for
// crashCreateDelay before it creates the call, so at any moment part of the
// campaign's slots are attempts whose provider request is under way
// (dialing) and the rest are calls placed and talking (in flight).
const (
	crashContacts    = 300
	crashConcurrency = 50
	crashRate        = 200
	crashTalk        = 300 * time.Millisecond
	crashCreateDelay = 60 * time.Millisecond
)

// TestCrashMidCampaign runs a campaign of a few hundred contacts on the
// real binary against the Twilio simulator, kill -9s the process while calls
// are being placed and others are in flight, starts it again on the same data
// directory and port, and checks that the campaign completes by itself, every
// contact ends final, no contact is lost, and no attempt is placed twice:
// attempts left dialing by the crash end unknown (unless the provider's own
// signed final status for them arrives first) and are never placed again,
// attempts left in flight get their real outcome (from the provider's call
// status or from callbacks arriving after the restart). Retries are off, so
// every number may be called at most once.
// SQLite-specific: copies the database files as the kill -9 left them.
func TestCrashMidCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := cmd.BuildBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	base := "http://" + addr

	// The simulator runs in the test process. Callbacks use a new
	// connection each: a keep-alive connection to the killed process must
	// not swallow a callback meant for the restarted one.
	var pendingCreates atomic.Int64
	sim := twiliosim.Start(twiliosim.Config{
		Script: func(twiliosim.CallInfo) twiliosim.Script {
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: crashTalk}
		},
		Client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
	})
	t.Cleanup(sim.Close)
	sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate {
			pendingCreates.Add(1)
			time.Sleep(crashCreateDelay)
			pendingCreates.Add(-1)
		}
		return nil
	})

	env := serviceEnv(sim.URL())
	key := apiKey(t, bin, dir, env)

	first := startService(t, bin, dir, addr, env, "first")
	c := &apiClient{t: t, base: base, key: key}
	c.callingHoursOff()

	cfg := c.post("/api/v1/organizations/telephony-configs", map[string]any{
		"name": "sim", "is_default_outbound": true,
		"config": map[string]any{"provider": "twilio", "account_sid": sim.AccountSID(), "auth_token": sim.AuthToken()},
	})
	cfgID := int64(cfg["id"].(float64))
	c.post(fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", cfgID),
		map[string]any{"address": "+14155550100", "is_default_caller_id": true})
	wf := c.post("/api/v1/workflow", map[string]any{"name": "reminder", "workflow_definition": json.RawMessage(crashWorkflow)})

	csvBody, phones := crashCSV(crashContacts)
	up := c.post("/api/v1/s3/presigned-upload-url", map[string]any{
		"file_name": "contacts.csv", "file_size": len(csvBody), "content_type": "text/csv",
	})
	putUpload(t, up["upload_url"].(string), csvBody)

	camp := c.post("/api/v1/campaign", map[string]any{
		"name": "crash", "workflow_id": wf["id"], "source_id": up["file_key"],
		"max_concurrency": crashConcurrency, "rate_limit_per_second": crashRate,
		"retry_config": map[string]any{"enabled": false},
	})
	campID := int64(camp["id"].(float64))
	if camp["total_rows"].(float64) != crashContacts {
		t.Fatalf("total_rows = %v, want %d", camp["total_rows"], crashContacts)
	}
	c.post(fmt.Sprintf("/api/v1/campaign/%d/start", campID), nil)

	// Kill once the campaign is well under way: a third of the contacts
	// placed, at least half the slots talking at the simulator, and create
	// requests under way (attempts claimed whose request has not been
	// answered: they are dialing in the database).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var pendingAtKill int64
	err := sim.Wait(ctx, func(st twiliosim.Stats) bool {
		pendingAtKill = pendingCreates.Load()
		return st.Created >= crashContacts/3 && st.InFlight >= crashConcurrency/2 && pendingAtKill >= 2
	})
	first.kill()
	atKill := sim.Stats()
	if err != nil {
		t.Fatalf("campaign never reached the crash point: %v (simulator %+v)\nservice log:\n%s", err, atKill, first.log())
	}
	t.Logf("killed with %d calls in flight at the simulator, %d created, %d create requests under way",
		atKill.InFlight, atKill.Created, pendingAtKill)
	if atKill.PeakInFlight > crashConcurrency {
		t.Errorf("before the crash the simulator saw %d calls in flight, max_concurrency is %d", atKill.PeakInFlight, crashConcurrency)
	}

	// What the crash left behind, read from a copy of the database so the
	// restart recovers the original files (WAL included) untouched.
	dialing, inFlight := crashSnapshot(t, dir)
	t.Logf("the crash left %d attempts dialing and %d in flight", len(dialing), len(inFlight))
	if len(dialing) == 0 || len(inFlight) < crashConcurrency/4 {
		t.Fatalf("crash point missed: %d attempts dialing, %d in flight; want some of each", len(dialing), len(inFlight))
	}

	second := startService(t, bin, dir, addr, env, "second")
	var final map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		final = c.get(fmt.Sprintf("/api/v1/campaign/%d", campID))
		if final["state"] == "completed" {
			break
		}
		if s := final["state"]; s != "running" || time.Now().After(deadline) {
			t.Fatalf("campaign is %v after the restart (want running, then completed within 30 s): %v\nservice log:\n%s",
				s, final, second.log())
		}
		time.Sleep(25 * time.Millisecond)
	}
	// Every simulated call is over before its numbers are compared.
	if err := sim.Wait(ctx, func(st twiliosim.Stats) bool { return st.Final == st.Created }); err != nil {
		t.Fatalf("simulated calls still running: %+v", sim.Stats())
	}

	for _, k := range []string{"total_rows", "processed_rows", "total_queued_count"} {
		if final[k].(float64) != crashContacts {
			t.Errorf("%s = %v, want %d", k, final[k], crashContacts)
		}
	}

	// Calls: one attempt per contact (retries are off), all done. The
	// attempts the crash left dialing end unknown ("interrupted") and the
	// others, those left in flight included, are answered.
	calls := c.calls(campID)
	if len(calls) != crashContacts {
		t.Fatalf("%d call attempts, want %d (one per contact)", len(calls), crashContacts)
	}
	creates := sim.CreatesByTo()
	rows := map[int]bool{}
	attempts := map[string]int{}
	unknown, proven, reached := 0, 0, 0
	for _, a := range calls {
		id := int64(a["id"].(float64))
		row := int(a["contact_row"].(float64))
		phone, _ := a["phone_number"].(string)
		outcome, _ := a["outcome"].(string)
		raw, _ := a["raw_status"].(string)
		rows[row] = true
		attempts[phone]++
		if a["state"] != "done" || a["attempt"].(float64) != 1 {
			t.Errorf("attempt %d (row %d): state %v, attempt %v; want done, 1", id, row, a["state"], a["attempt"])
		}
		if phones[row] != phone {
			t.Errorf("attempt %d: row %d phone %q, the file has %q", id, row, phone, phones[row])
		}
		switch {
		case dialing[id]:
			reached += creates[phone]
			switch {
			case outcome == "unknown" && raw == "interrupted":
				unknown++
			case outcome == "answered" && creates[phone] == 1:
				// The request had gone out, and the call's signed
				// final callback reached the restarted service
				// before its start-up reconciliation: the provider's
				// own status is the attempt's outcome.
				proven++
			default:
				t.Errorf("attempt %d was dialing at the crash: outcome %q raw %q (%s called %d times); want unknown, interrupted",
					id, outcome, raw, phone, creates[phone])
			}
			if creates[phone] > 1 {
				t.Errorf("attempt %d was dialing at the crash and %s was called %d times: placed again", id, phone, creates[phone])
			}
		default:
			if outcome != "answered" {
				t.Errorf("attempt %d (in flight at the crash: %v): outcome %q raw %q error %v, want answered",
					id, inFlight[id], outcome, raw, a["error"])
			}
			if creates[phone] != 1 {
				t.Errorf("attempt %d: %s was called %d times, want exactly once", id, phone, creates[phone])
			}
		}
	}
	t.Logf("after the restart: of the %d attempts left dialing, %d ended unknown and %d got the provider's final status "+
		"(%d of their requests had reached the provider); %d answered in all", len(dialing), unknown, proven, reached, len(calls)-unknown)
	if unknown+proven != len(dialing) {
		t.Errorf("%d attempts ended unknown and %d answered, the crash left %d dialing", unknown, proven, len(dialing))
	}
	for row := 2; row < 2+crashContacts; row++ {
		if !rows[row] {
			t.Errorf("contact of row %d has no attempt: lost", row)
		}
	}
	for phone, n := range creates {
		if n > attempts[phone] {
			t.Errorf("%s was called %d times for %d attempts", phone, n, attempts[phone])
		}
	}
	if final["failed_rows"].(float64) != float64(unknown) {
		t.Errorf("failed_rows = %v, want %d (the unknown attempts)", final["failed_rows"], unknown)
	}

	// The report: every contact of the file, each final, called at most
	// once.
	report := c.report(campID)
	if len(report) != crashContacts {
		t.Fatalf("report has %d rows, want %d", len(report), crashContacts)
	}
	inReport := map[string]bool{}
	for _, r := range report {
		inReport[r["phone_number"]] = true
		if r["outcome"] == "" || r["attempts"] != "1" {
			t.Errorf("report row %v: want a final outcome and 1 attempt", r)
		}
	}
	for row, p := range phones {
		if !inReport[p] {
			t.Errorf("row %d (%s) is missing from the report", row, p)
		}
	}

	// The restarted service still stops cleanly.
	second.stop(t)
}

// crashWorkflow is a valid workflow: a start node with a greeting, an end
// node, one edge.
const crashWorkflow = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}} from {{city}}.","greeting":"Hello {{first_name}}, this is a reminder."}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Say goodbye."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The reminder was delivered"}}]}`

// crashCSV returns a contacts file of n rows and the E.164 number of each
// row (header = row 1).
func crashCSV(n int) ([]byte, map[int]string) {
	var b bytes.Buffer
	phones := make(map[int]string, n)
	b.WriteString("phone_number,first_name,city\n")
	for i := range n {
		p := fmt.Sprintf("+1415555%04d", 1000+i)
		phones[i+2] = p
		fmt.Fprintf(&b, "%s,Name%d,City%d\n", p, i, i%7)
	}
	return b.Bytes(), phones
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serviceEnv is the test's environment without OUTDIAL_* variables, plus
// the simulator's URL.
func serviceEnv(twilioURL string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OUTDIAL_") {
			env = append(env, kv)
		}
	}
	return append(env, "OUTDIAL_TWILIO_API_URL="+twilioURL)
}

// apiKey runs `outdial apikey create` and returns the key (the last line).
func apiKey(t *testing.T, bin, dir string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "apikey", "create", "--data", dir, "--org", "acme")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("apikey create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	key := lines[len(lines)-1]
	if !strings.HasPrefix(key, "odk_") {
		t.Fatalf("apikey create printed %q", out)
	}
	return key
}

// service is one run of `outdial serve`.
type service struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // valid once exited is closed
}

// startService starts `outdial serve` and waits until it answers health.
func startService(t *testing.T, bin, dir, addr string, env []string, name string) *service {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--data", dir, "--addr", addr, "--log-level", "debug")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start serve: %v", err)
	}
	s := &service{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	t.Cleanup(s.kill)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/api/v1/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("serve (%s) exited before answering: %v\n%s", name, s.err, s.log())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve (%s) did not answer health within 20 s:\n%s", name, s.log())
		}
	}
}

// kill sends SIGKILL (no clean-up of any kind) and waits for the exit.
func (s *service) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// stop sends SIGTERM and expects exit status 0 within 10 s.
func (s *service) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("serve exited with %v after SIGTERM, want status 0\n%s", s.err, s.log())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("serve did not exit within 10 s of SIGTERM")
	}
}

// log returns the end of the service's output.
func (s *service) log() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// crashSnapshot copies the database files of dir (the process is dead, so
// they are consistent) and returns the ids of the attempts left dialing and
// in flight.
func crashSnapshot(t *testing.T, dir string) (dialing, inFlight map[int64]bool) {
	t.Helper()
	snap := t.TempDir()
	for _, name := range []string{"outdial.db", "outdial.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) && name != "outdial.db" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(snap, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key, err := store.LoadOrCreateKey("", filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(snap, "outdial.db"), sealer)
	if err != nil {
		t.Fatalf("open the crashed database: %v", err)
	}
	defer db.Close()
	list, err := db.UnfinishedAttempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dialing, inFlight = map[int64]bool{}, map[int64]bool{}
	for _, a := range list {
		switch a.State {
		case store.AttemptDialing:
			dialing[a.ID] = true
		case store.AttemptInFlight:
			inFlight[a.ID] = true
		}
	}
	return dialing, inFlight
}

// apiClient calls the API with an API key, failing the test on any answer
// but 200.
type apiClient struct {
	t    *testing.T
	base string
	key  string
}

func (c *apiClient) do(method, path string, body any) []byte {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if res.StatusCode != http.StatusOK {
		c.t.Fatalf("%s %s: status %d: %s", method, path, res.StatusCode, out)
	}
	return out
}

func (c *apiClient) obj(method, path string, body any) map[string]any {
	c.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(c.do(method, path, body), &m); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return m
}

func (c *apiClient) post(path string, body any) map[string]any {
	c.t.Helper()
	return c.obj(http.MethodPost, path, body)
}

func (c *apiClient) get(path string) map[string]any {
	c.t.Helper()
	return c.obj(http.MethodGet, path, nil)
}

// callingHoursOff turns the organization's calling hours off through
// PUT /api/v1/organizations/compliance. They are on by default (08:00-21:00
// in the callee's local time, API.md 12.2), so a test campaign run in real
// time would otherwise hold its calls whenever its numbers' zones are at
// night.
func (c *apiClient) callingHoursOff() {
	c.t.Helper()
	p := c.obj(http.MethodPut, "/api/v1/organizations/compliance",
		map[string]any{"calling_hours": map[string]any{"enabled": false}})
	if ch, _ := p["calling_hours"].(map[string]any); ch["enabled"] != false {
		c.t.Fatalf("PUT compliance answered %v, want calling_hours disabled", p)
	}
}

// calls returns every call attempt of campaign id, following the pages.
func (c *apiClient) calls(id int64) []map[string]any {
	c.t.Helper()
	var all []map[string]any
	after := 0.0
	for {
		var page struct {
			Calls []map[string]any `json:"calls"`
		}
		b := c.do(http.MethodGet, fmt.Sprintf("/api/v1/campaign/%d/calls?limit=1000&after_id=%d", id, int64(after)), nil)
		if err := json.Unmarshal(b, &page); err != nil {
			c.t.Fatal(err)
		}
		if len(page.Calls) == 0 {
			return all
		}
		all = append(all, page.Calls...)
		after = page.Calls[len(page.Calls)-1]["id"].(float64)
	}
}

// report returns campaign id's CSV report as one map per row.
func (c *apiClient) report(id int64) []map[string]string {
	c.t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(c.do(http.MethodGet, fmt.Sprintf("/api/v1/campaign/%d/report", id), nil))).ReadAll()
	if err != nil || len(recs) == 0 {
		c.t.Fatalf("report: %v (%d records)", err, len(recs))
	}
	out := make([]map[string]string, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		m := make(map[string]string, len(rec))
		for i, v := range rec {
			m[recs[0][i]] = v
		}
		out = append(out, m)
	}
	return out
}

// putUpload PUTs body to a presigned upload URL as a client does.
func putUpload(t *testing.T, url string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/csv")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("upload: status %d: %s", res.StatusCode, b)
	}
}
