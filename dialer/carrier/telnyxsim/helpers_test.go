package telnyxsim_test

// Test helpers: a webhook receiver that verifies every event with its own
// Ed25519 code, and thin API clients.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
)

// received is one event the receiver got.
type received struct {
	Type, CallControlID string
	Payload             map[string]any
	Verified            bool
}

// receiver is a webhook endpoint that checks every event's Ed25519
// signature with its own code (not the simulator's) and records it.
type receiver struct {
	*httptest.Server
	pub     ed25519.PublicKey
	status  int // answered status (200 by default)
	mu      sync.Mutex
	events  []received
	changed chan struct{}
}

func newReceiver(t *testing.T, pubB64 string) *receiver {
	t.Helper()
	pub, err := base64.StdEncoding.DecodeString(pubB64)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("PublicKey %q is not base64 of 32 bytes", pubB64)
	}
	rc := &receiver{pub: pub, status: http.StatusOK, changed: make(chan struct{})}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts := r.Header.Get("Telnyx-Timestamp")
		sig, _ := base64.StdEncoding.DecodeString(r.Header.Get("Telnyx-Signature-Ed25519"))
		ok := len(sig) == ed25519.SignatureSize && ed25519.Verify(rc.pub, []byte(ts+"|"+string(body)), sig)
		var env struct {
			Data struct {
				EventType  string         `json:"event_type"`
				RecordType string         `json:"record_type"`
				Payload    map[string]any `json:"payload"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Data.RecordType != "event" {
			t.Errorf("event body %q is not a Telnyx event", body)
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("event sent as %s %s", r.Method, r.Header.Get("Content-Type"))
		}
		rc.mu.Lock()
		ccid, _ := env.Data.Payload["call_control_id"].(string)
		rc.events = append(rc.events, received{Type: env.Data.EventType, CallControlID: ccid, Payload: env.Data.Payload, Verified: ok})
		close(rc.changed)
		rc.changed = make(chan struct{})
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// types returns the event types received for a call, in order.
func (rc *receiver) types(ccid string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, e := range rc.events {
		if e.CallControlID == ccid {
			out = append(out, e.Type)
		}
	}
	return out
}

// event returns the last event of type typ for a call.
func (rc *receiver) event(ccid, typ string) (received, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i := len(rc.events) - 1; i >= 0; i-- {
		if e := rc.events[i]; e.CallControlID == ccid && e.Type == typ {
			return e, true
		}
	}
	return received{}, false
}

// waitFor blocks until the call got an event of type typ (or fails the test
// after 5 s).
func (rc *receiver) waitFor(t *testing.T, ccid, typ string) received {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		rc.mu.Lock()
		ch := rc.changed
		rc.mu.Unlock()
		if e, ok := rc.event(ccid, typ); ok {
			return e
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %s for %s; got %v", typ, ccid, rc.types(ccid))
		}
	}
}

// allVerified fails the test for any event whose signature did not verify.
func (rc *receiver) allVerified(t *testing.T) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, e := range rc.events {
		if !e.Verified {
			t.Fatalf("event %s of %s does not verify with the simulator's public key", e.Type, e.CallControlID)
		}
	}
}

// api sends one API request and returns the status and decoded body.
func api(t *testing.T, s *telnyxsim.Server, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL()+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// errCode is the first error's code of a Telnyx error body.
func errCode(body map[string]any) string {
	errs, _ := body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// dialBody is a valid dial to rc.
func dialBody(rc *receiver, to string, extra map[string]any) map[string]any {
	b := map[string]any{"connection_id": telnyxsim.DefaultConnectionID, "to": to, "from": "+14155550100",
		"webhook_url": rc.URL + "/status/1?t=tok", "webhook_url_method": "POST",
		"client_state": base64.StdEncoding.EncodeToString([]byte(`{"attempt_id":1}`)), "timeout_secs": 60}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// dial dials and returns the call_control_id.
func dial(t *testing.T, s *telnyxsim.Server, body map[string]any) string {
	t.Helper()
	status, out := api(t, s, http.MethodPost, "/v2/calls", s.APIKey(), body)
	if status != http.StatusOK {
		t.Fatalf("dial = %d %v", status, out)
	}
	data, _ := out["data"].(map[string]any)
	id, _ := data["call_control_id"].(string)
	if id == "" || data["record_type"] != "call" || data["is_alive"] != false || data["call_leg_id"] == "" {
		t.Fatalf("dial answer data = %v", data)
	}
	return id
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
