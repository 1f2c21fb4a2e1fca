package web_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestCallsContactColumns: the campaign names its CSV's columns, and the
// calls list's ?columns= adds each call's contact object with exactly the
// columns asked (comma-separated or repeated, the phone column the E.164
// number, a cell the row left empty ""), nothing without it; a column the
// campaign does not have is a 422 naming the campaign's columns, checked
// after the campaign is found (404 for another organization's).
func TestCallsContactColumns(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	// The workflow's templates need first_name.
	csv := "phone_number,first_name,Full Name,email,plan\n" +
		"+14155550201,Ada,Ada Lovelace,ada@example.com,gold\n" +
		"+14155550202,Alan,Alan Turing,,silver\n"
	key := ce.upload(ce.keyA, csv)
	c := ce.createCampaign(ce.keyA, campBody("named", s.workflowID, key))
	cid := id(t, c, "id")
	if want := []any{"phone_number", "first_name", "Full Name", "email", "plan"}; !equalJSON(c["columns"], want) {
		t.Fatalf("columns = %v, want %v", c["columns"], want)
	}

	for _, call := range ce.calls(cid, "") {
		if _, ok := call["contact"]; ok {
			t.Fatalf("call without ?columns= has contact %v, want no such key", call["contact"])
		}
	}

	want := map[float64]map[string]any{
		2: {"Full Name": "Ada Lovelace", "email": "ada@example.com", "phone_number": "+14155550201"},
		3: {"Full Name": "Alan Turing", "email": "", "phone_number": "+14155550202"},
	}
	for _, q := range []string{"?columns=Full%20Name,email,phone_number", "?columns=Full%20Name&columns=%20email%20,phone_number,email"} {
		calls := ce.calls(cid, q)
		if len(calls) != 2 {
			t.Fatalf("%s: %d calls, want 2", q, len(calls))
		}
		for _, call := range calls {
			row, _ := call["contact_row"].(float64)
			if !equalJSON(call["contact"], want[row]) {
				t.Errorf("%s: row %v contact = %v, want %v", q, row, call["contact"], want[row])
			}
		}
	}
	// Filters and paging still apply; the contact follows its call.
	page := ce.calls(cid, fmt.Sprintf("?columns=plan&limit=1&after_id=%d", id(t, ce.calls(cid, "")[0], "id")))
	if len(page) != 1 || !equalJSON(page[0]["contact"], map[string]any{"plan": "silver"}) {
		t.Fatalf("second page = %v, want row 3 with contact {plan: silver}", page)
	}

	r := ce.a(http.MethodGet, campaignOp(cid, "calls")+"?columns=name,email", nil)
	ps := wantProblems(t, r, "query.columns enum")
	p := findProblem(t, ps, "query.columns")
	if p.Type != "enum" || p.Input != "name" {
		t.Fatalf("problem = %+v, want type enum for input name", p)
	}
	if exp := "'phone_number', 'first_name', 'Full Name', 'email', 'plan'"; p.Ctx["expected"] != exp {
		t.Fatalf("ctx.expected = %v, want %q", p.Ctx["expected"], exp)
	}
	wantStatus(t, ce.b(http.MethodGet, campaignOp(cid, "calls")+"?columns=nope", nil), http.StatusNotFound)
}
