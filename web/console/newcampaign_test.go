package console_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
)

// The new-campaign page through the real router, with the bundled object
// store on the test server's listener as serve wires it: the page and its
// selects, the sign-in redirect, HEAD, the CSRF and origin checks of its
// form, a create (draft and started) with every setting, and a failed
// create shown again with its problems next to the fields and the values
// kept, a rejected file's problems as a table.

const newCampaignPath = "/console/campaigns/new"

// ncDefinition is a valid workflow whose prompt needs the column
// first_name.
const ncDefinition = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}}.","greeting":"Hi!"}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Thank them and hang up."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The message was delivered"}}]}`

// newUploadEnv is newEnv with the bundled object store mounted on the
// server's own listener, so uploads through presigned URLs work.
func newUploadEnv(t *testing.T) *env {
	t.Helper()
	secret := make([]byte, store.KeySize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	sealer, err := store.NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, err := store.Open(context.Background(), storetest.Location(t), sealer)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, clock: &clock{t: time.Now()}}
	k, key, err := db.CreateAPIKey(context.Background(), "acme", "console test", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	e.key, e.p = key.Reveal(), store.Principal{APIKeyID: k.ID, OrganizationID: k.OrganizationID}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	const maxUpload = 1 << 20
	objs, objHandler, err := objstore.NewBundled(objstore.BundledConfig{
		Dir: filepath.Join(dir, "objects"), Endpoint: srv.Listener.Addr().String(), Insecure: true,
		AccessKey:     "outdial-" + hex.EncodeToString(sealer.Derive("s3-access-key")[:8]),
		SecretKey:     base64.RawURLEncoding.EncodeToString(sealer.Derive("s3-secret-key")),
		MaxObjectSize: maxUpload, Logger: log,
	})
	if err != nil {
		t.Fatalf("bundled object store: %v", err)
	}
	srv.Config.Handler = web.New(web.Config{DB: db, Log: log, Version: "test", MaxUploadBytes: maxUpload,
		Uploads: objs, Objects: objHandler, ObjectsPrefix: objstore.PathPrefix,
		PublicURL: "http://" + srv.Listener.Addr().String()})
	srv.Start()
	e.srv = srv
	t.Cleanup(func() {
		srv.Close()
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	})
	return e
}

// ncSetup is what a campaign needs: a workflow and a Twilio configuration
// (the default outbound one) with a caller id unless bare.
type ncSetup struct{ workflowID, configID int64 }

func (b *browser) ncSetup(withNumber bool) ncSetup {
	b.e.t.Helper()
	csrf := b.csrf()
	call := func(path string, body any) map[string]any {
		a, m := b.apiJSON(http.MethodPost, path, body, "X-CSRF-Token", csrf)
		wantStatus(b.e.t, "POST "+path, a, http.StatusOK)
		return m
	}
	wf := call("/api/v1/workflow", map[string]any{"name": "greeting", "workflow_definition": rawJSON(ncDefinition)})
	cfg := call("/api/v1/organizations/telephony-configs", map[string]any{"name": "main", "is_default_outbound": true,
		"config": map[string]any{"provider": "twilio", "account_sid": "AC" + strings.Repeat("0", 32), "auth_token": strings.Repeat("a", 32)}})
	s := ncSetup{workflowID: int64(wf["id"].(float64)), configID: int64(cfg["id"].(float64))}
	if withNumber {
		call(fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", s.configID),
			map[string]any{"address": "+14155550100", "is_default_caller_id": true})
	}
	return s
}

// rawJSON is JSON text sent as is.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// upload presigns csv through the API with the session (as newcampaign.js
// does) and PUTs it to the presigned URL; it returns the file_key.
func (b *browser) upload(csv string) string {
	b.e.t.Helper()
	a, p := b.apiJSON(http.MethodPost, "/api/v1/s3/presigned-upload-url",
		map[string]any{"file_name": "contacts.csv", "file_size": len(csv), "content_type": "text/csv"}, "X-CSRF-Token", b.csrf())
	wantStatus(b.e.t, "presign", a, http.StatusOK)
	u, _ := p["upload_url"].(string)
	if !strings.HasPrefix(u, b.e.srv.URL+"/") {
		b.e.t.Fatalf("upload_url %q is not on the server's origin %s", u, b.e.srv.URL)
	}
	req, err := http.NewRequest(http.MethodPut, u, strings.NewReader(csv))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/csv")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.e.t.Fatalf("PUT upload: %d %s", res.StatusCode, body)
	}
	return p["file_key"].(string)
}

// ncForm is a complete form for setup s and the upload key.
func ncForm(b *browser, s ncSetup, key string) url.Values {
	return url.Values{
		"csrf_token": {b.csrf()}, "name": {"spring <b>reminders</b>"},
		"source_id": {key}, "source_name": {"contacts.csv"}, "source_size": {"40"},
		"workflow_id":                {fmt.Sprint(s.workflowID)},
		"telephony_configuration_id": {fmt.Sprint(s.configID)},
		"max_concurrency":            {"3"}, "rate_limit_per_second": {"2.5"},
		"retry_enabled": {"on"}, "max_retries": {"2"}, "retry_delay_seconds": {"300"},
		"retry_on_no_answer": {"on"}, "retry_on_voicemail": {"on"},
		"schedule_enabled": {"on"}, "schedule_timezone": {"Europe/Paris"},
		"slot-0-day": {"0", "2", "4"}, "slot-0-start": {"09:00"}, "slot-0-end": {"12:00"},
		"slot-1-day": {"5"}, "slot-1-start": {"22:00"}, "slot-1-end": {"24:00"},
		"breaker_enabled": {"on"}, "breaker_failure_threshold": {"0.25"},
		"breaker_window_seconds": {"60"}, "breaker_min_calls_in_window": {"4"},
		"action": {"draft"},
	}
}

// campaigns lists the organization's campaigns through the API.
func (b *browser) campaigns() []any {
	b.e.t.Helper()
	a, m := b.apiJSON(http.MethodGet, "/api/v1/campaign", nil)
	wantStatus(b.e.t, "list campaigns", a, http.StatusOK)
	return m["campaigns"].([]any)
}

func TestNewCampaignSignedOut(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	a := b.get(newCampaignPath)
	wantStatus(t, "GET signed out", a, http.StatusSeeOther)
	if got, want := a.header.Get("Location"), "/console/sign-in?next="+url.QueryEscape(newCampaignPath); got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	a = b.do(http.MethodHead, newCampaignPath, nil)
	wantStatus(t, "HEAD signed out", a, http.StatusSeeOther)
	a = b.postForm(newCampaignPath, url.Values{"name": {"x"}})
	wantStatus(t, "POST signed out", a, http.StatusForbidden)
}

func TestNewCampaignHead(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	get := b.get(newCampaignPath)
	wantStatus(t, "GET", get, http.StatusOK)
	head := b.do(http.MethodHead, newCampaignPath, nil)
	wantStatus(t, "HEAD", head, http.StatusOK)
	if head.body != "" {
		t.Errorf("HEAD has a body of %d bytes", len(head.body))
	}
	for _, h := range []string{"Content-Type", "Content-Security-Policy", "Cache-Control"} {
		if head.header.Get(h) != get.header.Get(h) {
			t.Errorf("HEAD %s = %q, GET %q", h, head.header.Get(h), get.header.Get(h))
		}
	}
}

// Without the session's CSRF token, or from another site, the form is
// refused and nothing is created.
func TestNewCampaignNeedsCSRF(t *testing.T) {
	e := newUploadEnv(t)
	b := e.browser()
	b.signIn(e.key)
	s := b.ncSetup(true)
	form := ncForm(b, s, b.upload("phone_number,first_name\n+14155550101,Ada\n"))

	noToken := url.Values{}
	for k, v := range form {
		if k != "csrf_token" {
			noToken[k] = v
		}
	}
	wantStatus(t, "no token", b.postForm(newCampaignPath, noToken), http.StatusForbidden)
	wrong := url.Values{}
	for k, v := range form {
		wrong[k] = v
	}
	wrong.Set("csrf_token", "not-the-token")
	wantStatus(t, "wrong token", b.postForm(newCampaignPath, wrong), http.StatusForbidden)
	a := b.do(http.MethodPost, newCampaignPath, strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Origin", "http://evil.example")
	wantStatus(t, "other origin", a, http.StatusForbidden)
	if n := len(b.campaigns()); n != 0 {
		t.Fatalf("%d campaigns created by refused forms", n)
	}
}

// The page lists the organization's workflows and configurations, the
// default one selected, and every field has a label.
func TestNewCampaignPage(t *testing.T) {
	e := newUploadEnv(t)
	b := e.browser()
	b.signIn(e.key)
	s := b.ncSetup(false)
	a := b.get(newCampaignPath)
	wantStatus(t, "GET", a, http.StatusOK)
	for _, want := range []string{
		fmt.Sprintf(`<option value="%d" selected>greeting</option>`, s.workflowID),
		fmt.Sprintf(`<option value="%d" data-rate="1" selected>main (twilio, default, no phone number)</option>`, s.configID),
		`<progress id="upload-progress" max="100" value="0"`,
		`name="slot-0-start" value="09:00"`,
		`<template id="slot-template">`,
		`aria-current="page">New campaign</a>`,
	} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	checkLabelled(t, a.body)
}

// checkLabelled fails the test for a form control of page without a
// <label for> naming its id (or an aria-label).
func checkLabelled(t *testing.T, page string) {
	t.Helper()
	controls := regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`).FindAllString(page, -1)
	if len(controls) < 20 {
		t.Fatalf("only %d form controls on the page", len(controls))
	}
	idOf := regexp.MustCompile(`\bid="([^"]+)"`)
	for _, c := range controls {
		if strings.Contains(c, `type="hidden"`) || strings.Contains(c, "aria-label=") {
			continue
		}
		m := idOf.FindStringSubmatch(c)
		if m == nil {
			t.Errorf("a control without an id: %s", c)
			continue
		}
		if !strings.Contains(page, `<label for="`+m[1]+`"`) {
			t.Errorf("no label for %s", c)
		}
	}
}

// A draft created from the form has every setting as entered: a slot row
// of three days is three slots.
func TestNewCampaignCreatesDraft(t *testing.T) {
	e := newUploadEnv(t)
	b := e.browser()
	b.signIn(e.key)
	s := b.ncSetup(true)
	key := b.upload("phone_number,first_name\n+14155550101,Ada\n+14155550102,Grace\n")
	a := b.postForm(newCampaignPath, ncForm(b, s, key))
	wantStatus(t, "create", a, http.StatusSeeOther)
	loc := a.header.Get("Location")
	var id int64
	if _, err := fmt.Sscanf(loc, "/console/campaigns/%d", &id); err != nil || loc != fmt.Sprintf("/console/campaigns/%d", id) {
		t.Fatalf("Location = %q, want the campaign's page", loc)
	}
	_, c := b.apiJSON(http.MethodGet, fmt.Sprintf("/api/v1/campaign/%d", id), nil)
	check := func(name string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("name", c["name"], "spring <b>reminders</b>")
	check("state", c["state"], "draft")
	check("total_rows", c["total_rows"], 2)
	check("workflow_id", c["workflow_id"], s.workflowID)
	check("max_concurrency", c["max_concurrency"], 3)
	check("rate_limit_per_second", c["rate_limit_per_second"], 2.5)
	check("retry_config", c["retry_config"], map[string]any{"enabled": true, "max_retries": 2, "retry_delay_seconds": 300,
		"retry_on_busy": false, "retry_on_no_answer": true, "retry_on_voicemail": true})
	check("circuit_breaker", c["circuit_breaker"], map[string]any{"enabled": true, "failure_threshold": 0.25,
		"window_seconds": 60, "min_calls_in_window": 4})
	sched, _ := c["schedule_config"].(map[string]any)
	check("schedule timezone", sched["timezone"], "Europe/Paris")
	check("schedule slots", sched["slots"], []any{
		map[string]any{"day_of_week": 0, "start_time": "09:00", "end_time": "12:00"},
		map[string]any{"day_of_week": 2, "start_time": "09:00", "end_time": "12:00"},
		map[string]any{"day_of_week": 4, "start_time": "09:00", "end_time": "12:00"},
		map[string]any{"day_of_week": 5, "start_time": "22:00", "end_time": "24:00"},
	})
}

// "Create and start" starts the campaign; without a number to call from it
// stays a draft, and the page says why and links to it.
func TestNewCampaignCreatesAndStarts(t *testing.T) {
	e := newUploadEnv(t)
	b := e.browser()
	b.signIn(e.key)
	s := b.ncSetup(true)
	form := ncForm(b, s, b.upload("phone_number,first_name\n+14155550101,Ada\n"))
	form.Set("action", "start")
	form.Del("schedule_enabled")
	a := b.postForm(newCampaignPath, form)
	wantStatus(t, "create and start", a, http.StatusSeeOther)
	var id int64
	fmt.Sscanf(a.header.Get("Location"), "/console/campaigns/%d", &id)
	_, c := b.apiJSON(http.MethodGet, fmt.Sprintf("/api/v1/campaign/%d", id), nil)
	if c["state"] != "running" && c["state"] != "completed" {
		t.Errorf("state = %v, want running", c["state"])
	}
	if c["schedule_config"] != nil {
		t.Errorf("schedule_config = %v with the window off, want null", c["schedule_config"])
	}

	// A second configuration without a phone number.
	_, cfg := b.apiJSON(http.MethodPost, "/api/v1/organizations/telephony-configs", map[string]any{"name": "bare",
		"config": map[string]any{"provider": "twilio", "account_sid": "AC" + strings.Repeat("1", 32), "auth_token": strings.Repeat("b", 32)}},
		"X-CSRF-Token", b.csrf())
	form = ncForm(b, s, b.upload("phone_number,first_name\n+14155550101,Ada\n"))
	form.Set("action", "start")
	form.Set("telephony_configuration_id", fmt.Sprint(cfg["id"]))
	a = b.postForm(newCampaignPath, form)
	wantStatus(t, "create, start refused", a, http.StatusOK)
	list := b.campaigns()
	draft := list[0].(map[string]any)
	if draft["state"] != "draft" || len(list) != 2 {
		t.Fatalf("campaigns after the refused start: %v", list)
	}
	for _, want := range []string{"could not start", "has no phone number to call from",
		fmt.Sprintf(`href="/console/campaigns/%v"`, draft["id"]), "spring &lt;b&gt;reminders&lt;/b&gt;"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// The API's problems show next to their fields (and slot rows), every
// value as sent, and nothing is created.
func TestNewCampaignFieldProblems(t *testing.T) {
	e := newUploadEnv(t)
	b := e.browser()
	b.signIn(e.key)
	s := b.ncSetup(true)
	form := ncForm(b, s, b.upload("phone_number,first_name\n+14155550101,Ada\n"))
	form.Set("name", "")
	form.Set("max_concurrency", "0")
	form.Set("rate_limit_per_second", "fast")
	form.Set("max_retries", "11")
	form.Set("breaker_window_seconds", "5")
	form.Set("schedule_timezone", "Mars/Olympus")
	form.Set("slot-1-start", "23:00")
	form.Set("slot-1-end", "22:00")
	form["slot-2-day"] = nil
	form.Set("slot-2-start", "08:00")
	form.Set("slot-2-end", "09:00")
	form.Set("default_country", "ZZ")

	// A row without a day is the console's own problem: the API is not asked.
	a := b.postForm(newCampaignPath, form)
	wantStatus(t, "a row without a day", a, http.StatusUnprocessableEntity)
	wantIn(t, a.body, `id="slot-2-problems"`, "Choose at least one day.", `name="slot-2-start" value="08:00"`)

	form.Set("slot-2-day", "6")
	a = b.postForm(newCampaignPath, form)
	wantStatus(t, "bad fields", a, http.StatusUnprocessableEntity)
	problem := func(field, text string) string {
		return fmt.Sprintf(`<ul class="field-problems" id="%s-problems"><li>%s`, field, text)
	}
	wantIn(t, a.body,
		`The campaign was not created`,
		problem("name", "String should have at least 1 character"),
		problem("max_concurrency", "Input should be greater than or equal to 1"),
		problem("rate_limit_per_second", "Input should be a valid number"),
		problem("max_retries", "Input should be less than or equal to 10"),
		problem("breaker_window_seconds", "Input should be greater than or equal to 10"),
		problem("schedule_timezone", ""),
		problem("default_country", ""),
		`<ul class="field-problems" id="slot-1-problems"><li>start_time must be before end_time`,
		`id="max_concurrency" name="max_concurrency" type="number" min="1" max="1000" step="1" value="0" aria-invalid="true" aria-describedby="max_concurrency-problems"`,
		`value="fast"`, `value="Mars/Olympus"`, `value="ZZ"`, `value="11"`,
		`name="slot-1-start" value="23:00"`, `name="slot-1-end" value="22:00"`,
		`name="slot-0-day" value="2" checked`, `name="slot-2-day" value="6" checked`,
		`name="source_id" id="source_id" value="`+form.Get("source_id")+`"`,
		`Uploaded contacts.csv (40 bytes).`,
		fmt.Sprintf(`<option value="%d" selected>greeting</option>`, s.workflowID),
		"id=\"retry_on_busy\" name=\"retry_on_busy\" value=\"on\">\n",
		`id="retry_on_voicemail" name="retry_on_voicemail" value="on" checked>`,
	)
	if n := len(b.campaigns()); n != 0 {
		t.Fatalf("%d campaigns created by a form with problems", n)
	}

	// No file at all: the file field says so.
	form = ncForm(b, s, "")
	a = b.postForm(newCampaignPath, form)
	wantStatus(t, "no file", a, http.StatusUnprocessableEntity)
	wantIn(t, a.body, problem("source_id", "Choose a CSV file of contacts"))
}

// A rejected file's problems are a table of row, column, value and
// problem; a cell of markup is text.
func TestNewCampaignCSVProblemsTable(t *testing.T) {
	e := newUploadEnv(t)
	b := e.browser()
	b.signIn(e.key)
	s := b.ncSetup(true)
	csv := "phone_number,first_name\n" +
		"+14155550101,Ada\n" +
		"12345,Bob\n" +
		"+14155550103\n" +
		"+14155550104,\n" +
		"<img src=x onerror=alert(1)>,Eve\n"
	a := b.postForm(newCampaignPath, ncForm(b, s, b.upload(csv)))
	wantStatus(t, "rejected file", a, http.StatusUnprocessableEntity)
	rows := regexp.MustCompile(`(?s)<tr>\s*<td class="num">(.*?)</td>\s*<td>(.*?)</td>\s*<td class="cell">(.*?)</td>\s*<td>(.*?)</td>`).FindAllStringSubmatch(a.body, -1)
	var got []string
	for _, r := range rows {
		got = append(got, strings.Join(r[1:], " | "))
	}
	want := []string{
		"3 | <code>phone_number</code> | <code>12345</code> | phone_number is not a valid phone number",
		"4 | — |  | The row has 1 fields, the header has 2",
		"5 | <code>first_name</code> |  | Column first_name is empty but the workflow uses {{first_name}}",
		"6 | <code>phone_number</code> | <code>&lt;img src=x onerror=alert(1)&gt;</code> | phone_number is not a valid phone number",
	}
	if len(got) != len(want) {
		t.Fatalf("table rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("row %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
	if strings.Contains(a.body, "<img") {
		t.Error("the cell's markup is on the page as markup")
	}

	// A file without a phone_number column is a problem of the whole file.
	a = b.postForm(newCampaignPath, ncForm(b, s, b.upload("number,first_name\n+14155550101,Ada\n")))
	wantStatus(t, "no phone column", a, http.StatusUnprocessableEntity)
	wantIn(t, a.body, `<td class="num">whole file</td>`, `<code>phone_number</code>`, "The header has no phone_number column")
	if n := len(b.campaigns()); n != 0 {
		t.Fatalf("%d campaigns created from rejected files", n)
	}
}

// wantIn fails the test for each of wants that body lacks.
func wantIn(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %s", w)
		}
	}
}
