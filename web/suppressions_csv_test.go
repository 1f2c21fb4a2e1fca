package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/web"
)

// TestSuppressionsImportCSV imports an uploaded CSV: valid numbers added
// with source csv, invalid rows listed by row (header = 1), a number
// repeated in the file or already on the list counted as already present.
func TestSuppressionsImportCSV(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	wantCounts(t, ce.suppress(ce.keyA, map[string]any{"numbers": []any{"+14155550101"}}), 1, 0, 0)
	key := ce.upload(ce.keyA, "phone_number,name\n"+
		"+14155550100,a\n"+ // 2 added
		"+14155550101,b\n"+ // 3 already on the list
		"nope,c\n"+ // 4 invalid
		"+1 415 555 0100,d\n"+ // 5 repeats row 2
		",e\n"+ // 6 empty
		"\n"+ // not a row
		"+1 (415) 555-0102,f\n"+ // 7 added
		"+14155550103,g,extra\n") // 8 a field too many
	res := ce.suppress(ce.keyA, map[string]any{"source_id": key, "reason": "registry"})
	wantCounts(t, res, 2, 2, 3)
	if got, want := invalidEntries(t, res), []string{"4 phone_invalid nope", "6 phone_missing ", "8 csv_invalid 3"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("invalid = %q, want %q", got, want)
	}
	var got []string
	for _, s := range ce.suppressions(ce.keyA, "") {
		got = append(got, fmt.Sprintf("%v %v %v", s["phone_number"], s["source"], s["reason"]))
	}
	if want := []string{"+14155550101 api ", "+14155550100 csv registry", "+14155550102 csv registry"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("list = %q, want %q", got, want)
	}
	// The same file again: everything is already there.
	wantCounts(t, ce.suppress(ce.keyA, map[string]any{"source_id": key}), 0, 4, 3)

	// Another organization cannot name A's upload.
	wantExactProblems(t, ce.b(http.MethodPost, suppressionsPath, map[string]any{"source_id": key}), wantProblem{
		loc: "body.source_id", typ: "object_not_found", msg: "Value error, nothing was uploaded at this key in this organization", input: key})
	if list := ce.suppressions(ce.keyB, ""); len(list) != 0 {
		t.Errorf("organization B lists %v", list)
	}
}

// TestSuppressionsImportCSVCounts checks the counts of a file with more
// problems than are listed: every repeat is already present, every invalid
// row counted, the first 100 listed; a timezone column is checked like a
// contact's.
func TestSuppressionsImportCSVCounts(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	var b strings.Builder
	b.WriteString("phone_number,timezone\n+14155550100,\n")
	for i := range 150 {
		fmt.Fprintf(&b, "+14155550100,\nbad-%d,\n", i) // a repeat, then an invalid number
	}
	b.WriteString("+14155550101,Mars/Olympus\n+14155550102,Europe/Paris\n")
	res := ce.suppress(ce.keyA, map[string]any{"source_id": ce.upload(ce.keyA, b.String())})
	wantCounts(t, res, 2, 150, 151)
	inv := invalidEntries(t, res)
	if len(inv) != 100 || inv[0] != "4 phone_invalid bad-0" || inv[99] != "202 phone_invalid bad-99" {
		t.Errorf("invalid = %d entries from %q to %q, want the first 100 rows", len(inv), inv[0], inv[len(inv)-1])
	}
	// The last invalid row (not listed) is the timezone's.
	b.Reset()
	b.WriteString("phone_number,timezone\n+14155550101,Mars/Olympus\n")
	res = ce.suppress(ce.keyA, map[string]any{"source_id": ce.upload(ce.keyA, b.String())})
	wantCounts(t, res, 0, 0, 1)
	if got := invalidEntries(t, res); fmt.Sprint(got) != fmt.Sprint([]string{"2 timezone_invalid Mars/Olympus"}) {
		t.Errorf("invalid = %q", got)
	}
}

// TestSuppressionsImportCSVProblems checks the 422s of an import: a
// problem of the whole file adds nothing; one that stops the reading
// part-way says what the rows before it added.
func TestSuppressionsImportCSVProblems(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{limits: web.Limits{MaxCampaignRows: 3}})
	missing := fmt.Sprintf("campaigns/%d/00000000-0000-4000-8000-000000000000_x.csv", ce.orgA)
	cases := []struct {
		name, csv string // csv "": the key is missing
		key       string
		want      wantProblem
		column    string // the problem's column
	}{
		{"nothing uploaded", "", missing, wantProblem{loc: "body.source_id", typ: "object_not_found",
			msg: "Value error, nothing was uploaded at this key in this organization", input: missing}, ""},
		{"not a key", "", "../etc/passwd", wantProblem{loc: "body.source_id", typ: "object_not_found",
			msg: "Value error, nothing was uploaded at this key in this organization", input: "../etc/passwd"}, ""},
		{"no phone column", "name\nAda\n", "", wantProblem{loc: "body.source_id", typ: "csv_no_phone_column"}, "phone_number"},
		{"header only", "phone_number\n", "", wantProblem{loc: "body.source_id", typ: "csv_empty"}, ""},
		{"repeated column", "phone_number,phone_number\n+14155550100,+14155550101\n", "", wantProblem{loc: "body.source_id.row.1", typ: "csv_invalid"}, "phone_number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := c.key
			if c.csv != "" {
				key = ce.upload(ce.keyA, c.csv)
			}
			ps := problems(t, ce.a(http.MethodPost, suppressionsPath, map[string]any{"source_id": key}))
			if len(ps) != 1 || ps[0].loc() != c.want.loc || ps[0].Type != c.want.typ || (c.want.msg != "" && ps[0].Msg != c.want.msg) || ps[0].Ctx != nil || ps[0].Column != c.column {
				t.Errorf("problems = %+v, want one %s at %s without ctx, column %q", ps, c.want.typ, c.want.loc, c.column)
			}
		})
	}
	if list := ce.suppressions(ce.keyA, ""); len(list) != 0 {
		t.Fatalf("file problems added %v", list)
	}

	// A syntax error stops the reading: the rows before it are added.
	key := ce.upload(ce.keyA, "phone_number\n+14155550100\n+14155550101\n\"+14155550102\n+14155550103\n")
	ps := problems(t, ce.a(http.MethodPost, suppressionsPath, map[string]any{"source_id": key}))
	if len(ps) != 1 || ps[0].loc() != "body.source_id.row.4" || ps[0].Type != "csv_invalid" ||
		!equalJSON(ps[0].Ctx, map[string]any{"added": 2, "already_present": 0}) ||
		!strings.Contains(ps[0].Msg, "reading stopped here (the rows before were imported: 2 added, 0 already present)") {
		t.Errorf("syntax error = %+v, want csv_invalid at row 4 with the counts of rows 2-3", ps)
	}
	// More numbers than the limit (3 here): the first 3 are added.
	key = ce.upload(ce.keyA, "phone_number\n+14155550100\n+14155550104\n+14155550105\n+14155550106\n")
	wantExactProblems(t, ce.a(http.MethodPost, suppressionsPath, map[string]any{"source_id": key}), wantProblem{
		loc: "body.source_id", typ: "csv_too_many_rows", input: key,
		msg: "Value error, the file has more than 3 numbers, the most one import takes (serve --max-campaign-rows); split it (the rows before were imported: 2 added, 1 already present)",
		ctx: map[string]any{"max_rows": 3, "added": 2, "already_present": 1}})
	var got []string
	for _, s := range ce.suppressions(ce.keyA, "") {
		got = append(got, fmt.Sprint(s["phone_number"]))
	}
	if want := []string{"+14155550100", "+14155550101", "+14155550104", "+14155550105"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("list = %v, want %v", got, want)
	}
}
