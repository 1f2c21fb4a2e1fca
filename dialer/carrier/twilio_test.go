package carrier_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
)

const (
	testSID   = "AC00000000000000000000000000000001"
	testToken = "s3cr3t-auth-token-do-not-leak"
)

// twilioAPI is a fake Twilio REST endpoint answering with a fixed status,
// headers and body, recording the last request.
type twilioAPI struct {
	status int
	header map[string]string
	body   string

	mu   sync.Mutex
	req  *http.Request
	form url.Values
}

func (a *twilioAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(b))
	a.mu.Lock()
	a.req, a.form = r, form
	a.mu.Unlock()
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (a *twilioAPI) last() (*http.Request, url.Values) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.req, a.form
}

func newTwilio(t *testing.T, api http.Handler, md bool) carrier.Carrier {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c, err := carrier.New(carrier.Twilio,
		map[string]any{"account_sid": testSID, "auth_token": testToken, "machine_detection": md},
		carrier.Options{BaseURLs: map[string]string{"twilio": srv.URL + "/"}, HTTPClient: srv.Client(),
			Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestTwilioPlaceRequest(t *testing.T) {
	base := carrier.Call{AttemptID: 7, To: "+14155550100", From: "+14155550199",
		AnswerURL: "https://pub.example/api/v1/telephony/twilio/answer/7?t=tok",
		StatusURL: "https://pub.example/api/v1/telephony/twilio/status/7?t=tok"}
	tests := []struct {
		name       string
		configMD   bool
		call       func(c *carrier.Call)
		wantMD     string
		wantTO     string
		wantLimit  string
		wantStatus bool
	}{
		{"defaults", false, func(*carrier.Call) {}, "", "", "", true},
		{"config machine detection", true, func(c *carrier.Call) { c.RingTimeout = 25 * time.Second }, "Enable", "25", "", true},
		{"call machine detection", false, func(c *carrier.Call) { c.MachineDetection = true }, "Enable", "", "", true},
		{"ring rounded up, time limit", false, func(c *carrier.Call) {
			c.RingTimeout = 1500 * time.Millisecond
			c.TimeLimit = 3600 * time.Second
		}, "", "2", "3600", true},
		{"ring clamped", false, func(c *carrier.Call) { c.RingTimeout = time.Hour }, "", "600", "", true},
		{"no status url", false, func(c *carrier.Call) { c.StatusURL = "" }, "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &twilioAPI{status: http.StatusCreated, body: `{"sid":"CA0123456789abcdef0123456789abcdef","status":"queued"}`}
			c := newTwilio(t, api, tt.configMD)
			call := base
			tt.call(&call)
			p, err := c.Place(context.Background(), call)
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			if p.ProviderCallID != "CA0123456789abcdef0123456789abcdef" {
				t.Fatalf("ProviderCallID = %q", p.ProviderCallID)
			}
			r, f := api.last()
			if r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+testSID+"/Calls.json" {
				t.Fatalf("request = %s %s", r.Method, r.URL.Path)
			}
			if u, pw, ok := r.BasicAuth(); !ok || u != testSID || pw != testToken {
				t.Fatalf("basic auth = %q, %q, %v", u, pw, ok)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
				t.Fatalf("content type = %q", ct)
			}
			want := map[string]string{"To": call.To, "From": call.From, "Url": call.AnswerURL, "Method": "POST",
				"MachineDetection": tt.wantMD, "Timeout": tt.wantTO, "TimeLimit": tt.wantLimit}
			if tt.wantStatus {
				want["StatusCallback"] = call.StatusURL
				want["StatusCallbackMethod"] = "POST"
			}
			for k, v := range want {
				if got := f.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			events := []string{"initiated", "ringing", "answered", "completed"}
			if !tt.wantStatus {
				events = nil
			}
			if got := f["StatusCallbackEvent"]; !slices.Equal(got, events) {
				t.Errorf("StatusCallbackEvent = %v, want %v", got, events)
			}
		})
	}
}

func TestTwilioErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       string // "" : a plain error
		code       string
		msg        string
		retryAfter time.Duration
	}{
		{"429 with seconds", 429, map[string]string{"Retry-After": "3"},
			`{"code":20429,"message":"Too Many Requests","more_info":"https://www.twilio.com/docs/errors/20429","status":429}`,
			carrier.RateLimited, "20429", "Too Many Requests", 3 * time.Second},
		{"429 with date", 429, map[string]string{"Retry-After": "Sun, 01 Mar 2026 12:00:10 GMT"}, `{}`,
			carrier.RateLimited, "", "Too Many Requests", 10 * time.Second},
		{"429 without hint", 429, nil, `not json`, carrier.RateLimited, "", "Too Many Requests", 0},
		{"20429 under another status", 400, nil, `{"code":20429,"message":"Too many requests","status":400}`,
			carrier.RateLimited, "20429", "Too many requests", 0},
		{"401", 401, nil, `{"code":20003,"message":"Authenticate","status":401}`, carrier.AuthFailed, "20003", "Authenticate", 0},
		{"403", 403, nil, `{"code":20003,"message":"Permission Denied","status":403}`, carrier.AuthFailed, "20003", "Permission Denied", 0},
		{"400 invalid number", 400, nil, `{"code":21211,"message":"Invalid 'To' Phone Number: +1555","status":400}`,
			carrier.Rejected, "21211", "Invalid 'To' Phone Number: +1555", 0},
		{"404", 404, nil, `{"code":20404,"message":"The requested resource was not found","status":404}`,
			carrier.Rejected, "20404", "The requested resource was not found", 0},
		{"500", 500, nil, `{"code":20500,"message":"Internal Server Error","status":500}`, "", "", "", 0},
		{"503 html", 503, nil, `<html>down</html>`, "", "", "", 0},
		{"201 without sid", 201, nil, `{"status":"queued"}`, "", "", "", 0},
		{"201 not json", 201, nil, `<Response/>`, "", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTwilio(t, &twilioAPI{status: tt.status, header: tt.header, body: tt.body}, false)
			_, err := c.Place(context.Background(), carrier.Call{To: "+14155550100", From: "+14155550199", AnswerURL: "https://x.example/a"})
			if err == nil {
				t.Fatal("Place: no error")
			}
			if strings.Contains(err.Error(), testToken) {
				t.Fatalf("error leaks the auth token: %v", err)
			}
			if got := carrier.KindOf(err); got != tt.kind {
				t.Fatalf("KindOf = %q, want %q (%v)", got, tt.kind, err)
			}
			if tt.kind == "" {
				return
			}
			var e *carrier.Error
			errors.As(err, &e)
			if e.HTTPStatus != tt.status || e.Code != tt.code || e.Message != tt.msg || e.RetryAfter != tt.retryAfter {
				t.Fatalf("error = %+v, want status %d code %q message %q retry %v", e, tt.status, tt.code, tt.msg, tt.retryAfter)
			}
		})
	}
}

func TestTwilioTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	c, _ := carrier.New(carrier.Twilio, map[string]any{"account_sid": testSID, "auth_token": testToken},
		carrier.Options{BaseURLs: map[string]string{"twilio": base}})
	_, err := c.Place(context.Background(), carrier.Call{To: "+14155550100", From: "+14155550199", AnswerURL: "https://x.example/a"})
	if err == nil || carrier.KindOf(err) != "" {
		t.Fatalf("Place = %v, want a plain error", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("error leaks the auth token: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Query(ctx, "CA1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Query with a canceled context = %v", err)
	}
}

// recordingTransport answers every request 201 without a network.
type recordingTransport struct{ url string }

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.url = r.URL.String()
	return &http.Response{StatusCode: 201, Body: io.NopCloser(strings.NewReader(`{"sid":"CA1"}`)), Header: http.Header{}, Request: r}, nil
}

func TestTwilioDefaultBaseURL(t *testing.T) {
	rt := &recordingTransport{}
	c, _ := carrier.New(carrier.Twilio, map[string]any{"account_sid": testSID, "auth_token": testToken},
		carrier.Options{HTTPClient: &http.Client{Transport: rt}})
	if _, err := c.Place(context.Background(), carrier.Call{To: "+1", From: "+2", AnswerURL: "https://x"}); err != nil {
		t.Fatalf("Place: %v", err)
	}
	if want := "https://api.twilio.com/2010-04-01/Accounts/" + testSID + "/Calls.json"; rt.url != want {
		t.Fatalf("url = %q, want %q", rt.url, want)
	}
}

func TestTwilioHangUp(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   string
		ok     bool
	}{
		{"in progress", 200, `{"sid":"CA1","status":"completed"}`, "", true},
		{"already ended", 400, `{"code":21220,"message":"Call is not in-progress. Cannot redirect.","status":400}`, "", true},
		{"unknown call", 404, `{"code":20404,"message":"Not Found","status":404}`, carrier.Rejected, false},
		{"rate limited", 429, `{"code":20429,"message":"Too Many Requests","status":429}`, carrier.RateLimited, false},
		{"server error", 502, ``, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &twilioAPI{status: tt.status, body: tt.body}
			c := newTwilio(t, api, false)
			err := c.HangUp(context.Background(), "CA/1")
			if (err == nil) != tt.ok || carrier.KindOf(err) != tt.kind {
				t.Fatalf("HangUp = %v, want ok %v kind %q", err, tt.ok, tt.kind)
			}
			r, f := api.last()
			if r.Method != http.MethodPost || r.URL.EscapedPath() != "/2010-04-01/Accounts/"+testSID+"/Calls/CA%2F1.json" {
				t.Fatalf("request = %s %s", r.Method, r.URL.EscapedPath())
			}
			if f.Get("Status") != "completed" || len(f) != 1 {
				t.Fatalf("form = %v, want Status=completed", f)
			}
			if u, pw, _ := r.BasicAuth(); u != testSID || pw != testToken {
				t.Fatal("no basic auth")
			}
		})
	}
}

func TestTwilioQuery(t *testing.T) {
	tests := []struct {
		body string
		want carrier.Status
	}{
		{`{"sid":"CA1","status":"queued","answered_by":null,"duration":null}`, carrier.Status{Raw: "queued"}},
		{`{"sid":"CA1","status":"ringing"}`, carrier.Status{Raw: "ringing"}},
		{`{"sid":"CA1","status":"in-progress","answered_by":"human"}`, carrier.Status{Raw: "in-progress", Answered: true, AnsweredBy: "human"}},
		{`{"sid":"CA1","status":"completed","duration":"17"}`,
			carrier.Status{Raw: "completed", Answered: true, Final: true, Outcome: carrier.OutcomeAnswered, DurationSeconds: 17}},
		{`{"sid":"CA1","status":"completed","answered_by":"machine_start","duration":9}`,
			carrier.Status{Raw: "completed", Answered: true, AnsweredBy: "machine_start", Final: true, Outcome: carrier.OutcomeVoicemail, DurationSeconds: 9}},
		{`{"sid":"CA1","status":"busy","duration":"0"}`, carrier.Status{Raw: "busy", Final: true, Outcome: carrier.OutcomeBusy}},
		{`{"sid":"CA1","status":"no-answer"}`, carrier.Status{Raw: "no-answer", Final: true, Outcome: carrier.OutcomeNoAnswer}},
		{`{"sid":"CA1","status":"failed"}`, carrier.Status{Raw: "failed", Final: true, Outcome: carrier.OutcomeFailed}},
		{`{"sid":"CA1","status":"canceled"}`, carrier.Status{Raw: "canceled", Final: true, Outcome: carrier.OutcomeCanceled}},
	}
	for _, tt := range tests {
		api := &twilioAPI{status: 200, body: tt.body}
		c := newTwilio(t, api, false)
		got, err := c.Query(context.Background(), "CA1")
		if err != nil {
			t.Fatalf("Query(%s): %v", tt.body, err)
		}
		tt.want.ProviderCallID = "CA1"
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Query(%s) = %+v, want %+v", tt.body, got, tt.want)
		}
		r, _ := api.last()
		if r.Method != http.MethodGet || r.URL.Path != "/2010-04-01/Accounts/"+testSID+"/Calls/CA1.json" {
			t.Fatalf("request = %s %s", r.Method, r.URL.Path)
		}
	}
	c := newTwilio(t, &twilioAPI{status: 401, body: `{"code":20003,"message":"Authenticate","status":401}`}, false)
	if _, err := c.Query(context.Background(), "CA1"); carrier.KindOf(err) != carrier.AuthFailed {
		t.Fatalf("Query on 401 = %v", err)
	}
}

func TestTwilioDoesNotPrintToken(t *testing.T) {
	c := newTwilio(t, &twilioAPI{status: 200}, false)
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("carrier", "c", c)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", c, c, c, c), logged.String()} {
		if strings.Contains(s, testToken) {
			t.Fatalf("printed carrier leaks the auth token: %s", s)
		}
	}
}
