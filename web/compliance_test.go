package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

const (
	compliancePath = "/api/v1/organizations/compliance"
	changesPath    = compliancePath + "/changes"
)

// defaultPolicy is a new organization's policy (API.md 12.2, 19).
var defaultPolicy = map[string]any{
	"calling_hours": map[string]any{"enabled": true, "start": "08:00", "end": "21:00", "days": []any{0, 1, 2, 3, 4, 5, 6}},
	"attempt_cap":   map[string]any{"enabled": false, "max_attempts": 3, "window_hours": 24},
	"abandonment": map[string]any{"enabled": false, "abandon_after_ms": 2000, "max_rate": 0.03, "window_hours": 24,
		"min_answered": 100, "recall_after_hours": 72},
	"version":    1,
	"updated_at": nil,
}

// apiKeyID returns the id of API key key.
func (e *testEnv) apiKeyID(key string) int64 {
	e.t.Helper()
	p, err := e.db.Authenticate(context.Background(), key)
	if err != nil {
		e.t.Fatalf("authenticate: %v", err)
	}
	return p.APIKeyID
}

// policyChanges lists the policy changes of the holder of key.
func (e *testEnv) policyChanges(key, query string) []map[string]any {
	e.t.Helper()
	r := e.do(http.MethodGet, changesPath+query, key, nil)
	wantStatus(e.t, r, http.StatusOK)
	return objects(e.t, r.obj(e.t)["changes"])
}

// TestCompliancePolicy reads the defaults, changes them part by part and
// reads the change log; organizations do not see each other's policy.
func TestCompliancePolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.a(http.MethodGet, compliancePath, nil)
	wantStatus(t, r, http.StatusOK)
	if !equalJSON(r.Body, defaultPolicy) {
		t.Fatalf("defaults = %s, want %v", r.Raw, defaultPolicy)
	}

	steps := []struct {
		name string
		body any
		want func(p map[string]any) // applies the change to the expected policy
	}{
		{"one nested field", map[string]any{"calling_hours": map[string]any{"start": "09:00"}}, func(p map[string]any) {
			p["calling_hours"].(map[string]any)["start"] = "09:00"
		}},
		{"read-only and unknown keys ignored", map[string]any{"attempt_cap": map[string]any{"enabled": true, "max_attempts": 5},
			"version": 99, "updated_at": "2000-01-01T00:00:00Z", "calling_hours": nil, "foo": 1}, func(p map[string]any) {
			p["attempt_cap"] = map[string]any{"enabled": true, "max_attempts": 5, "window_hours": 24}
		}},
		{"days are a set, answered sorted; end may be 24:00", map[string]any{"calling_hours": map[string]any{"days": []any{6, 0, "2"}, "end": "24:00"}}, func(p map[string]any) {
			ch := p["calling_hours"].(map[string]any)
			ch["days"], ch["end"] = []any{0, 2, 6}, "24:00"
		}},
		{"nothing", map[string]any{}, func(map[string]any) {}},
		{"both sections", map[string]any{"calling_hours": map[string]any{"enabled": false, "start": "00:00"},
			"attempt_cap": map[string]any{"window_hours": 720}}, func(p map[string]any) {
			ch := p["calling_hours"].(map[string]any)
			ch["enabled"], ch["start"] = false, "00:00"
			p["attempt_cap"].(map[string]any)["window_hours"] = 720
		}},
	}
	want := map[string]any{
		"calling_hours": map[string]any{"enabled": true, "start": "08:00", "end": "21:00", "days": []any{0, 1, 2, 3, 4, 5, 6}},
		"attempt_cap":   map[string]any{"enabled": false, "max_attempts": 3, "window_hours": 24},
	}
	for i, s := range steps {
		r := e.a(http.MethodPut, compliancePath, s.body)
		wantStatus(t, r, http.StatusOK)
		s.want(want)
		got := r.obj(t)
		if n := num(t, got, "version"); n != float64(i+2) {
			t.Errorf("%s: version = %v, want %d", s.name, n, i+2)
		}
		if at, err := time.Parse(time.RFC3339, fmt.Sprint(got["updated_at"])); err != nil || time.Since(at) > time.Minute {
			t.Errorf("%s: updated_at = %v, want now", s.name, got["updated_at"])
		}
		if !equalJSON(map[string]any{"calling_hours": got["calling_hours"], "attempt_cap": got["attempt_cap"]}, want) {
			t.Errorf("%s: policy = %s, want %v", s.name, r.Raw, want)
		}
		if g := e.a(http.MethodGet, compliancePath, nil); !equalJSON(g.Body, got) {
			t.Errorf("%s: GET = %s, want the PUT's answer %s", s.name, g.Raw, r.Raw)
		}
	}

	// The change log: newest first, one entry per PUT, the caller's key.
	changes := e.policyChanges(e.keyA, "")
	if len(changes) != len(steps) {
		t.Fatalf("changes = %v, want %d", changes, len(steps))
	}
	keyID := float64(e.apiKeyID(e.keyA))
	wantChanges := []map[string]any{
		{"calling_hours.enabled": map[string]any{"from": true, "to": false}, "calling_hours.start": map[string]any{"from": "09:00", "to": "00:00"},
			"attempt_cap.window_hours": map[string]any{"from": 24, "to": 720}},
		{},
		{"calling_hours.days": map[string]any{"from": []any{0, 1, 2, 3, 4, 5, 6}, "to": []any{0, 2, 6}}, "calling_hours.end": map[string]any{"from": "21:00", "to": "24:00"}},
		{"attempt_cap.enabled": map[string]any{"from": false, "to": true}, "attempt_cap.max_attempts": map[string]any{"from": 3, "to": 5}},
		{"calling_hours.start": map[string]any{"from": "08:00", "to": "09:00"}},
	}
	for i, c := range changes {
		if !sameSet(keys(c), []string{"id", "version", "changed_at", "api_key_id", "changes"}) || num(t, c, "version") != float64(len(steps)+1-i) ||
			c["api_key_id"] != keyID || !equalJSON(c["changes"], wantChanges[i]) {
			t.Errorf("change %d = %v, want version %d by key %v changing %v", i, c, len(steps)+1-i, keyID, wantChanges[i])
		}
	}
	page := e.policyChanges(e.keyA, "?limit=2")
	next := e.policyChanges(e.keyA, fmt.Sprintf("?before_id=%d", id(t, page[1], "id")))
	if len(page) != 2 || len(next) != 3 || num(t, next[0], "version") != 4 {
		t.Errorf("pages = %v then %v", page, next)
	}
	for query, want := range map[string][]string{
		"?limit=0":               {"query.limit greater_than_equal"},
		"?limit=201&before_id=x": {"query.limit less_than_equal", "query.before_id int_parsing"},
	} {
		wantProblems(t, e.a(http.MethodGet, changesPath+query, nil), want...)
	}

	// Organization B still has the defaults and no change.
	if r := e.b(http.MethodGet, compliancePath, nil); !equalJSON(r.Body, defaultPolicy) {
		t.Errorf("organization B's policy = %s, want the defaults", r.Raw)
	}
	if c := e.policyChanges(e.keyB, ""); len(c) != 0 {
		t.Errorf("organization B's changes = %v", c)
	}
	wantDetail(t, e.do(http.MethodPut, compliancePath, "", map[string]any{}), http.StatusUnauthorized, "Not authenticated")
}

// TestCompliancePolicyRules checks the 422s of PUT; none changes the policy
// or its version.
func TestCompliancePolicyRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hours := func(kv ...any) map[string]any { return map[string]any{"calling_hours": with(map[string]any{}, kv...)} }
	capOf := func(kv ...any) map[string]any { return map[string]any{"attempt_cap": with(map[string]any{}, kv...)} }
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"no body", nil, []string{"body missing"}},
		{"not JSON", rawBody(`{"calling_hours":`), []string{"body.17 json_invalid"}},
		{"not an object", rawBody(`[]`), []string{"body model_type"}},
		{"calling_hours not an object", map[string]any{"calling_hours": "08:00-21:00"}, []string{"body.calling_hours model_type"}},
		{"start not HH:MM", hours("start", "9:00"), []string{"body.calling_hours.start value_error"}},
		{"start 24:00", hours("start", "24:00"), []string{"body.calling_hours.start value_error"}},
		{"end past 24:00", hours("end", "24:01"), []string{"body.calling_hours.end value_error"}},
		{"start a number", hours("start", 8), []string{"body.calling_hours.start string_type"}},
		{"start after the stored end", hours("start", "21:30"), []string{"body.calling_hours value_error"}},
		{"end before the stored start", hours("end", "07:00"), []string{"body.calling_hours value_error"}},
		{"start equals end", hours("start", "10:00", "end", "10:00"), []string{"body.calling_hours value_error"}},
		{"enabled not a boolean", hours("enabled", "maybe"), []string{"body.calling_hours.enabled bool_parsing"}},
		{"days not a list", hours("days", "weekdays"), []string{"body.calling_hours.days list_type"}},
		{"days empty", hours("days", []any{}), []string{"body.calling_hours.days too_short"}},
		{"day 7", hours("days", []any{0, 7}), []string{"body.calling_hours.days.1 less_than_equal"}},
		{"day -1", hours("days", []any{-1}), []string{"body.calling_hours.days.0 greater_than_equal"}},
		{"day not an integer", hours("days", []any{"mon", 1.5}), []string{"body.calling_hours.days.0 int_parsing", "body.calling_hours.days.1 int_from_float"}},
		{"day twice", hours("days", []any{1, 2, 1}), []string{"body.calling_hours.days.2 value_error"}},
		{"attempt_cap not an object", map[string]any{"attempt_cap": []any{}}, []string{"body.attempt_cap model_type"}},
		{"max_attempts 0", capOf("max_attempts", 0), []string{"body.attempt_cap.max_attempts greater_than_equal"}},
		{"max_attempts 101", capOf("max_attempts", 101), []string{"body.attempt_cap.max_attempts less_than_equal"}},
		{"window_hours 0", capOf("window_hours", 0), []string{"body.attempt_cap.window_hours greater_than_equal"}},
		{"window_hours 721", capOf("window_hours", 721), []string{"body.attempt_cap.window_hours less_than_equal"}},
		{"several at once", map[string]any{"calling_hours": map[string]any{"start": "x", "days": []any{}}, "attempt_cap": map[string]any{"enabled": 2}},
			[]string{"body.calling_hours.start value_error", "body.calling_hours.days too_short", "body.attempt_cap.enabled bool_parsing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblems(t, e.a(http.MethodPut, compliancePath, c.body), c.want...)
		})
	}
	if r := e.a(http.MethodGet, compliancePath, nil); !equalJSON(r.Body, defaultPolicy) {
		t.Errorf("after the 422s: %s, want the defaults at version 1", r.Raw)
	}
	if c := e.policyChanges(e.keyA, ""); len(c) != 0 {
		t.Errorf("422s logged changes: %v", c)
	}
	wantExactProblems(t, e.a(http.MethodPut, compliancePath, hours("start", "21:30")), wantProblem{
		loc: "body.calling_hours", typ: "value_error", msg: "Value error, start must be before end (start 21:30, end 21:00)",
		input: map[string]any{"start": "21:30", "end": "21:00"}})
	wantExactProblems(t, e.a(http.MethodPut, compliancePath, hours("days", []any{1, 1})), wantProblem{
		loc: "body.calling_hours.days.1", typ: "value_error", msg: "Value error, day 1 is listed twice", input: 1})
}
