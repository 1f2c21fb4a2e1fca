package web_test

import (
	"net/http"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// TestCompliancePolicyAbandonment: the abandonment section (API.md 19) is
// read, changed field by field (partial PUT), versioned, logged in the
// policy's change log and in the audit trail, and its bounds are 422s at
// ["body","abandonment",<field>] that change nothing.
func TestCompliancePolicyAbandonment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	abandonment := func(kv ...any) map[string]any { return map[string]any{"abandonment": with(map[string]any{}, kv...)} }

	cases := []struct {
		name string
		body any
		want []string
	}{
		{"not an object", map[string]any{"abandonment": true}, []string{"body.abandonment model_type"}},
		{"enabled not a boolean", abandonment("enabled", "maybe"), []string{"body.abandonment.enabled bool_parsing"}},
		{"abandon_after_ms -1", abandonment("abandon_after_ms", -1), []string{"body.abandonment.abandon_after_ms greater_than_equal"}},
		{"abandon_after_ms 60001", abandonment("abandon_after_ms", 60001), []string{"body.abandonment.abandon_after_ms less_than_equal"}},
		{"abandon_after_ms a fraction", abandonment("abandon_after_ms", 1.5), []string{"body.abandonment.abandon_after_ms int_from_float"}},
		{"max_rate -0.01", abandonment("max_rate", -0.01), []string{"body.abandonment.max_rate greater_than_equal"}},
		{"max_rate 1.01", abandonment("max_rate", 1.01), []string{"body.abandonment.max_rate less_than_equal"}},
		{"max_rate a string", abandonment("max_rate", "3%"), []string{"body.abandonment.max_rate float_parsing"}},
		{"window_hours 0", abandonment("window_hours", 0), []string{"body.abandonment.window_hours greater_than_equal"}},
		{"window_hours 721", abandonment("window_hours", 721), []string{"body.abandonment.window_hours less_than_equal"}},
		{"min_answered 0", abandonment("min_answered", 0), []string{"body.abandonment.min_answered greater_than_equal"}},
		{"min_answered 1000001", abandonment("min_answered", 1000001), []string{"body.abandonment.min_answered less_than_equal"}},
		{"recall_after_hours -1", abandonment("recall_after_hours", -1), []string{"body.abandonment.recall_after_hours greater_than_equal"}},
		{"recall_after_hours 721", abandonment("recall_after_hours", 721), []string{"body.abandonment.recall_after_hours less_than_equal"}},
		{"all at once, with another section", map[string]any{"attempt_cap": map[string]any{"max_attempts": 0},
			"abandonment": map[string]any{"max_rate": 2, "min_answered": 0}},
			[]string{"body.attempt_cap.max_attempts greater_than_equal", "body.abandonment.max_rate less_than_equal",
				"body.abandonment.min_answered greater_than_equal"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblems(t, e.a(http.MethodPut, compliancePath, c.body), c.want...)
		})
	}
	if r := e.a(http.MethodGet, compliancePath, nil); !equalJSON(r.Body, defaultPolicy) {
		t.Fatalf("after the 422s: %s, want the defaults at version 1", r.Raw)
	}
	wantExactProblems(t, e.a(http.MethodPut, compliancePath, abandonment("max_rate", 1.5)), wantProblem{
		loc: "body.abandonment.max_rate", typ: "less_than_equal", msg: "Input should be less than or equal to 1", input: 1.5,
		ctx: map[string]any{"le": 1}})

	// Partial: each PUT changes the fields sent and nothing else.
	want := map[string]any{"enabled": false, "abandon_after_ms": 2000, "max_rate": 0.03, "window_hours": 24,
		"min_answered": 100, "recall_after_hours": 72}
	steps := []struct {
		body   map[string]any
		change map[string]any
	}{
		{abandonment("enabled", true, "max_rate", 0.05), map[string]any{"enabled": true, "max_rate": 0.05}},
		{abandonment("abandon_after_ms", 0, "recall_after_hours", 0), map[string]any{"abandon_after_ms": 0, "recall_after_hours": 0}},
		{abandonment("window_hours", 720, "min_answered", 1000000, "max_rate", nil), map[string]any{"window_hours": 720, "min_answered": 1000000}},
		{abandonment("max_rate", 1, "abandon_after_ms", 60000, "recall_after_hours", 720),
			map[string]any{"max_rate": 1, "abandon_after_ms": 60000, "recall_after_hours": 720}},
	}
	for i, s := range steps {
		r := e.a(http.MethodPut, compliancePath, s.body)
		wantStatus(t, r, http.StatusOK)
		for k, v := range s.change {
			want[k] = v
		}
		got := r.obj(t)
		if !equalJSON(got["abandonment"], want) || num(t, got, "version") != float64(i+2) {
			t.Errorf("step %d: %s, want abandonment %v at version %d", i, r.Raw, want, i+2)
		}
		if !equalJSON(got["calling_hours"], defaultPolicy["calling_hours"]) || !equalJSON(got["attempt_cap"], defaultPolicy["attempt_cap"]) {
			t.Errorf("step %d changed another section: %s", i, r.Raw)
		}
		if g := e.a(http.MethodGet, compliancePath, nil); !equalJSON(g.Body, got) {
			t.Errorf("step %d: GET = %s, want the PUT's answer %s", i, g.Raw, r.Raw)
		}
	}

	// The change log names each field by its path.
	changes := e.policyChanges(e.keyA, "")
	if len(changes) != len(steps) {
		t.Fatalf("changes = %v, want %d", changes, len(steps))
	}
	first := changes[len(changes)-1]["changes"]
	if !equalJSON(first, map[string]any{"abandonment.enabled": map[string]any{"from": false, "to": true},
		"abandonment.max_rate": map[string]any{"from": 0.03, "to": 0.05}}) {
		t.Errorf("first change = %v", first)
	}
	// And so does the audit trail.
	var updates []map[string]any
	for _, en := range byAction(e.auditEntries(""), "compliance_policy.update") {
		if en["status"] == float64(http.StatusOK) {
			updates = append(updates, en)
		}
	}
	if len(updates) != len(steps) {
		t.Fatalf("%d compliance_policy.update entries answered 200, want %d", len(updates), len(steps))
	}
	if c := changeOf(t, updates[0], "abandonment.enabled"); c["from"] != false || c["to"] != true {
		t.Errorf("audit abandonment.enabled = %v", c)
	}
}

// TestAbandonmentRangesMatchStore: the API's recall_after_hours ends where
// the store stops remembering abandoned calls.
func TestAbandonmentRangesMatchStore(t *testing.T) {
	if wire.RecallAfterHoursRange.Max != store.MaxRecallAfterHours {
		t.Errorf("recall_after_hours max = %d, store remembers %d h", wire.RecallAfterHoursRange.Max, store.MaxRecallAfterHours)
	}
	if d := store.DefaultPolicy().Abandonment; d.AbandonAfterMs != 2000 || d.MaxRate != 0.03 || d.WindowHours != 24 ||
		d.MinAnswered != 100 || d.RecallAfterHours != 72 || d.Enabled {
		t.Errorf("default abandonment = %+v", d)
	}
}
