package web_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/web"
)

// rawAnswer is an answer read to its end: status, headers, body.
type rawAnswer struct {
	status int
	header http.Header
	body   []byte
}

// sendRaw sends method path with key (none when "") to base and reads the
// answer without following redirects or decoding anything.
func sendRaw(t *testing.T, base, method, path, key string) rawAnswer {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return rawAnswer{status: res.StatusCode, header: res.Header, body: body}
}

// TestHeadAnswersLikeGet: HEAD on GET routes, public and authenticated,
// answers with GET's status and headers and no body, success or error
// alike, through the real router. Content-Length may be absent from a HEAD
// answer (the report, whose rows HEAD does not read); when present it is
// GET's.
func TestHeadAnswersLikeGet(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 3)
	for _, tc := range []struct {
		name, path, key string
		status          int
	}{
		{"health", healthPath, "", http.StatusOK},
		{"openapi", "/api/v1/openapi.json", "", http.StatusOK},
		{"campaign", campaignPath(cid), ce.keyA, http.StatusOK},
		{"campaigns", campaignsPath + "?limit=2", ce.keyA, http.StatusOK},
		{"report", campaignOp(cid, "report"), ce.keyA, http.StatusOK},
		{"calls", campaignOp(cid, "calls"), ce.keyA, http.StatusOK},
		{"campaign of another organization", campaignPath(cid), ce.keyB, http.StatusNotFound},
		{"report of another organization", campaignOp(cid, "report"), ce.keyB, http.StatusNotFound},
		{"campaign id not an integer", campaignPath(0) + "x", ce.keyA, http.StatusUnprocessableEntity},
		{"campaign without a key", campaignPath(cid), "", http.StatusUnauthorized},
		{"unknown path", "/api/v1/nope", ce.keyA, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := sendRaw(t, ce.srv.URL, http.MethodGet, tc.path, tc.key)
			head := sendRaw(t, ce.srv.URL, http.MethodHead, tc.path, tc.key)
			if get.status != tc.status {
				t.Fatalf("GET status = %d, want %d: %s", get.status, tc.status, get.body)
			}
			if head.status != get.status {
				t.Errorf("HEAD status = %d, want GET's %d", head.status, get.status)
			}
			if len(head.body) != 0 {
				t.Errorf("HEAD body = %q, want none", head.body)
			}
			if len(get.body) == 0 {
				t.Errorf("GET body is empty")
			}
			if tc.name == "report" && head.header.Get("Content-Length") != "" {
				// net/http counts a Content-Length only from a body the
				// handler wrote: HEAD read the rows.
				t.Errorf("HEAD of the report has Content-Length %s: the rows were produced", head.header.Get("Content-Length"))
			}
			for name, want := range get.header {
				got, has := head.header[name]
				switch {
				case name == "Date":
				case name == "Content-Length" && !has:
				case !slices.Equal(got, want):
					t.Errorf("HEAD header %s = %q, want GET's %q", name, got, want)
				}
			}
			for name, v := range head.header {
				if _, has := get.header[name]; !has {
					t.Errorf("HEAD header %s = %q, which GET does not send", name, v)
				}
			}
		})
	}
}

// TestHeadOnlyWhereGetIs: a path without GET answers HEAD 405 with an Allow
// that lists no HEAD, the opt-out path (routed before the router) too;
// OPTIONS of a GET path lists HEAD.
func TestHeadOnlyWhereGetIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{campaignOp(1, "start"), "/api/v1/s3/presigned-upload-url", "/api/v1/telephony/opt-out/1"} {
		r := sendRaw(t, e.srv.URL, http.MethodHead, path, e.keyA)
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s: status = %d, want %d", path, r.status, http.StatusMethodNotAllowed)
		}
		if got := r.header.Get("Allow"); got != "OPTIONS, POST" {
			t.Errorf("HEAD %s: Allow = %q, want %q", path, got, "OPTIONS, POST")
		}
		if len(r.body) != 0 {
			t.Errorf("HEAD %s: body = %q, want none", path, r.body)
		}
	}
	r := sendRaw(t, e.srv.URL, http.MethodOptions, campaignPath(1), e.keyA)
	if got := r.header.Get("Allow"); got != "DELETE, GET, HEAD, OPTIONS, PATCH" {
		t.Errorf("OPTIONS %s: Allow = %q, want %q", campaignPath(1), got, "DELETE, GET, HEAD, OPTIONS, PATCH")
	}
}

// TestRoutesRegisterHeadWithGet: Routes lists HEAD beside every GET and
// nowhere else.
func TestRoutesRegisterHeadWithGet(t *testing.T) {
	gets, heads := map[string]bool{}, map[string]bool{}
	for _, r := range openAPIServer(t).Routes() {
		switch r.Method {
		case http.MethodGet:
			gets[r.Path] = true
		case http.MethodHead:
			heads[r.Path] = true
		}
	}
	if len(gets) == 0 || fmt.Sprint(openAPIKeys(gets)) != fmt.Sprint(openAPIKeys(heads)) {
		t.Errorf("HEAD routes %v, want the GET routes %v", openAPIKeys(heads), openAPIKeys(gets))
	}
}

// jsonLogServer serves e's database behind a router whose logger writes
// JSON to the returned buffer, as `serve --log-format json` does.
func jsonLogServer(t *testing.T, e *testEnv) (*httptest.Server, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	srv := httptest.NewServer(openAPIValidated(t, web.New(web.Config{DB: e.db, Log: log, Version: testVersion, Carriers: e.carriers})))
	t.Cleanup(srv.Close)
	return srv, logs
}

// requestLine waits (a few ms at a time, 5 s at most) for the JSON request
// log line of method and route and returns it decoded. The line is written
// once the handler has returned, which may be just after the client has
// the whole answer.
func requestLine(t *testing.T, logs *lockedBuffer, method, route string) (map[string]any, string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("log line is not JSON (%v): %s", err, sc.Text())
			}
			if m["msg"] == "request" && m["method"] == method && m["route"] == route {
				return m, sc.Text()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request log line for %s %s:\n%s", method, route, logs.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRequestLogJSON: each request gets one JSON line, after it is
// answered, with the route pattern (never the raw path), status,
// duration_ms, bytes, and org_id when a key authenticated it.
func TestRequestLogJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, logs := jsonLogServer(t, e)
	e.addSecret(e.keyA, e.keyB)

	// An authenticated request for an id: the pattern, not the id.
	r := sendRaw(t, srv.URL, http.MethodGet, "/api/v1/campaign/123", e.keyA)
	if r.status != http.StatusNotFound {
		t.Fatalf("status = %d, want %d", r.status, http.StatusNotFound)
	}
	m, line := requestLine(t, logs, http.MethodGet, "/api/v1/campaign/:campaign_id")
	if strings.Contains(line, "123") {
		t.Errorf("the line holds the raw path's id: %s", line)
	}
	if m["status"] != float64(http.StatusNotFound) || m["org_id"] != float64(e.orgA) || m["level"] != "INFO" {
		t.Errorf("status, org_id, level = %v, %v, %v, want 404, %d, INFO: %s", m["status"], m["org_id"], m["level"], e.orgA, line)
	}
	if d, ok := m["duration_ms"].(float64); !ok || d < 0 || d > 5000 {
		t.Errorf("duration_ms = %v, want milliseconds: %s", m["duration_ms"], line)
	}
	if b, ok := m["bytes"].(float64); !ok || int(b) != len(r.body) {
		t.Errorf("bytes = %v, want %d: %s", m["bytes"], len(r.body), line)
	}

	// A success of organization B, with a query string that is not logged.
	sendRaw(t, srv.URL, http.MethodGet, "/api/v1/workflow?limit=5", e.keyB)
	m, line = requestLine(t, logs, http.MethodGet, "/api/v1/workflow")
	if m["status"] != float64(http.StatusOK) || m["org_id"] != float64(e.orgB) || strings.Contains(line, "limit") {
		t.Errorf("GET /api/v1/workflow: %s", line)
	}

	for _, tc := range []struct {
		method, path, key, route string
		status                   int
	}{
		{http.MethodGet, healthPath, "", healthPath, http.StatusOK},
		{http.MethodHead, healthPath, "", healthPath, http.StatusOK},
		{http.MethodGet, "/api/v1/campaign/7/report", "", "/api/v1/campaign/:campaign_id/report", http.StatusUnauthorized},
		{http.MethodHead, "/api/v1/campaign/7/start", e.keyA, "/api/v1/campaign/:campaign_id/start", http.StatusMethodNotAllowed},
		{http.MethodOptions, "/api/v1/workflow/9", "", "/api/v1/workflow/:workflow_id", http.StatusOK},
		{http.MethodGet, "/api/v1/campaign/", e.keyA, "/api/v1/campaign", http.StatusMovedPermanently},
		{http.MethodPost, "/api/v1/telephony/opt-out/42?t=secret-token", "", "/api/v1/telephony/opt-out/:attempt_id", http.StatusServiceUnavailable},
		{http.MethodPost, "/api/v1/telephony/twilio/status/42?t=secret-token", "", "/api/v1/telephony/:provider/status/:attempt_id", http.StatusServiceUnavailable},
		{http.MethodDelete, "/api/v1/nope/+14155550100", e.keyA, "not_found", http.StatusNotFound},
	} {
		r := sendRaw(t, srv.URL, tc.method, tc.path, tc.key)
		if r.status != tc.status {
			t.Errorf("%s %s: status = %d, want %d", tc.method, tc.path, r.status, tc.status)
			continue
		}
		m, line := requestLine(t, logs, tc.method, tc.route)
		if m["status"] != float64(tc.status) {
			t.Errorf("%s %s: logged status %v, want %d: %s", tc.method, tc.path, m["status"], tc.status, line)
		}
		if _, has := m["org_id"]; has && tc.key == "" {
			t.Errorf("%s %s: org_id logged for an unauthenticated request: %s", tc.method, tc.path, line)
		}
		if tc.method == http.MethodHead && m["bytes"] != float64(0) {
			t.Errorf("%s %s: bytes = %v, want 0 (no body is sent): %s", tc.method, tc.path, m["bytes"], line)
		}
	}
	all := logs.String()
	for _, leak := range []string{"secret-token", "+14155550100", "4155550100", "/42", "/7/", "/9"} {
		if strings.Contains(all, leak) {
			t.Errorf("request log holds %q:\n%s", leak, all)
		}
	}
}

// TestRequestLogRoutesOutsideTheRouter: the object store's requests are
// logged with its prefix pattern, in the harness's text format too.
func TestRequestLogRoutesOutsideTheRouter(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	ce.upload(ce.keyA, "phone_number\n+14155550100\n")
	deadline := time.Now().Add(5 * time.Second)
	want := []string{
		`msg=request method=POST route=/api/v1/s3/presigned-upload-url status=200 `,
		`msg=request method=PUT route=/outdial/*key status=200 `,
	}
	for _, w := range want {
		for !strings.Contains(ce.logs.String(), w) {
			if time.Now().After(deadline) {
				t.Fatalf("no log line with %q:\n%s", w, ce.logs.String())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}
