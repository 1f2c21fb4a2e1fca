package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const suppressionsPath = "/api/v1/suppressions"

func suppressionPath(id int64) string { return fmt.Sprintf("%s/%d", suppressionsPath, id) }

// suppressions lists the entries of the holder of key (query appended as
// is).
func (e *testEnv) suppressions(key, query string) []map[string]any {
	e.t.Helper()
	r := e.do(http.MethodGet, suppressionsPath+query, key, nil)
	wantStatus(e.t, r, http.StatusOK)
	return objects(e.t, r.obj(e.t)["suppressions"])
}

// suppress posts body as the holder of key, wants 200 and returns the
// answer.
func (e *testEnv) suppress(key string, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do(http.MethodPost, suppressionsPath, key, body)
	wantStatus(e.t, r, http.StatusOK)
	return r.obj(e.t)
}

// wantCounts checks an add's counts.
func wantCounts(t *testing.T, res map[string]any, added, present, invalid int) {
	t.Helper()
	got := fmt.Sprint(res["added"], res["already_present"], res["invalid_count"])
	if want := fmt.Sprint(added, present, invalid); got != want {
		t.Errorf("added, already_present, invalid_count = %s, want %s: %v", got, want, res)
	}
}

// invalidEntries renders the invalid list as "<index|row> <type> <input>".
func invalidEntries(t *testing.T, res map[string]any) []string {
	t.Helper()
	var out []string
	for _, e := range objects(t, res["invalid"]) {
		pos, ok := e["index"]
		if !ok {
			pos = e["row"]
		}
		if e["msg"] == "" || e["msg"] == nil {
			t.Errorf("invalid entry without msg: %v", e)
		}
		out = append(out, fmt.Sprintf("%v %v %v", pos, e["type"], e["input"]))
	}
	return out
}

// TestSuppressionsAddNumbers adds numbers from the body: normalised like
// contacts, invalid ones reported by index, repeats and numbers already on
// the list counted as already present, an expired entry renewed as added.
func TestSuppressionsAddNumbers(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	exp := ce.clock.now().Add(48 * time.Hour).UTC().Truncate(time.Millisecond)
	res := ce.suppress(ce.keyA, map[string]any{
		"numbers":    []any{"+14155550100", "+1 (415) 555-0101", "4155550102", "", "+1415555", "+14155550100"},
		"reason":     "asked by phone",
		"expires_at": exp.Format(time.RFC3339Nano),
	})
	wantCounts(t, res, 2, 1, 3)
	if got, want := invalidEntries(t, res), []string{"2 phone_invalid 4155550102", "3 phone_missing ", "4 phone_invalid +1415555"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("invalid = %q, want %q", got, want)
	}
	list := ce.suppressions(ce.keyA, "")
	if len(list) != 2 {
		t.Fatalf("list = %v, want 2 entries", list)
	}
	for i, n := range []string{"+14155550100", "+14155550101"} {
		e := list[i]
		if !sameSet(keys(e), []string{"id", "phone_number", "reason", "source", "created_at", "expires_at"}) ||
			e["phone_number"] != n || e["reason"] != "asked by phone" || e["source"] != "api" ||
			e["expires_at"] != exp.Format("2006-01-02T15:04:05.000Z") || e["created_at"] == nil {
			t.Errorf("entry %d = %v, want %s from api expiring %s", i, e, n, exp)
		}
	}

	// Already present: the entry stays; a never-expiring add makes it
	// never expire.
	wantCounts(t, ce.suppress(ce.keyA, map[string]any{"numbers": []any{"+14155550100"}, "reason": "again"}), 0, 1, 0)
	got := ce.suppressions(ce.keyA, "?number=%2B14155550100")
	if len(got) != 1 || got[0]["id"] != list[0]["id"] || got[0]["reason"] != "asked by phone" || got[0]["expires_at"] != nil {
		t.Errorf("after a second add = %v, want the same entry, never expiring", got)
	}

	// An expired entry no longer suppresses: adding its number again is
	// an add, with the new reason and expiry.
	wantCounts(t, ce.suppress(ce.keyA, map[string]any{"numbers": []any{"+14155550199"},
		"expires_at": ce.clock.now().Add(time.Hour).Format(time.RFC3339)}), 1, 0, 0)
	ce.clock.advance(2 * time.Hour)
	wantCounts(t, ce.suppress(ce.keyA, map[string]any{"numbers": []any{"+14155550199"}, "reason": "renewed"}), 1, 0, 0)
	got = ce.suppressions(ce.keyA, "?number=%2B14155550199")
	if len(got) != 1 || got[0]["reason"] != "renewed" || got[0]["expires_at"] != nil {
		t.Errorf("renewed entry = %v, want reason renewed, never expiring", got)
	}

	// Only invalid numbers: nothing added, 200.
	res = ce.suppress(ce.keyA, map[string]any{"numbers": []any{"nope"}, "foo": "unknown keys are ignored"})
	wantCounts(t, res, 0, 0, 1)
	// Organization B sees none of A's entries.
	if list := ce.suppressions(ce.keyB, ""); len(list) != 0 {
		t.Errorf("organization B lists %v", list)
	}
}

// TestSuppressionsInvalidListed lists the first 100 invalid numbers and
// counts them all.
func TestSuppressionsInvalidListed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	numbers := []any{"+14155550100"}
	for i := range 150 {
		numbers = append(numbers, fmt.Sprintf("bad-%d", i))
	}
	res := e.suppress(e.keyA, map[string]any{"numbers": numbers})
	wantCounts(t, res, 1, 0, 150)
	inv := invalidEntries(t, res)
	if len(inv) != 100 || inv[0] != "1 phone_invalid bad-0" || inv[99] != "100 phone_invalid bad-99" {
		t.Errorf("invalid = %d entries from %q to %q, want the first 100", len(inv), inv[0], inv[len(inv)-1])
	}
}

// TestSuppressionsBodyRules checks the 422s of POST /suppressions; none
// adds anything.
func TestSuppressionsBodyRules(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	past := ce.clock.now().Add(-time.Minute).Format(time.RFC3339)
	many := make([]any, 10001)
	for i := range many {
		many[i] = "+14155550100"
	}
	ok := []any{"+14155550100"}
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"no body", nil, []string{"body missing"}},
		{"not JSON", rawBody(`{"numbers": [`), []string{"body.13 json_invalid"}},
		{"not an object", rawBody(`["+14155550100"]`), []string{"body model_type"}},
		{"neither numbers nor source_id", map[string]any{"reason": "x"}, []string{"body.numbers missing"}},
		{"both", map[string]any{"numbers": ok, "source_id": "campaigns/1/x.csv"}, []string{"body value_error"}},
		{"numbers not a list", map[string]any{"numbers": "+14155550100"}, []string{"body.numbers list_type"}},
		{"numbers empty", map[string]any{"numbers": []any{}}, []string{"body.numbers too_short"}},
		{"numbers too many", map[string]any{"numbers": many}, []string{"body.numbers too_long"}},
		{"a number not a string", map[string]any{"numbers": []any{"+14155550100", 14155550101, nil}},
			[]string{"body.numbers.1 string_type", "body.numbers.2 string_type"}},
		{"source_id empty", map[string]any{"source_id": ""}, []string{"body.source_id string_too_short"}},
		{"source_id not a string", map[string]any{"source_id": 7}, []string{"body.source_id string_type"}},
		{"reason too long", map[string]any{"numbers": ok, "reason": strings.Repeat("r", 256)}, []string{"body.reason string_too_long"}},
		{"reason with a line break", map[string]any{"numbers": ok, "reason": "a\nb"}, []string{"body.reason control_character"}},
		{"expires_at past", map[string]any{"numbers": ok, "expires_at": past}, []string{"body.expires_at datetime_future"}},
		{"expires_at not a time", map[string]any{"numbers": ok, "expires_at": "tomorrow"}, []string{"body.expires_at datetime_from_date_parsing"}},
		{"expires_at without offset", map[string]any{"numbers": ok, "expires_at": "2099-01-01T00:00:00"}, []string{"body.expires_at datetime_from_date_parsing"}},
		{"expires_at a number", map[string]any{"numbers": ok, "expires_at": 4102444800}, []string{"body.expires_at datetime_type"}},
		{"several at once", map[string]any{"numbers": []any{}, "reason": 5, "expires_at": past},
			[]string{"body.numbers too_short", "body.reason string_type", "body.expires_at datetime_future"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblems(t, ce.a(http.MethodPost, suppressionsPath, c.body), c.want...)
		})
	}
	if list := ce.suppressions(ce.keyA, ""); len(list) != 0 {
		t.Errorf("422s added %v", list)
	}
	// The problem's details.
	wantExactProblems(t, ce.a(http.MethodPost, suppressionsPath, map[string]any{"numbers": []any{}}), wantProblem{
		loc: "body.numbers", typ: "too_short", msg: "List should have at least 1 item after validation, not 0", input: []any{},
		ctx: map[string]any{"field_type": "List", "min_length": 1, "actual_length": 0}})
	wantExactProblems(t, ce.a(http.MethodPost, suppressionsPath, map[string]any{"numbers": ok, "expires_at": past}), wantProblem{
		loc: "body.expires_at", typ: "datetime_future", msg: "Input should be in the future", input: past})
}

// TestSuppressionsListAndDelete pages the list, finds a number in any
// format and deletes entries, each organization seeing only its own.
func TestSuppressionsListAndDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var numbers []any
	for i := range 5 {
		numbers = append(numbers, fmt.Sprintf("+1415555%04d", 100+i))
	}
	wantCounts(t, e.suppress(e.keyA, map[string]any{"numbers": numbers}), 5, 0, 0)
	wantCounts(t, e.suppress(e.keyB, map[string]any{"numbers": []any{"+14155550100"}}), 1, 0, 0)
	all := e.suppressions(e.keyA, "")
	if len(all) != 5 {
		t.Fatalf("list = %d entries, want 5", len(all))
	}
	ids := make([]int64, len(all))
	for i, s := range all {
		ids[i] = id(t, s, "id")
		if i > 0 && ids[i] <= ids[i-1] {
			t.Errorf("list is not in id order: %v", ids)
		}
	}
	page := e.suppressions(e.keyA, "?limit=2")
	next := e.suppressions(e.keyA, fmt.Sprintf("?limit=2&after_id=%d", id(t, page[1], "id")))
	if len(page) != 2 || len(next) != 2 || id(t, next[0], "id") != ids[2] {
		t.Errorf("pages = %v then %v, want ids %v", page, next, ids[:4])
	}

	for _, q := range []string{"?number=%2B14155550102", "?number=+14155550102", "?number=" + url.QueryEscape("+1 (415) 555-0102"),
		"?number=%2B1-415-555-0102&limit=1"} {
		got := e.suppressions(e.keyA, q)
		if len(got) != 1 || got[0]["phone_number"] != "+14155550102" {
			t.Errorf("GET %s = %v, want the entry of +14155550102", q, got)
		}
	}
	if got := e.suppressions(e.keyA, "?number=%2B14155550199"); len(got) != 0 {
		t.Errorf("unknown number = %v, want none", got)
	}
	for query, want := range map[string][]string{
		"?number=4155550102":             {"query.number phone_invalid"},
		"?number=abc&limit=0":            {"query.number phone_invalid", "query.limit greater_than_equal"},
		"?limit=1001":                    {"query.limit less_than_equal"},
		"?limit=x&after_id=-1":           {"query.limit int_parsing", "query.after_id greater_than_equal"},
		"?after_id=99999999999999999999": {"query.after_id int_parsing"},
	} {
		wantProblems(t, e.a(http.MethodGet, suppressionsPath+query, nil), want...)
	}

	// Deleting: another organization's id is 404 like an unknown one.
	wantDetail(t, e.b(http.MethodDelete, suppressionPath(ids[0]), nil), http.StatusNotFound, fmt.Sprintf("suppression %d not found", ids[0]))
	wantStatus(t, e.a(http.MethodDelete, suppressionPath(ids[0]), nil), http.StatusNoContent)
	wantDetail(t, e.a(http.MethodDelete, suppressionPath(ids[0]), nil), http.StatusNotFound, fmt.Sprintf("suppression %d not found", ids[0]))
	wantProblems(t, e.a(http.MethodDelete, suppressionsPath+"/abc", nil), "path.suppression_id int_parsing")
	wantDetail(t, e.a(http.MethodDelete, suppressionsPath+"/99999999999999999999", nil), http.StatusNotFound, "suppression not found")
	if got := e.suppressions(e.keyA, ""); len(got) != 4 {
		t.Errorf("after the delete: %d entries, want 4", len(got))
	}
	if got := e.suppressions(e.keyB, ""); len(got) != 1 || got[0]["phone_number"] != "+14155550100" {
		t.Errorf("organization B = %v, want its own entry", got)
	}
	// Without a key.
	wantDetail(t, e.do(http.MethodGet, suppressionsPath, "", nil), http.StatusUnauthorized, "Not authenticated")
}
