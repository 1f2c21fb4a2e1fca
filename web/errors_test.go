package web_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "main", false, validConfig("twilio")), "id")
	notFound := []struct{ method, path string }{
		{http.MethodGet, "/nothing"}, // "/" redirects to the console (console_test.go)
		{http.MethodGet, "/api/v1/nothing"},
		{http.MethodGet, "/api/v2/health"},
		{http.MethodPost, "/api/v1/organizations/telephony-configs/1/phone-numbers/2/extra"},
		{http.MethodGet, "/api/v1/organizations"},
	}
	for _, tt := range notFound {
		for _, key := range []string{"", e.keyA} {
			wantDetail(t, e.do(tt.method, tt.path, key, nil), http.StatusNotFound, "Not Found")
		}
	}
	notAllowed := []struct{ method, path, allow string }{
		{http.MethodDelete, configsPath, "GET, HEAD, OPTIONS, POST"},
		{http.MethodPatch, configPath(cid), "DELETE, GET, HEAD, OPTIONS, PUT"},
		{http.MethodPost, configPath(cid), "DELETE, GET, HEAD, OPTIONS, PUT"},
		{http.MethodPost, providersPath, "GET, HEAD, OPTIONS"},
		{http.MethodGet, numberPath(cid, 1), "DELETE, OPTIONS, PUT"},
		{http.MethodDelete, numbersPath(cid), "GET, HEAD, OPTIONS, POST"},
	}
	for _, tt := range notAllowed {
		for _, key := range []string{"", e.keyA} {
			r := e.do(tt.method, tt.path, key, nil)
			wantDetail(t, r, http.StatusMethodNotAllowed, "Method Not Allowed")
			if got := r.Header.Get("Allow"); got != tt.allow {
				t.Errorf("%s %s: Allow = %q, want %q", tt.method, tt.path, got, tt.allow)
			}
		}
	}
}

func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "main", false, validConfig("twilio")), "id")
	nid := id(t, e.createNumber(e.keyA, cid, map[string]any{"address": "+14155552671"}), "id")
	targets := []struct{ method, path string }{
		{http.MethodPost, configsPath},
		{http.MethodPut, configPath(cid)},
		{http.MethodPost, numbersPath(cid)},
		{http.MethodPut, numberPath(cid, nid)},
	}
	tests := []struct {
		name string
		body any
		loc  string
		typ  string
	}{
		{"no body", nil, "body", "missing"},
		{"blank body", rawBody("  \n"), "body", "missing"},
		{"truncated", rawBody(`{"name": "x"`), "body.12", "json_invalid"},
		{"syntax error", rawBody(`{"name": x}`), "body.9", "json_invalid"},
		{"single quotes", rawBody(`{'name': 'x'}`), "body.1", "json_invalid"},
		{"trailing garbage", rawBody(`{"name": "x"} {`), "body.14", "json_invalid"},
		{"invalid utf-8", rawBody("{\"name\": \"\xff\xfe\"}"), "body.10", "json_invalid"},
		{"array", rawBody(`[{"name":"x"}]`), "body", "model_type"},
		{"string", rawBody(`"name"`), "body", "model_type"},
		{"number", rawBody(`42`), "body", "model_type"},
		{"boolean", rawBody(`true`), "body", "model_type"},
		{"null", rawBody(`null`), "body", "model_type"},
	}
	for _, target := range targets {
		for _, tt := range tests {
			t.Run(target.method+" "+target.path+"/"+tt.name, func(t *testing.T) {
				ps := problems(t, e.a(target.method, target.path, tt.body))
				if len(ps) != 1 || ps[0].Type != tt.typ {
					t.Fatalf("problems = %+v, want one %s", ps, tt.typ)
				}
				p := ps[0]
				if tt.loc != "" && p.loc() != tt.loc {
					t.Errorf("loc = %s, want %s", p.loc(), tt.loc)
				}
				switch tt.typ {
				case "json_invalid":
					if len(p.Loc) != 2 || p.Loc[0] != "body" {
						t.Errorf("loc = %v, want [body, offset]", p.Loc)
					}
					if _, isNum := p.Loc[1].(float64); !isNum {
						t.Errorf("loc[1] = %v, want the byte offset", p.Loc[1])
					}
					if p.Msg != "JSON decode error" || !equalJSON(p.Input, map[string]any{}) {
						t.Errorf("problem = %+v", p)
					}
					if s, _ := p.Ctx["error"].(string); s == "" {
						t.Errorf("ctx.error missing: %+v", p)
					}
				case "missing":
					if p.Msg != "Field required" || p.Input != nil {
						t.Errorf("problem = %+v", p)
					}
				case "model_type":
					if p.Msg != "Input should be a valid dictionary or object to extract fields from" {
						t.Errorf("msg = %q", p.Msg)
					}
				}
			})
		}
	}
	// Nothing changed.
	list := e.a(http.MethodGet, configsPath, nil).obj(t)["configurations"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["name"] != "main" {
		t.Fatalf("configurations = %v", list)
	}
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := `{"name":"` + strings.Repeat("x", 8<<20) + `"}`
	wantDetail(t, e.a(http.MethodPost, configsPath, rawBody(big)), http.StatusRequestEntityTooLarge, "Request body too large")
}

func TestPathIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "main", false, validConfig("twilio")), "id")
	intMsg := "Input should be a valid integer, unable to parse string as an integer"
	bad := []string{"abc", "1.5", "1e3", "0x10", "%20"}
	for _, raw := range bad {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
			var body any
			if m == http.MethodPut {
				body = map[string]any{"name": "x"}
			}
			ps := wantProblems(t, e.a(m, configsPath+"/"+raw, body), "path.config_id int_parsing")
			want := raw
			if raw == "%20" {
				want = " "
			}
			if ps[0].Msg != intMsg || ps[0].Input != want {
				t.Errorf("%s %s: problem = %+v", m, raw, ps[0])
			}
		}
		wantProblems(t, e.a(http.MethodGet, configsPath+"/"+raw+"/phone-numbers", nil), "path.config_id int_parsing")
		wantProblems(t, e.a(http.MethodPost, configsPath+"/"+raw+"/phone-numbers", map[string]any{"address": "+14155552671"}), "path.config_id int_parsing")
	}
	// Both path ids are reported together, and with body problems.
	wantProblems(t, e.a(http.MethodPut, configsPath+"/x/phone-numbers/y", map[string]any{"label": "ok"}),
		"path.config_id int_parsing", "path.phone_number_id int_parsing")
	wantProblems(t, e.a(http.MethodDelete, configsPath+"/x/phone-numbers/y", nil),
		"path.config_id int_parsing", "path.phone_number_id int_parsing")
	wantProblems(t, e.a(http.MethodPut, numbersPath(cid)+"/y", map[string]any{"is_active": "x"}),
		"path.phone_number_id int_parsing", "body.is_active bool_parsing")
	wantProblems(t, e.a(http.MethodPut, configsPath+"/x", map[string]any{"name": ""}),
		"path.config_id int_parsing", "body.name string_too_short")
	wantProblems(t, e.a(http.MethodPut, configsPath+"/x", rawBody("{")),
		"path.config_id int_parsing", "body.1 json_invalid")
	wantProblems(t, e.a(http.MethodPost, configsPath+"/x/phone-numbers", map[string]any{}),
		"path.config_id int_parsing", "body.address missing")
	// Integers that name nothing are 404, never 500.
	for _, raw := range []string{"0", "-1", "99999999999999999999", "9223372036854775807", "+7", "007"} {
		r := e.a(http.MethodGet, configsPath+"/"+raw, nil)
		if raw == "007" || raw == "+7" {
			wantDetail(t, r, http.StatusNotFound, "telephony configuration 7 not found")
			continue
		}
		wantStatus(t, r, http.StatusNotFound)
	}
	// A leading-zero id reaches the same configuration.
	r := e.a(http.MethodGet, configsPath+"/0"+itoa(cid), nil)
	wantStatus(t, r, http.StatusOK)
	if id(t, r.obj(t), "id") != cid {
		t.Fatalf("id = %v", r.obj(t)["id"])
	}
}

// TestInternalErrorIsLoggedOnce closes the database under the running server:
// an authenticated request then fails inside the store and is answered 500
// {"detail":"Internal Server Error"}, logged once at error level.
func TestInternalErrorIsLoggedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.allow500 = true
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	wantDetail(t, e.a(http.MethodGet, configsPath, nil), http.StatusInternalServerError, "Internal Server Error")
	logs := e.logs.String()
	if n := strings.Count(logs, "level=ERROR"); n != 1 {
		t.Fatalf("error log lines = %d, want 1:\n%s", n, logs)
	}
	if !strings.Contains(logs, "path="+configsPath) {
		t.Errorf("log lacks the path:\n%s", logs)
	}
}

// TestNoErrorLogsForClientErrors runs a mix of 4xx requests and checks that
// none is logged as an error (4xx are not errors of ours).
func TestNoErrorLogsForClientErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.a(http.MethodPost, configsPath, rawBody("{"))
	e.a(http.MethodGet, configPath(5), nil)
	e.do(http.MethodGet, configsPath, "", nil)
	e.a(http.MethodPost, configsPath, configBody("", false, validConfig("vonage")))
	if logs := e.logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Fatalf("client errors were logged as errors:\n%s", logs)
	}
}

// TestOddInputsNever500 sends unusual but well-formed JSON to every write
// endpoint: each is answered 200 or 4xx (the harness fails on any 500), and
// the answer is JSON.
func TestOddInputsNever500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "main", false, validConfig("ari")), "id")
	nid := id(t, e.createNumber(e.keyA, cid, map[string]any{"address": "1001"}), "id")
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	bodies := []rawBody{
		`{"name": "a\u0000b", "config": {"provider": "twilio", "account_sid": "\u0000", "auth_token": "x\u0000y"}}`,
		`{"name": "🚀🚀", "config": {"provider": "ari", "ari_endpoint": "http://[::1]:8088", "app_name": "é", "app_password": "\ud83d\ude80"}}`,
		`{"name": "lone surrogate \ud800", "config": {"provider": "twilio", "account_sid": "a", "auth_token": "b"}}`,
		`{"name": 1e400, "is_default_outbound": -0, "config": {"provider": "plivo", "machine_detection": 1e400}}`,
		`{"name": ["x"], "is_default_outbound": {"a": 1}, "config": {"provider": ["twilio"]}}`,
		`{"name": "x", "config": {"provider": "vonage", "api_key": "k", "api_secret": "s", "application_id": "a", "private_key": "-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----"}}`,
		`{"name": "x", "config": {"provider": "ari", "ari_endpoint": "http://%zz", "app_name": "a", "app_password": "p"}}`,
		`{"name": "x", "config": {"provider": "telnyx", "api_key": "k", "webhook_public_key": "===="}}`,
		rawBody(`{"name": "x", "config": ` + deep + `}`),
		`{"address": "\u0000", "label": "\u0000"}`,
		`{"address": "sip:@", "country_code": "\u0000\u0000"}`,
		rawBody(`{"address": "+` + strings.Repeat("9", 250) + `"}`),
		`{"address": "00", "country_code": "us"}`,
		`{"label": null, "is_active": null, "is_default_caller_id": null}`,
		`{"is_active": 1.0, "is_default_caller_id": "off"}`,
	}
	paths := []struct{ method, path string }{
		{http.MethodPost, configsPath},
		{http.MethodPut, configPath(cid)},
		{http.MethodPost, numbersPath(cid)},
		{http.MethodPut, numberPath(cid, nid)},
	}
	for _, p := range paths {
		for _, b := range bodies {
			r := e.a(p.method, p.path, b)
			if r.Status != http.StatusOK && (r.Status < 400 || r.Status > 499) {
				t.Errorf("%s %s %.60s: status = %d", p.method, p.path, b, r.Status)
			}
			if r.Body == nil {
				t.Errorf("%s %s %.60s: empty answer", p.method, p.path, b)
			}
		}
	}
	// A number beyond float64's range is echoed as a string every client
	// can decode; an ordinary one stays a number.
	ps := wantProblems(t, e.a(http.MethodPost, configsPath, rawBody(`{"name": 1e400, "is_default_outbound": 2, "config": {"provider": "twilio", "account_sid": "a", "auth_token": "b"}}`)),
		"body.name string_type", "body.is_default_outbound bool_parsing")
	if in := findProblem(t, ps, "body.name").Input; in != "1e400" {
		t.Errorf("input = %#v, want \"1e400\"", in)
	}
	if in := findProblem(t, ps, "body.is_default_outbound").Input; in != float64(2) {
		t.Errorf("input = %#v, want 2", in)
	}
	// The server still answers normally.
	wantStatus(t, e.a(http.MethodGet, configPath(cid), nil), http.StatusOK)
}
