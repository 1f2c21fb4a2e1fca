package telnyxsim_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
)

func TestAuthAndRateFaults(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{APIKey: "KEYmine"})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	if status, out := api(t, s, http.MethodPost, "/v2/calls", "KEYwrong", dialBody(rc, "+14155550123", nil)); status != http.StatusUnauthorized || errCode(out) != "10009" {
		t.Fatalf("wrong key = %d %v", status, out)
	}
	s.TooManyDialsNext(2)
	for i := 0; i < 2; i++ {
		if status, out := api(t, s, http.MethodPost, "/v2/calls", "KEYmine", dialBody(rc, "+14155550123", nil)); status != http.StatusTooManyRequests || errCode(out) != "90103" {
			t.Fatalf("dial %d = %d %v, want 429 90103", i, status, out)
		}
	}
	dial(t, s, dialBody(rc, "+14155550123", nil))
	s.SetUnauthorized(true)
	if status, _ := api(t, s, http.MethodGet, "/v2/calls/x", "KEYmine", nil); status != http.StatusUnauthorized {
		t.Fatalf("401 mode get = %d", status)
	}
	s.SetUnauthorized(false)
	st := s.Stats()
	if st.Unauthorized != 2 || st.RateLimited != 2 || st.Dialled != 1 || st.DialRequests != 4 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestFaultFunction(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{Outcome: telnyxsim.Busy}
	}})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	s.SetFault(func(r telnyxsim.Request) *telnyxsim.Fault {
		if r.Op != telnyxsim.OpDial {
			return nil
		}
		return &telnyxsim.Fault{Status: http.StatusBadGateway, Code: "10007", Title: "Unexpected error", Dial: true, RetryAfter: "1"}
	})
	status, out := api(t, s, http.MethodPost, "/v2/calls", s.APIKey(), dialBody(rc, "+14155550123", nil))
	if status != http.StatusBadGateway || errCode(out) != "10007" {
		t.Fatalf("dial = %d %v", status, out)
	}
	if err := s.WaitFinal(ctx5(t), 1); err != nil {
		t.Fatalf("a faulted dial with Dial set still plays its script: %v", err)
	}
	calls := s.Calls()
	if len(calls) != 1 || calls[0].HangupCause != "user_busy" {
		t.Fatalf("calls = %+v", calls)
	}
	s.SetFault(nil)
	dial(t, s, dialBody(rc, "+14155550124", nil))
}

func TestApplications(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{Outcome: telnyxsim.Busy, RingDelay: time.Millisecond}
	}})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	status, out := api(t, s, http.MethodPost, "/v2/call_control_applications", s.APIKey(),
		map[string]any{"application_name": "outdial", "webhook_event_url": rc.URL + "/app", "webhook_api_version": "2", "active": true})
	if status != http.StatusCreated {
		t.Fatalf("create = %d %v", status, out)
	}
	data := out["data"].(map[string]any)
	id, _ := data["id"].(string)
	if id == "" || data["record_type"] != "call_control_application" || data["webhook_event_url"] != rc.URL+"/app" {
		t.Fatalf("create data = %v", data)
	}
	apps := s.Applications()
	if len(apps) != 2 || apps[1].ID != id || apps[1].WebhookAPIVersion != "2" || s.Stats().Applications != 1 {
		t.Fatalf("applications = %+v", apps)
	}
	// A dial through it without webhook_url sends its events to the
	// application's URL.
	body := dialBody(rc, "+14155550123", map[string]any{"connection_id": id})
	delete(body, "webhook_url")
	delete(body, "webhook_url_method")
	ccid := dial(t, s, body)
	rc.waitFor(t, ccid, "call.hangup")
	for _, bad := range []map[string]any{
		{"webhook_event_url": rc.URL},
		{"application_name": "x", "webhook_event_url": "ftp://x"},
		{"application_name": "x", "webhook_event_url": rc.URL, "webhook_api_version": "3"},
	} {
		if status, out := api(t, s, http.MethodPost, "/v2/call_control_applications", s.APIKey(), bad); status != http.StatusUnprocessableEntity {
			t.Fatalf("create %v = %d %v, want 422", bad, status, out)
		}
	}
	for _, f := range []*telnyxsim.Fault{telnyxsim.Unauthorized(),
		{Status: http.StatusNotFound, Code: "10005", Title: "Resource not found"},
		{Status: http.StatusInternalServerError, Code: "10007", Title: "Unexpected error"}} {
		s.SetFault(func(r telnyxsim.Request) *telnyxsim.Fault {
			if r.Op == telnyxsim.OpCreateApplication {
				return f
			}
			return nil
		})
		if status, out := api(t, s, http.MethodPost, "/v2/call_control_applications", s.APIKey(),
			map[string]any{"application_name": "y", "webhook_event_url": rc.URL}); status != f.Status || errCode(out) != f.Code {
			t.Fatalf("create with fault %d = %d %v", f.Status, status, out)
		}
	}
	if len(s.Applications()) != 2 {
		t.Fatalf("a refused create made an application: %+v", s.Applications())
	}
}

func TestCommandsOnRingingCall(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{RingDelay: telnyxsim.Never}
	}})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	id := dial(t, s, dialBody(rc, "+14155550123", map[string]any{"timeout_secs": 600}))
	if status, out := api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/speak", s.APIKey(),
		map[string]any{"payload": "Hi", "voice": "female", "service_level": "basic"}); status != http.StatusUnprocessableEntity || errCode(out) != "90015" {
		t.Fatalf("speak before answer = %d %v", status, out)
	}
	if status, _ := api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/speak", s.APIKey(), map[string]any{"voice": "female", "service_level": "basic"}); status != http.StatusUnprocessableEntity {
		t.Fatalf("speak without payload = %d", status)
	}
	if status, _ := api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/hangup", s.APIKey(), map[string]any{}); status != http.StatusOK {
		t.Fatalf("hangup = %d", status)
	}
	if h := rc.waitFor(t, id, "call.hangup"); h.Payload["hangup_cause"] != "originator_cancel" || h.Payload["hangup_source"] != "caller" {
		t.Fatalf("call.hangup payload = %v", h.Payload)
	}
	if status, _ := api(t, s, http.MethodPost, "/v2/calls/v3:unknown/actions/hangup", s.APIKey(), map[string]any{}); status != http.StatusNotFound {
		t.Fatalf("hangup unknown = %d", status)
	}
}

func TestUnreachableAfterClose(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{})
	url := s.URL()
	s.Close()
	if _, err := http.Post(url+"/v2/calls", "application/json", nil); err == nil {
		t.Fatal("a closed simulator still answers")
	}
}
