package carrier_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/cloudonixsim"
)

const (
	cloudonixTestToken  = "XIs3cr3t-cloudonix-key-do-not-leak"
	cloudonixTestDomain = "acme.cloudonix.net"
)

// cloudonixAPI is a fake Cloudonix REST endpoint answering with a fixed
// status, headers and body, recording the last request.
type cloudonixAPI struct {
	status int
	header map[string]string
	body   string

	mu   sync.Mutex
	req  *http.Request
	data []byte
}

func (a *cloudonixAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.req, a.data = r, b
	a.mu.Unlock()
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (a *cloudonixAPI) last() (*http.Request, []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.req, a.data
}

func cloudonixNewCarrier(t *testing.T, base string, creds map[string]any) carrier.Carrier {
	t.Helper()
	if creds == nil {
		creds = map[string]any{"bearer_token": cloudonixTestToken, "domain_id": cloudonixTestDomain, "application_name": "outdial"}
	}
	c, err := carrier.New(carrier.Cloudonix, creds, carrier.Options{BaseURLs: map[string]string{"cloudonix": base + "/"},
		Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func cloudonixFake(t *testing.T, status int, body string) (*cloudonixAPI, carrier.Carrier) {
	t.Helper()
	api := &cloudonixAPI{status: status, body: body}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, cloudonixNewCarrier(t, srv.URL, nil)
}

func TestCloudonixPlaceRequest(t *testing.T) {
	base := carrier.Call{AttemptID: 7, To: "+14155550123", From: "+14155550100",
		AnswerURL: "https://pub.example/api/v1/telephony/cloudonix/answer/7?t=tok",
		StatusURL: "https://pub.example/api/v1/telephony/cloudonix/status/7?t=tok"}
	tests := []struct {
		name string
		call func(c *carrier.Call)
		want string
	}{
		{"minimal", nil, `{"destination":"+14155550123","caller-id":"+14155550100",` +
			`"url":"https://pub.example/api/v1/telephony/cloudonix/answer/7?t=tok",` +
			`"callback":"https://pub.example/api/v1/telephony/cloudonix/status/7?t=tok","profile":{"outdial-attempt-id":"7"}}`},
		{"limits", func(c *carrier.Call) {
			c.RingTimeout = 29500 * time.Millisecond
			c.TimeLimit = time.Hour
			c.MachineDetection = true
		},
			`{"destination":"+14155550123","caller-id":"+14155550100",` +
				`"url":"https://pub.example/api/v1/telephony/cloudonix/answer/7?t=tok",` +
				`"callback":"https://pub.example/api/v1/telephony/cloudonix/status/7?t=tok","timeLimit":3600,"timeout":30,` +
				`"profile":{"outdial-attempt-id":"7"}}`},
		{"no answer url uses the application", func(c *carrier.Call) { c.AnswerURL, c.StatusURL = "", "" },
			`{"destination":"+14155550123","caller-id":"+14155550100","application":"outdial","profile":{"outdial-attempt-id":"7"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, c := cloudonixFake(t, 200, `{"domainId":3,"subscriberId":372,"destination":"+14155550123","direction":"outbound-api","token":"16a7294c989b11e7b3d32b9edb8660c7"}`)
			call := base
			if tt.call != nil {
				tt.call(&call)
			}
			p, err := c.Place(context.Background(), call)
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			if p.ProviderCallID != "16a7294c989b11e7b3d32b9edb8660c7" {
				t.Fatalf("ProviderCallID = %q", p.ProviderCallID)
			}
			req, body := api.last()
			if req.Method != http.MethodPost || req.URL.Path != "/calls/"+cloudonixTestDomain+"/application" {
				t.Fatalf("request = %s %s", req.Method, req.URL.Path)
			}
			if got := req.Header.Get("Authorization"); got != "Bearer "+cloudonixTestToken {
				t.Fatalf("Authorization = %q", got)
			}
			if ct := req.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
			if string(body) != tt.want {
				t.Fatalf("body\n got %s\nwant %s", body, tt.want)
			}
		})
	}
}

func TestCloudonixPlaceErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       string
		retryAfter time.Duration
		msg        string
	}{
		{"rate limited", 429, map[string]string{"Retry-After": "10"}, `{"message":"Too Many Requests"}`, carrier.RateLimited, 10 * time.Second, "Too Many Requests"},
		{"unauthorized", 401, nil, `{"error":{"code":401,"message":"Invalid API key"}}`, carrier.AuthFailed, 0, "Invalid API key"},
		{"forbidden", 403, nil, `{"error":"domain mismatch"}`, carrier.AuthFailed, 0, "domain mismatch"},
		{"bad request", 400, nil, `{"code":400,"message":"destination is required"}`, carrier.Rejected, 0, "destination is required"},
		{"not json", 404, nil, "Not Found\nmore", carrier.Rejected, 0, "Not Found"},
		{"server error", 502, nil, `{"message":"bad gateway"}`, "", 0, "bad gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, c := cloudonixFake(t, tt.status, tt.body)
			api.header = tt.header
			_, err := c.Place(context.Background(), carrier.Call{AttemptID: 1, To: "+14155550123", From: "+14155550100",
				AnswerURL: "https://x/a", StatusURL: "https://x/s"})
			if err == nil {
				t.Fatal("Place succeeded")
			}
			if got := carrier.KindOf(err); got != tt.kind {
				t.Fatalf("kind = %q, want %q (%v)", got, tt.kind, err)
			}
			var e *carrier.Error
			if errors.As(err, &e) && (e.RetryAfter != tt.retryAfter || e.Message != tt.msg || e.HTTPStatus != tt.status) {
				t.Fatalf("error = %+v", e)
			}
			if !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), cloudonixTestToken) {
				t.Fatalf("error text = %v", err)
			}
		})
	}
	t.Run("no token", func(t *testing.T) {
		_, c := cloudonixFake(t, 200, `{"direction":"outbound-api"}`)
		if _, err := c.Place(context.Background(), carrier.Call{To: "+1", From: "+1", AnswerURL: "https://x/a"}); err == nil || carrier.KindOf(err) != "" {
			t.Fatalf("Place = %v, want a plain error", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		c := cloudonixNewCarrier(t, srv.URL, nil)
		if _, err := c.Place(context.Background(), carrier.Call{To: "+1", From: "+1", AnswerURL: "https://x/a"}); err == nil || carrier.KindOf(err) != "" {
			t.Fatalf("Place = %v, want a plain error", err)
		}
	})
}

func TestCloudonixHangUp(t *testing.T) {
	tests := []struct {
		status  int
		wantErr bool
		kind    string
	}{
		{200, false, ""}, {204, false, ""}, {404, false, ""}, {401, true, carrier.AuthFailed}, {500, true, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			api, c := cloudonixFake(t, tt.status, `{}`)
			err := c.HangUp(context.Background(), "tok/1")
			if (err != nil) != tt.wantErr || carrier.KindOf(err) != tt.kind {
				t.Fatalf("HangUp = %v", err)
			}
			req, _ := api.last()
			if req.Method != http.MethodDelete || req.URL.EscapedPath() != "/calls/"+cloudonixTestDomain+"/sessions/tok%2F1" ||
				req.Header.Get("Authorization") != "Bearer "+cloudonixTestToken {
				t.Fatalf("request = %s %s", req.Method, req.URL.EscapedPath())
			}
		})
	}
	_, c := cloudonixFake(t, 200, `{}`)
	if err := c.HangUp(context.Background(), ""); err == nil {
		t.Fatal("HangUp of an empty token succeeded")
	}
}

func TestCloudonixQuery(t *testing.T) {
	tests := []struct {
		name, body string
		want       carrier.Status
	}{
		{"ringing", `{"token":"abc","status":"ringing","callAnswerTime":null}`,
			carrier.Status{ProviderCallID: "abc", Raw: "ringing"}},
		{"completed", `{"token":"abc","status":"completed","callAnswerTime":1700000000000,"callEndTime":1700000042400}`,
			carrier.Status{ProviderCallID: "abc", Raw: "completed", Answered: true, Final: true, Outcome: "answered", DurationSeconds: 42}},
		{"busy without token", `{"status":"busy","callAnswerTime":null,"callEndTime":1700000042400}`,
			carrier.Status{ProviderCallID: "tok", Raw: "busy", Final: true, Outcome: "busy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, c := cloudonixFake(t, 200, tt.body)
			got, err := c.Query(context.Background(), "tok")
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Query = %+v, want %+v", got, tt.want)
			}
			req, _ := api.last()
			if req.Method != http.MethodGet || req.URL.Path != "/calls/"+cloudonixTestDomain+"/sessions/tok" {
				t.Fatalf("request = %s %s", req.Method, req.URL.Path)
			}
		})
	}
	for _, tt := range []struct {
		status int
		body   string
	}{{404, `{"message":"Session not found"}`}, {200, `{"token":"abc"}`}, {200, `[]`}} {
		_, c := cloudonixFake(t, tt.status, tt.body)
		if _, err := c.Query(context.Background(), "tok"); err == nil {
			t.Fatalf("Query of %d %s succeeded", tt.status, tt.body)
		}
	}
}

func TestCloudonixNoSecretInStrings(t *testing.T) {
	_, c := cloudonixFake(t, 200, `{}`)
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("carrier", "c", c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), logged.String()} {
		if strings.Contains(s, cloudonixTestToken) || !strings.Contains(s, cloudonixTestDomain) {
			t.Fatalf("description %q leaks the token or misses the domain", s)
		}
	}
}

func TestCloudonixProvision(t *testing.T) {
	sim := cloudonixsim.Start(cloudonixsim.Config{})
	defer sim.Close()
	target := carrier.Target{Name: "outdial-acme", AnswerURL: "https://pub.example/api/v1/telephony/cloudonix/answer",
		StatusURL: "https://pub.example/api/v1/telephony/cloudonix/status"}
	opts := carrier.Options{BaseURLs: map[string]string{carrier.Cloudonix: sim.URL()}}
	field, value, err := carrier.Provision(context.Background(), carrier.Cloudonix, sim.Credentials(""), target, opts)
	if err != nil || field != "application_name" || value != "outdial-acme" {
		t.Fatalf("Provision = %q, %q, %v", field, value, err)
	}
	app := sim.Applications()["outdial-acme"]
	if app.Type != "cxml" || app.URL != target.AnswerURL || app.Method != http.MethodPost {
		t.Fatalf("application = %+v", app)
	}
	// An existing application_name is kept.
	if field, _, err := carrier.Provision(context.Background(), carrier.Cloudonix, sim.Credentials("mine"), target, opts); field != "" || err != nil {
		t.Fatalf("Provision with a name = %q, %v", field, err)
	}

	tests := []struct {
		name   string
		creds  map[string]any
		fault  *cloudonixsim.Fault
		status int
		typ    string
		field  string
	}{
		{"taken", sim.Credentials(""), nil, 422, carrier.ProvisionRejected, "application_name"},
		{"bad key", map[string]any{"bearer_token": "XIwrong", "domain_id": sim.Domain()}, nil, 422, carrier.ProvisionAuthFailed, "bearer_token"},
		{"forbidden", sim.Credentials(""), &cloudonixsim.Fault{Status: 403, Message: "no"}, 422, carrier.ProvisionAuthFailed, "bearer_token"},
		{"unknown domain", map[string]any{"bearer_token": sim.BearerToken(), "domain_id": "nope.cloudonix.net"}, nil, 404, "", ""},
		{"server error", sim.Credentials(""), &cloudonixsim.Fault{Status: 500, Message: "boom"}, 502, "", ""},
		{"rate limited", sim.Credentials(""), cloudonixsim.TooManyRequests(), 502, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim.SetFault(func(cloudonixsim.Request) *cloudonixsim.Fault { return tt.fault })
			defer sim.SetFault(nil)
			_, _, err := carrier.Provision(context.Background(), carrier.Cloudonix, tt.creds, target, opts)
			var pe *carrier.ProvisionError
			if !errors.As(err, &pe) || pe.Status != tt.status || pe.Type != tt.typ || pe.Field != tt.field {
				t.Fatalf("Provision = %#v", err)
			}
			if strings.Contains(pe.Error(), sim.BearerToken()) {
				t.Fatalf("error leaks the token: %v", pe)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		_, _, err := carrier.Provision(context.Background(), carrier.Cloudonix, sim.Credentials(""), target,
			carrier.Options{BaseURLs: map[string]string{carrier.Cloudonix: dead.URL}})
		var pe *carrier.ProvisionError
		if !errors.As(err, &pe) || pe.Status != 502 {
			t.Fatalf("Provision = %v", err)
		}
	})
	t.Run("answer without name", func(t *testing.T) {
		api := &cloudonixAPI{status: 200, body: `{"id":12}`}
		srv := httptest.NewServer(api)
		defer srv.Close()
		_, value, err := carrier.Provision(context.Background(), carrier.Cloudonix,
			map[string]any{"bearer_token": "k", "domain_id": "1234"}, carrier.Target{AnswerURL: "https://x/a"},
			carrier.Options{BaseURLs: map[string]string{carrier.Cloudonix: srv.URL}})
		req, body := api.last()
		var sent map[string]string
		_ = json.Unmarshal(body, &sent)
		if err != nil || value != "outdial" || req.URL.Path != "/customers/self/domains/1234/applications" ||
			sent["name"] != "outdial" || sent["type"] != "cxml" || sent["method"] != "POST" || sent["url"] != "https://x/a" {
			t.Fatalf("Provision = %q, %v; request %s %s", value, err, req.URL.Path, body)
		}
	})
}
