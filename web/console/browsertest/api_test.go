package browsertest_test

// What a test prepares through the public API, as a client would: an
// organization and its key, a Twilio configuration with a caller id, a
// workflow, an uploaded CSV, a campaign.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// apiTimeout bounds one API request of a test.
const apiTimeout = 20 * time.Second

// org is an organization of its own for one test, so that tests sharing the
// package's server never see each other's campaigns.
type org struct {
	t    *testing.T
	id   int64
	name string
	key  string // its API key, in full
	n    int    // numbers' block; see number
}

// orgCount numbers the organizations the package's tests create.
var orgCount atomic.Int64

// notName matches what an organization name made from a test name drops.
var notName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// newOrg creates an organization named after the test and an API key for
// it through the store (as `outdial apikey create` does), then turns its
// calling hours off through the API (PUT /api/v1/organizations/compliance,
// API.md 12.2), so that its campaigns dial whatever the time of day.
func newOrg(t *testing.T) *org {
	t.Helper()
	n := int(orgCount.Add(1))
	name := fmt.Sprintf("%s-%d", notName.ReplaceAllString(t.Name(), "-"), n)
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	k, secret, err := srv.db.CreateAPIKey(ctx, name, "browser test", store.RoleAdmin)
	if err != nil {
		t.Fatalf("create API key: %v", err)
	}
	o := &org{t: t, id: k.OrganizationID, name: name, key: secret.Reveal(), n: n}
	policy := o.call(http.MethodPut, "/api/v1/organizations/compliance",
		map[string]any{"calling_hours": map[string]any{"enabled": false}}, http.StatusOK)
	if hours, _ := policy["calling_hours"].(map[string]any); hours["enabled"] != false {
		t.Fatalf("calling hours after PUT: %v", policy["calling_hours"])
	}
	return o
}

// number returns the i-th phone number (0..19) of the organization, in
// E.164: numbers no other organization of the package uses, so a test can
// script their calls with srv.setScript.
func (o *org) number(i int) string {
	if i < 0 || i >= 20 {
		o.t.Fatalf("number(%d): an organization has numbers 0..19", i)
	}
	return fmt.Sprintf("+1415555%04d", 1000+o.n*20+i)
}

// do sends a request with the organization's key and returns the status and
// the body. body is sent as JSON unless it is nil.
func (o *org) do(method, path string, body any) (int, []byte) {
	o.t.Helper()
	return apiRequest(o.t, o.key, method, path, body)
}

// call is do, failing the test unless the status is want, and decodes the
// answer as a JSON object (nil for an empty body).
func (o *org) call(method, path string, body any, want int) map[string]any {
	o.t.Helper()
	status, raw := o.do(method, path, body)
	if status != want {
		o.t.Fatalf("%s %s: status = %d, want %d: %s", method, path, status, want, raw)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		o.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return out
}

// apiRequest sends one request to the package's server with key ("" for
// none) and returns the status and body.
func apiRequest(t *testing.T, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("encode %s %s: %v", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, srv.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, raw
}

// idOf returns the integer field name of a decoded JSON object.
func idOf(t *testing.T, obj map[string]any, name string) int64 {
	t.Helper()
	v, ok := obj[name].(float64)
	if !ok {
		t.Fatalf("%s = %v in %v, want a number", name, obj[name], obj)
	}
	return int64(v)
}

// workflowDefinition is a valid two-node workflow whose templates use the
// column first_name.
const workflowDefinition = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}}.","greeting":"Hi {{first_name | default there}}!"}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Thank them and hang up."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The message was delivered"}}]}`

// dialSetup is what an organization needs before it can create and start
// campaigns: a Twilio configuration with the simulator's credentials, made
// the default for outbound calls, with number(19) as its default caller id,
// and a valid workflow.
type dialSetup struct {
	configID, workflowID int64
}

// readyToDial creates o's dialSetup.
func (o *org) readyToDial() dialSetup {
	o.t.Helper()
	cfg := o.call(http.MethodPost, "/api/v1/organizations/telephony-configs", map[string]any{
		"name": "simulated twilio", "is_default_outbound": true, "config": map[string]any{
			"provider": "twilio", "account_sid": srv.sim.AccountSID(), "auth_token": srv.sim.AuthToken()},
	}, http.StatusOK)
	configID := idOf(o.t, cfg, "id")
	o.call(http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", configID),
		map[string]any{"address": o.number(19), "label": "main line", "is_default_caller_id": true}, http.StatusOK)
	wf := o.call(http.MethodPost, "/api/v1/workflow",
		map[string]any{"name": "greeting", "workflow_definition": json.RawMessage(workflowDefinition)}, http.StatusOK)
	return dialSetup{configID: configID, workflowID: idOf(o.t, wf, "id")}
}

// contactsCSV is a contacts file of the organization's first n numbers
// (n ≤ 19), with a first_name column.
func (o *org) contactsCSV(n int) string {
	var b strings.Builder
	b.WriteString("phone_number,first_name\n")
	for i := range n {
		fmt.Fprintf(&b, "%s,Contact %d\n", o.number(i), i)
	}
	return b.String()
}

// upload presigns an upload of csv and PUTs it to the presigned URL, as the
// console and any client do, and returns its file_key.
func (o *org) upload(csv string) string {
	o.t.Helper()
	p := o.call(http.MethodPost, "/api/v1/s3/presigned-upload-url",
		map[string]any{"file_name": "contacts.csv", "file_size": len(csv)}, http.StatusOK)
	uploadURL, _ := p["upload_url"].(string)
	key, _ := p["file_key"].(string)
	if uploadURL == "" || key == "" {
		o.t.Fatalf("presigned upload: %v", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, uploadURL, strings.NewReader(csv))
	if err != nil {
		o.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		o.t.Fatalf("upload: %v", err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		o.t.Fatalf("upload: status = %d, want %d: %s", resp.StatusCode, http.StatusOK, body)
	}
	return key
}

// createCampaign uploads o.contactsCSV(contacts) and creates a draft
// campaign named name from it with the setup's workflow, at most 5 calls at
// once and no retries (a retry would wait minutes); it returns the
// campaign.
func (o *org) createCampaign(s dialSetup, name string, contacts int) map[string]any {
	o.t.Helper()
	key := o.upload(o.contactsCSV(contacts))
	return o.call(http.MethodPost, "/api/v1/campaign",
		map[string]any{"name": name, "workflow_id": s.workflowID, "source_id": key, "max_concurrency": 5,
			"retry_config": map[string]any{"enabled": false}}, http.StatusOK)
}

// campaign GETs campaign id.
func (o *org) campaign(id int64) map[string]any {
	o.t.Helper()
	return o.call(http.MethodGet, fmt.Sprintf("/api/v1/campaign/%d", id), nil, http.StatusOK)
}

// waitCampaign asks for campaign id until cond holds for it, and returns
// it; it fails the test when cond does not hold within apiTimeout. The
// requests are a few milliseconds apart: each one waits for the previous
// answer, and the server's own work is what the test waits for.
func (o *org) waitCampaign(id int64, what string, cond func(map[string]any) bool) map[string]any {
	o.t.Helper()
	deadline := time.Now().Add(apiTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		c := o.campaign(id)
		if cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("campaign %d: still not %s after %v: %v", id, what, apiTimeout, c)
		}
		<-tick.C
	}
}
