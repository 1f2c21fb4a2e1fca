package web_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// optOutPath is the opt-out URL of attempt id with token tok ("" sends
// none).
func optOutPath(id any, tok string) string {
	p := fmt.Sprintf("/api/v1/telephony/opt-out/%v", id)
	if tok != "" {
		p += "?t=" + url.QueryEscape(tok)
	}
	return p
}

// TestOptOut opts callees out with their attempts' tokens: a wrong or
// missing token is 403 and changes nothing, a right one adds the number
// with source opt_out:<attempt id> and no expiry, again and again.
func TestOptOut(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 2) // a draft: its first attempts exist
	calls := ce.calls(cid, "")
	if len(calls) != 2 || calls[0]["compliance"] != nil {
		t.Fatalf("calls of a draft = %v, want 2 without evidence (compliance null)", calls)
	}
	first, second := id(t, calls[0], "id"), id(t, calls[1], "id")

	for name, path := range map[string]string{
		"no token":                  optOutPath(first, ""),
		"wrong token":               optOutPath(first, "x"),
		"another attempt's token":   optOutPath(first, ce.token(second)),
		"an unknown attempt's path": optOutPath(999999, "x"),
	} {
		wantDetail(t, ce.do(http.MethodPost, path, "", nil), http.StatusForbidden, "Forbidden")
		if list := ce.suppressions(ce.keyA, ""); len(list) != 0 {
			t.Fatalf("%s: the list is %v, want it unchanged", name, list)
		}
	}
	wantDetail(t, ce.do(http.MethodPost, optOutPath(999999, ce.token(999999)), "", nil), http.StatusNotFound, "call attempt 999999 not found")
	wantProblems(t, ce.do(http.MethodPost, optOutPath("abc", "x"), "", nil), "path.attempt_id int_parsing")
	wantDetail(t, ce.do(http.MethodPost, optOutPath("99999999999999999999", "x"), "", nil), http.StatusNotFound, "call attempt not found")

	// The right token: 204, the number on A's list; again: 204, nothing new.
	for range 2 {
		wantStatus(t, ce.do(http.MethodPost, optOutPath(first, ce.token(first)), "", rawBody(`{"any":"body"}`)), http.StatusNoContent)
		list := ce.suppressions(ce.keyA, "")
		if len(list) != 1 || list[0]["phone_number"] != campPhone(1) || list[0]["source"] != fmt.Sprintf("opt_out:%d", first) ||
			list[0]["reason"] != "opted out during the call" || list[0]["expires_at"] != nil {
			t.Fatalf("list = %v, want %s from opt_out:%d, never expiring", list, campPhone(1), first)
		}
	}
	if list := ce.suppressions(ce.keyB, ""); len(list) != 0 {
		t.Errorf("organization B lists %v", list)
	}

	// A number already on the list keeps its entry, which no longer
	// expires.
	wantCounts(t, ce.suppress(ce.keyA, map[string]any{"numbers": []any{campPhone(2)}, "reason": "asked",
		"expires_at": ce.clock.now().Add(time.Hour).Format(time.RFC3339)}), 1, 0, 0)
	wantStatus(t, ce.do(http.MethodPost, optOutPath(second, ce.token(second)), "", nil), http.StatusNoContent)
	got := ce.suppressions(ce.keyA, "?number=%2B"+campPhone(2)[1:])
	if len(got) != 1 || got[0]["source"] != "api" || got[0]["reason"] != "asked" || got[0]["expires_at"] != nil {
		t.Errorf("entry = %v, want the api entry, never expiring", got)
	}

	// The router's answers for other methods; a trailing slash is not the
	// opt-out path.
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		r := ce.do(m, optOutPath(first, ce.token(first)), "", nil)
		wantDetail(t, r, http.StatusMethodNotAllowed, "Method Not Allowed")
		if allow := r.Header.Get("Allow"); allow != "OPTIONS, POST" {
			t.Errorf("%s: Allow = %q, want \"OPTIONS, POST\"", m, allow)
		}
	}
	if r := ce.do(http.MethodOptions, optOutPath(first, ""), "", nil); r.Status != http.StatusOK || r.Header.Get("Allow") != "OPTIONS, POST" || len(r.Raw) != 0 {
		t.Errorf("OPTIONS = %d, Allow %q, body %q; want 200, \"OPTIONS, POST\", none", r.Status, r.Header.Get("Allow"), r.Raw)
	}
	// A trailing slash: a POST is redirected (the method and query kept),
	// another method is not the opt-out path.
	wantStatus(t, ce.do(http.MethodPost, optOutPath(fmt.Sprint(second)+"/", ce.token(second)), "", nil), http.StatusNoContent)
	wantDetail(t, ce.do(http.MethodGet, optOutPath(fmt.Sprint(first)+"/", ""), "", nil), http.StatusNotFound, "Not Found")
	// The provider webhooks beside it still route.
	wantDetail(t, ce.do(http.MethodPost, fmt.Sprintf("/api/v1/telephony/twilio/status/%d?t=x", first), "", nil), http.StatusForbidden, "Forbidden")
}

// TestOptOutWithoutDialer: a server without a dialer cannot check tokens.
func TestOptOutWithoutDialer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wantDetail(t, e.do(http.MethodPost, optOutPath(1, "x"), "", nil), http.StatusServiceUnavailable, "the dialer is not running")
}

// TestSuppressedNumberNotCalled runs a campaign with a number on the
// list: it is never called, its call ends suppressed with the evidence
// naming the entry, and the report says so.
func TestSuppressedNumberNotCalled(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	s := ce.setup(false)
	res := ce.suppress(ce.keyA, map[string]any{"numbers": []any{campPhone(2)}})
	wantCounts(t, res, 1, 0, 0)
	entry := id(t, ce.suppressions(ce.keyA, "")[0], "id")
	cid := ce.newCampaign(s, 3, "rate_limit_per_second", 1000, "retry_config", map[string]any{"enabled": false})
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	c := ce.waitState(cid, "completed")
	if num(t, c, "processed_rows") != 3 || num(t, c, "executed_count") != 2 {
		t.Errorf("counters = %v, want 3 processed, 2 placed", c)
	}
	for _, rec := range ce.sim.Calls() {
		if rec.To == campPhone(2) {
			t.Errorf("the suppressed number %s was called", campPhone(2))
		}
	}
	for _, a := range ce.calls(cid, "") {
		ev, _ := a["compliance"].(map[string]any)
		suppressed := a["phone_number"] == campPhone(2)
		if suppressed && (a["outcome"] != "suppressed" || ev["suppression"] != "suppressed" || ev["suppression_id"] != float64(entry) || ev["suppression_source"] != "api") {
			t.Errorf("call of the suppressed number = %v, want outcome suppressed with the entry %d in its evidence", a, entry)
		}
		if !suppressed && (ev["suppression"] != "clear" || ev["local_time"] == nil) {
			t.Errorf("call %v: compliance %v, want clear with a local time", a["phone_number"], a["compliance"])
		}
	}
	_, _, report := ce.getRaw(ce.keyA, campaignOp(cid, "report"))
	records, err := csv.NewReader(strings.NewReader(report)).ReadAll()
	if err != nil || len(records) != 4 || len(records[0]) != 12 || records[0][8] != "suppression" || records[0][9] != "local_time" ||
		records[0][10] != "abandoned" || records[0][11] != "answer_to_first_audio_ms" {
		t.Fatalf("report (%v) =\n%s", err, report)
	}
	for _, row := range records[1:] {
		want := "clear"
		if row[0] == campPhone(2) {
			want = "suppressed"
		}
		if row[8] != want || !strings.HasPrefix(row[9], "20") {
			t.Errorf("report row %q: suppression %q, local_time %q; want %s and a time", row, row[8], row[9], want)
		}
	}
}
