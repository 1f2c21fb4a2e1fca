package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// GET /campaign/{id}/diagnosis (API.md 11) through the real router, with
// the engine dialing the Twilio simulator; every answer is also checked
// against web/openapi.json by the harness (openAPIValidated). The engine's
// codes are proven one by one in dialer/diagnosis*_test.go; these tests
// prove the endpoint: its body, its errors and its tenancy.

// diagnosisKeys are the fields of a diagnosis body.
var diagnosisKeys = []string{"campaign_id", "dialing", "in_flight", "max_concurrency", "ready_contacts", "reasons", "state", "abandoned_rate_24h"}

// diagnosis GETs campaign id's diagnosis as organization A, failing the
// test unless it is a 200 with exactly the diagnosis fields.
func (ce *campEnv) diagnosis(id int64) map[string]any {
	ce.t.Helper()
	r := ce.a(http.MethodGet, campaignOp(id, "diagnosis"), nil)
	wantStatus(ce.t, r, http.StatusOK)
	m := r.obj(ce.t)
	if got := keys(m); !sameSet(got, diagnosisKeys) {
		ce.t.Fatalf("diagnosis keys %v, want %v: %s", got, diagnosisKeys, r.Raw)
	}
	return m
}

// wantDiagnosis checks a diagnosis body's scalar fields.
func wantDiagnosis(t *testing.T, m map[string]any, id int64, state string, dialing bool, inFlight, maxConc, ready int) {
	t.Helper()
	want := map[string]any{"campaign_id": float64(id), "state": state, "dialing": dialing, "in_flight": float64(inFlight),
		"max_concurrency": float64(maxConc), "ready_contacts": float64(ready)}
	for k, v := range want {
		if m[k] != v {
			t.Fatalf("diagnosis %s = %#v, want %#v (body %v)", k, m[k], v, m)
		}
	}
}

// wantReasons checks that a diagnosis lists reasons of exactly codes, in
// order, and returns them; a reason has code and message, and count and
// until only when set.
func wantReasons(t *testing.T, m map[string]any, codes ...string) []map[string]any {
	t.Helper()
	list, ok := m["reasons"].([]any)
	if !ok {
		t.Fatalf("reasons = %#v, want a list", m["reasons"])
	}
	var got []string
	var out []map[string]any
	for _, x := range list {
		r, ok := x.(map[string]any)
		if !ok {
			t.Fatalf("reason %#v is not an object", x)
		}
		if msg, _ := r["message"].(string); msg == "" {
			t.Errorf("reason %v has no message", r)
		}
		got = append(got, fmt.Sprint(r["code"]))
		out = append(out, r)
	}
	if !slices.Equal(got, codes) {
		t.Fatalf("reason codes %v, want %v (%v)", got, codes, list)
	}
	return out
}

// TestDiagnosisEndpoint: a draft says not_running; a running campaign
// whose only slot holds a call says max_concurrency with the contact left
// ready; a campaign outside its calling window says calling_window_closed
// with the count and the window's opening as an RFC 3339 UTC time.
func TestDiagnosisEndpoint(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never}
	}})
	s := ce.setup(false)

	cid := ce.newCampaign(s, 2, "max_concurrency", 1, "rate_limit_per_second", 1000)
	m := ce.diagnosis(cid)
	wantDiagnosis(t, m, cid, "draft", false, 0, 1, 0)
	r := wantReasons(t, m, "not_running")[0]
	if got := keys(r); !sameSet(got, []string{"code", "message"}) {
		t.Fatalf("not_running reason keys %v, want code and message only", got)
	}

	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	// In flight from the claim; dialing once the provider took the call.
	deadline := time.Now().Add(10 * time.Second)
	for m = ce.diagnosis(cid); m["in_flight"] != float64(1) || m["dialing"] != true; m = ce.diagnosis(cid) {
		if time.Now().After(deadline) {
			t.Fatalf("no call placed after 10 s: %v", m)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wantDiagnosis(t, m, cid, "running", true, 1, 1, 1)
	r = wantReasons(t, m, "max_concurrency")[0]
	if got := keys(r); !sameSet(got, []string{"code", "message"}) {
		t.Fatalf("max_concurrency reason keys %v, want code and message only", got)
	}

	// A slot on the weekday three days from now, 10:00-11:00 UTC: closed
	// now, and its opening is the next one.
	day := time.Now().UTC().AddDate(0, 0, 3)
	opens := time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, time.UTC)
	sched := map[string]any{"enabled": true, "timezone": "UTC",
		"slots": []any{map[string]any{"day_of_week": (int(day.Weekday()) + 6) % 7, "start_time": "10:00", "end_time": "11:00"}}}
	wid := ce.newCampaign(s, 2, "schedule_config", sched)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(wid, "start"), nil), http.StatusOK)
	m = ce.diagnosis(wid)
	wantDiagnosis(t, m, wid, "running", false, 0, 10, 0)
	r = wantReasons(t, m, "calling_window_closed")[0]
	if r["count"] != float64(2) || r["until"] != opens.Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("calling_window_closed %v, want count 2 until %s", r, opens.Format("2006-01-02T15:04:05.000Z"))
	}
}

// TestDiagnosisErrors: 404 for an unknown campaign and for another
// organization's (exactly as if it did not exist), 422 for an id that is
// not an integer, 401 without a key or with an unknown one.
func TestDiagnosisErrors(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1)
	ce.twilioConfig(ce.keyB, "b", true, false)

	wantDetail(t, ce.b(http.MethodGet, campaignOp(cid, "diagnosis"), nil), http.StatusNotFound, fmt.Sprintf("campaign %d not found", cid))
	wantDetail(t, ce.a(http.MethodGet, campaignOp(424242, "diagnosis"), nil), http.StatusNotFound, "campaign 424242 not found")
	wantDetail(t, ce.a(http.MethodGet, endpointPath("99999999999999999999", "diagnosis"), nil), http.StatusNotFound, "campaign not found")
	for _, raw := range []string{"abc", "1.5", "0x10"} {
		wantExactProblems(t, ce.a(http.MethodGet, endpointPath(raw, "diagnosis"), nil), wantProblem{loc: "path.campaign_id",
			typ: "int_parsing", input: raw, msg: "Input should be a valid integer, unable to parse string as an integer"})
	}
	for key, detail := range map[string]string{"": "Not authenticated", "odk_unknown": "Invalid API key"} {
		r := ce.do(http.MethodGet, campaignOp(cid, "diagnosis"), key, nil)
		wantDetail(t, r, http.StatusUnauthorized, detail)
		if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("WWW-Authenticate = %q, want Bearer", got)
		}
	}
	// Organization A still sees its draft.
	wantDiagnosis(t, ce.diagnosis(cid), cid, "draft", false, 0, 10, 0)
}

// TestDiagnosisWithoutDialer: a server running without its dialer answers
// 503 for an integer id (the engine is what looks the campaign up) and 422
// for an id that is not one.
func TestDiagnosisWithoutDialer(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1)
	wantDetail(t, ce.a(http.MethodGet, campaignOp(cid, "diagnosis"), nil), http.StatusServiceUnavailable, "the dialer is not running")
	wantProblems(t, ce.a(http.MethodGet, endpointPath("x", "diagnosis"), nil), "path.campaign_id int_parsing")
}
