package cmd_test

// TestProvidersEndToEnd: the real binary, driven through its HTTP API like a
// client, runs one small campaign on each provider but Twilio (covered by
// crash_test.go) against that provider's simulator.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/cmd"
)

const (
	e2eContacts    = 6
	e2eConcurrency = 2
)

func TestProvidersEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := cmd.BuildBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	providers, simEnv := e2eProviders(t)
	// Twilio is not under test: its URL points at a port nothing listens on.
	env := append(serviceEnv("http://"+freeAddr(t)), simEnv...)
	key := apiKey(t, bin, dir, env)
	svc := startService(t, bin, dir, addr, env, "providers")

	wfc := &apiClient{t: t, base: "http://" + addr, key: key}
	wfc.callingHoursOff()
	wf := wfc.post("/api/v1/workflow", map[string]any{"name": "reminder", "workflow_definition": json.RawMessage(crashWorkflow)})

	for i, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			c := &apiClient{t: t, base: "http://" + addr, key: key}
			e2eRun(t, c, svc, p, i, wf["id"])
		})
	}
	svc.stop(t)
}

// e2eRun runs provider p's campaign (p is the n-th provider: its contacts'
// numbers are its own) and checks every call.
func e2eRun(t *testing.T, c *apiClient, svc *service, p *e2eProvider, n int, workflowID any) {
	// The configuration; the application field is left out so the service
	// creates the application at the provider.
	if p.appField != "" {
		if _, ok := p.config[p.appField]; ok {
			t.Fatalf("config already holds %s", p.appField)
		}
	}
	cfg := c.post("/api/v1/organizations/telephony-configs", map[string]any{"name": p.name, "config": p.config})
	cfgID := int64(cfg["id"].(float64))
	creds, _ := cfg["credentials"].(map[string]any)
	if cfg["provider"] != p.name || creds == nil {
		t.Fatalf("configuration created: %v", cfg)
	}
	if p.appField != "" {
		if id, _ := creds[p.appField].(string); id == "" {
			t.Fatalf("credentials %v: no %s auto-created", creds, p.appField)
		}
		p.checkApp(t, creds)
		// The stored configuration holds it too.
		got := c.get(fmt.Sprintf("/api/v1/organizations/telephony-configs/%d", cfgID))
		if g, _ := got["credentials"].(map[string]any); g == nil || g[p.appField] != creds[p.appField] {
			t.Errorf("GET configuration: credentials %v, want %s %v", got["credentials"], p.appField, creds[p.appField])
		}
	}
	if p.callerID != "" {
		c.post(fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", cfgID),
			map[string]any{"address": p.callerID, "is_default_caller_id": true})
	}

	// The contacts and what each is scripted to do.
	var csvBody bytes.Buffer
	csvBody.WriteString("phone_number,first_name,city\n")
	want := map[string]string{}   // outcome by number (digits)
	names := map[string]string{}  // first_name by number (digits)
	phones := map[string]string{} // digits by E.164 number
	for j, o := range p.outcomes {
		phone := fmt.Sprintf("+1415555%d%03d", 2+n, j)
		fmt.Fprintf(&csvBody, "%s,Name%d%d,City%d\n", phone, n, j, j)
		want[e2eDigits(phone)], names[e2eDigits(phone)], phones[phone] = o, fmt.Sprintf("Name%d%d", n, j), e2eDigits(phone)
	}
	p.script(want)
	up := c.post("/api/v1/s3/presigned-upload-url", map[string]any{
		"file_name": p.name + ".csv", "file_size": csvBody.Len(), "content_type": "text/csv",
	})
	putUpload(t, up["upload_url"].(string), csvBody.Bytes())

	camp := c.post("/api/v1/campaign", map[string]any{
		"name": p.name + " reminders", "workflow_id": workflowID, "source_id": up["file_key"],
		"telephony_configuration_id": cfgID, "max_concurrency": e2eConcurrency, "rate_limit_per_second": 50,
		"retry_config": map[string]any{"enabled": false},
	})
	campID := int64(camp["id"].(float64))
	if camp["total_rows"] != float64(e2eContacts) || camp["state"] != "draft" {
		t.Fatalf("campaign created: total_rows %v state %v, want %d draft", camp["total_rows"], camp["state"], e2eContacts)
	}
	c.post(fmt.Sprintf("/api/v1/campaign/%d/start", campID), nil)

	// Completed within 60 s.
	var final map[string]any
	deadline := time.Now().Add(60 * time.Second)
	for {
		final = c.get(fmt.Sprintf("/api/v1/campaign/%d", campID))
		if final["state"] == "completed" {
			break
		}
		if s := final["state"]; s != "running" || time.Now().After(deadline) {
			t.Fatalf("campaign is %v (want running, then completed within 60 s): %v\ncalls: %v\nservice log:\n%s",
				s, final, c.calls(campID), svc.log())
		}
		time.Sleep(25 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.final(ctx, e2eContacts); err != nil {
		t.Fatalf("simulated calls still running: %v", err)
	}
	failed := 0
	for _, o := range p.outcomes {
		if o != e2eAnswered {
			failed++
		}
	}
	for k, v := range map[string]int{"processed_rows": e2eContacts, "executed_count": e2eContacts,
		"total_queued_count": e2eContacts, "failed_rows": failed} {
		if final[k] != float64(v) {
			t.Errorf("%s = %v, want %d", k, final[k], v)
		}
	}

	// Each attempt: one per contact, done, with the scripted outcome.
	calls := c.calls(campID)
	if len(calls) != e2eContacts {
		t.Fatalf("%d call attempts, want %d: %v", len(calls), e2eContacts, calls)
	}
	attemptOf := map[string]int64{} // attempt id by number (digits)
	for _, a := range calls {
		phone, _ := a["phone_number"].(string)
		d, ok := phones[phone]
		if !ok {
			t.Errorf("attempt %v: unknown number %q", a["id"], phone)
			continue
		}
		attemptOf[d] = int64(a["id"].(float64))
		if a["state"] != "done" || a["attempt"] != 1.0 || a["outcome"] != want[d] {
			t.Errorf("attempt of %s: state %v attempt %v outcome %v (error %v), want done, 1, %s",
				phone, a["state"], a["attempt"], a["outcome"], a["error"], want[d])
		}
		if pid, _ := a["provider_call_id"].(string); pid == "" {
			t.Errorf("attempt of %s: no provider_call_id", phone)
		}
		if p.callerID != "" && a["caller_id"] != p.callerID {
			t.Errorf("attempt of %s: caller_id %v, want %s", phone, a["caller_id"], p.callerID)
		}
	}
	report := c.report(campID)
	if len(report) != e2eContacts {
		t.Errorf("report has %d rows, want %d", len(report), e2eContacts)
	}
	for _, r := range report {
		if d := phones[r["phone_number"]]; r["outcome"] != want[d] || r["attempts"] != "1" {
			t.Errorf("report row %v: want outcome %s, 1 attempt", r, want[d])
		}
	}

	// What the simulator saw: every contact called exactly once, never
	// more than max_concurrency calls at once, the greeting in the
	// answer of every answered call.
	seen := map[string]int{}
	for _, sc := range p.calls() {
		seen[sc.to]++
		if want[sc.to] != e2eAnswered {
			continue
		}
		if p.name == "ari" {
			if !sc.hungUp {
				t.Errorf("answered ARI call to %s was not hung up by the service", sc.to)
			}
			continue
		}
		greeting := fmt.Sprintf("Hello %s, this is a reminder.", names[sc.to])
		if !strings.Contains(sc.markup, greeting) {
			t.Errorf("answer to %s: %q does not contain the greeting %q", sc.to, sc.markup, greeting)
		}
		if p.name == "telnyx" && !sc.hungUp {
			t.Errorf("answered Telnyx call to %s was not hung up by the service", sc.to)
		}
	}
	for d := range want {
		if seen[d] != 1 {
			t.Errorf("%s was called %d times, want exactly once", d, seen[d])
		}
	}
	if len(seen) != e2eContacts {
		t.Errorf("the simulator saw calls to %d numbers, want %d: %v", len(seen), e2eContacts, seen)
	}
	if peak := p.peak(); peak > e2eConcurrency || peak < 1 {
		t.Errorf("simulator peak in flight %d, want 1..%d", peak, e2eConcurrency)
	}

	// A forged status webhook for an answered attempt (it claims busy) is
	// refused; a genuine one coming late changes nothing either.
	if p.forge == nil {
		return
	}
	target := ""
	for d, o := range want {
		if o == e2eAnswered {
			target = d
			break
		}
	}
	if code := p.forge(t, ctx, target, true); code != http.StatusForbidden {
		t.Errorf("forged webhook for attempt %d: status %d, want 403", attemptOf[target], code)
	}
	// The same, genuinely signed, is accepted, and the final status the
	// attempt already has stays (a final status is applied once).
	if code := p.forge(t, ctx, target, false); code != http.StatusOK && code != http.StatusNoContent {
		t.Errorf("genuine late webhook for attempt %d: status %d, want 200", attemptOf[target], code)
	}
	for _, a := range c.calls(campID) {
		if int64(a["id"].(float64)) == attemptOf[target] && a["outcome"] != e2eAnswered {
			t.Errorf("after the late webhooks attempt %d is %v, want answered", attemptOf[target], a["outcome"])
		}
	}
}
