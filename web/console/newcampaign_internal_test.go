package console

import (
	"testing"

	"github.com/outdial/outdial/web/wire"
)

// Each problem type of the contacts file (docs/api.md 3.3) becomes a row
// of the table with the column the API says it is about (its column field;
// nothing is read out of the message).
func TestCSVProblemOf(t *testing.T) {
	src := []any{"body", "source_id"}
	row := func(n float64) []any { return []any{"body", "source_id", "row", n} }
	tests := []struct {
		pr   wire.Problem
		want csvProblem
	}{
		{wire.Problem{Loc: row(3), Type: "phone_invalid", Input: "12345", Column: "phone_number",
			Msg: "Value error, phone_number is not a valid phone number"},
			csvProblem{Row: 3, Column: "phone_number", Value: "12345", Problem: "phone_number is not a valid phone number"}},
		{wire.Problem{Loc: row(4), Type: "phone_duplicate", Input: "+14155550101", Column: "phone_number",
			Msg: "Value error, phone number +14155550101 already appears in an earlier row"},
			csvProblem{Row: 4, Column: "phone_number", Value: "+14155550101", Problem: "Phone number +14155550101 already appears in an earlier row"}},
		{wire.Problem{Loc: row(5), Type: "phone_missing", Input: "", Column: "phone_number", Msg: "Value error, phone_number is empty"},
			csvProblem{Row: 5, Column: "phone_number", Problem: "phone_number is empty"}},
		{wire.Problem{Loc: row(6), Type: "timezone_invalid", Input: "Mars", Column: "timezone",
			Msg: `Value error, "Mars" is not an IANA time zone name such as "Europe/Paris"`},
			csvProblem{Row: 6, Column: "timezone", Value: "Mars", Problem: `"Mars" is not an IANA time zone name such as "Europe/Paris"`}},
		{wire.Problem{Loc: row(7), Type: "variable_empty", Input: " ", Column: "first name",
			Msg: "Value error, column first name is empty but the workflow uses {{first name}}"},
			csvProblem{Row: 7, Column: "first name", Value: " ", Problem: "Column first name is empty but the workflow uses {{first name}}"}},
		{wire.Problem{Loc: row(8), Type: "csv_invalid", Input: 3.0, Msg: "Value error, the row has 3 fields, the header has 2"},
			csvProblem{Row: 8, Problem: "The row has 3 fields, the header has 2"}},
		{wire.Problem{Loc: src, Type: "template_variable_missing", Input: "plan", Column: "plan",
			Msg: "Value error, the workflow uses {{plan}} but the file has no plan column"},
			csvProblem{Column: "plan", Problem: "The workflow uses {{plan}} but the file has no plan column"}},
		{wire.Problem{Loc: src, Type: "csv_no_phone_column", Input: []any{"number"}, Column: "phone_number", Msg: "Value error, the header has no phone_number column"},
			csvProblem{Column: "phone_number", Problem: "The header has no phone_number column"}},
		{wire.Problem{Loc: src, Type: "object_not_found", Input: "campaigns/1/x.csv",
			Msg: "Value error, nothing was uploaded at this key in this organization"},
			csvProblem{Problem: "Nothing was uploaded at this key in this organization"}},
		{wire.Problem{Loc: src, Type: "too_many_problems", Msg: "Value error, 50 more problems not listed"},
			csvProblem{Problem: "50 more problems not listed"}},
	}
	for _, tt := range tests {
		var p ncProblems
		var f newCampaignForm
		p.placeAPIProblems([]wire.Problem{tt.pr}, &f, nil)
		if len(p.CSV) != 1 || p.Count() != 1 {
			t.Errorf("%s: table %+v, count %d, want one row", tt.pr.Type, p.CSV, p.Count())
			continue
		}
		if p.CSV[0] != tt.want {
			t.Errorf("%s: row %+v, want %+v", tt.pr.Type, p.CSV[0], tt.want)
		}
	}
}

// A slot's problem shows once on its editor row, however many days the
// row sent; an unknown loc is listed at the top.
func TestPlaceSlotProblems(t *testing.T) {
	f := newCampaignForm{Slots: []slotRow{{Days: [7]bool{true, true}}, {Days: [7]bool{false, false, true}}}}
	rowOf := []int{0, 0, 1}
	var p ncProblems
	p.placeAPIProblems([]wire.Problem{
		{Loc: []any{"body", "schedule_config", "slots", 0.0}, Msg: "Value error, start_time must be before end_time"},
		{Loc: []any{"body", "schedule_config", "slots", 1.0}, Msg: "Value error, start_time must be before end_time"},
		{Loc: []any{"body", "schedule_config", "slots", 2.0, "end_time"}, Msg: "Value error, end_time must be HH:MM"},
		{Loc: []any{"body", "schedule_config", "slots", 9.0}, Msg: "Value error, out of range"},
		{Loc: []any{"body", "surprise"}, Msg: "Value error, what is this"},
	}, &f, rowOf)
	if got := f.Slots[0].Problems; len(got) != 1 || got[0] != "start_time must be before end_time" {
		t.Errorf("row 0 problems = %q", got)
	}
	if got := f.Slots[1].Problems; len(got) != 1 || got[0] != "End: end_time must be HH:MM" {
		t.Errorf("row 1 problems = %q", got)
	}
	if got := p.Fields["slots"]; len(got) != 1 || got[0] != "Out of range" {
		t.Errorf("slots problems = %q", got)
	}
	if len(p.General) != 1 || p.General[0] != "surprise: What is this" {
		t.Errorf("general = %q", p.General)
	}
}
