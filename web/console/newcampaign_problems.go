package console

import (
	"fmt"
	"slices"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// Where the new-campaign page shows each problem of a failed create: the
// API's 422 entries (docs/api.md 0.3) are placed next to the field their
// loc names; the contacts file's problems (loc ["body","source_id",...],
// docs/api.md 3.3) become the rows of a table (row, column, value,
// problem); what names no field is listed at the top.

// ncProblems are the problems of one submit, by where they show.
type ncProblems struct {
	// Fields maps a form field's name (and "slots", "retry_config",
	// "circuit_breaker", "schedule_config" for a group) to its problems.
	Fields map[string][]string
	// CSV lists the contacts file's problems in the API's order.
	CSV []csvProblem
	// General lists what names no field: an API answer without a 422
	// list, or a problem at a place the form does not have.
	General []string
	// count counts every problem, slot rows' included.
	count int
}

// csvProblem is one row of the problems table of a rejected file.
type csvProblem struct {
	// Row is the file's row number (the header is row 1), 0 for the
	// whole file.
	Row int64
	// Column is the column the problem is about ("" when it is the whole
	// row or file).
	Column string
	// Value is the cell as the file has it (row problems only).
	Value string
	// Problem says what is wrong, in words.
	Problem string
}

// Any reports whether there is a problem.
func (p *ncProblems) Any() bool { return p.count > 0 }

// Count returns how many problems there are.
func (p *ncProblems) Count() int { return p.count }

// add records msg at the field named field.
func (p *ncProblems) add(field, msg string) {
	if p.Fields == nil {
		p.Fields = map[string][]string{}
	}
	p.Fields[field] = append(p.Fields[field], msg)
	p.count++
}

// general records msg at the top of the form.
func (p *ncProblems) general(msg string) {
	p.General = append(p.General, msg)
	p.count++
}

// ncFieldOfLoc maps the API's body locs of a create (docs/api.md 4.2) to the
// form's field names: [section, key] for nested objects, [key] for the
// top level.
var ncFieldOfLoc = map[string]string{
	"name":                                "name",
	"workflow_id":                         "workflow_id",
	"telephony_configuration_id":          "telephony_configuration_id",
	"default_country":                     "default_country",
	"max_concurrency":                     "max_concurrency",
	"rate_limit_per_second":               "rate_limit_per_second",
	"retry_config":                        "retry_config",
	"retry_config.enabled":                "retry_enabled",
	"retry_config.max_retries":            "max_retries",
	"retry_config.retry_delay_seconds":    "retry_delay_seconds",
	"retry_config.retry_on_busy":          "retry_config",
	"retry_config.retry_on_no_answer":     "retry_config",
	"retry_config.retry_on_voicemail":     "retry_config",
	"circuit_breaker":                     "circuit_breaker",
	"circuit_breaker.enabled":             "breaker_enabled",
	"circuit_breaker.failure_threshold":   "breaker_failure_threshold",
	"circuit_breaker.window_seconds":      "breaker_window_seconds",
	"circuit_breaker.min_calls_in_window": "breaker_min_calls_in_window",
	"schedule_config":                     "schedule_config",
	"schedule_config.enabled":             "schedule_config",
	"schedule_config.timezone":            "schedule_timezone",
	"schedule_config.slots":               "slots",
}

// placeAPIProblems places a create's 422 entries: rowOf maps each slot the
// body sent to its row in f.Slots.
func (p *ncProblems) placeAPIProblems(list []wire.Problem, f *newCampaignForm, rowOf []int) {
	for _, pr := range list {
		msg := ncText(pr.Msg)
		loc := pr.Loc
		if len(loc) > 0 && loc[0] == "body" {
			loc = loc[1:]
		}
		key := ncLocKey(loc)
		switch {
		case key == "source_id" && pr.Type == "missing":
			p.add("source_id", "Choose a CSV file of contacts; it is uploaded before the campaign is created.")
		case key == "source_id" || strings.HasPrefix(key, "source_id."):
			p.CSV = append(p.CSV, csvProblemOf(pr, loc, msg))
			p.count++
		case strings.HasPrefix(key, "schedule_config.slots.") && len(loc) >= 3:
			i, ok := ncLocIndex(loc[2])
			if !ok || i < 0 || i >= len(rowOf) {
				p.add("slots", msg)
				continue
			}
			if len(loc) >= 4 {
				msg = slotFieldWord(fmt.Sprint(loc[3])) + msg
			}
			row := &f.Slots[rowOf[i]]
			if !slices.Contains(row.Problems, msg) { // one problem for every day of the row
				row.Problems = append(row.Problems, msg)
			}
			p.count++
		case ncFieldOfLoc[key] != "":
			p.add(ncFieldOfLoc[key], msg)
		default:
			p.general(strings.TrimPrefix(key+": ", ": ") + msg)
		}
	}
}

// ncLocKey joins a loc's names with dots ("retry_config.max_retries").
func ncLocKey(loc []any) string {
	parts := make([]string, len(loc))
	for i, l := range loc {
		parts[i] = fmt.Sprint(l)
	}
	return strings.Join(parts, ".")
}

// ncLocIndex reads a list index of a decoded loc (a JSON number).
func ncLocIndex(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), n == float64(int(n))
	case int:
		return n, true
	case int64:
		return int(n), true
	}
	return 0, false
}

// slotFieldWord names a slot's field before its problem.
func slotFieldWord(field string) string {
	switch field {
	case "start_time":
		return "Start: "
	case "end_time":
		return "End: "
	case "day_of_week":
		return "Day: "
	}
	return ""
}

// ncText is an API problem's msg as a sentence for the page: without
// pydantic's "Value error, " prefix, starting with a capital (unless it
// starts with a field's name, such as phone_number).
func ncText(msg string) string {
	msg = strings.TrimPrefix(msg, "Value error, ")
	first, _, _ := strings.Cut(msg, " ")
	if msg != "" && msg[0] >= 'a' && msg[0] <= 'z' && !strings.Contains(first, "_") {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return msg
}

// csvProblemOf turns a problem of the contacts file into a table row: the row
// of its loc, the column the API says it is about, the cell.
func csvProblemOf(pr wire.Problem, loc []any, msg string) csvProblem {
	out := csvProblem{Problem: msg, Column: pr.Column}
	if len(loc) >= 3 && loc[1] == "row" {
		if n, ok := ncLocIndex(loc[2]); ok {
			out.Row = int64(n)
		}
	}
	if out.Row > 0 && pr.Type != "csv_invalid" {
		switch v := pr.Input.(type) {
		case string:
			out.Value = v
		case float64:
			out.Value = fmt.Sprint(v)
		}
	}
	return out
}

// fieldProblems is what the template shows under one field: the id of the
// list (the field's aria-describedby) and its problems.
type fieldProblems struct {
	ID   string
	List []string
}

// For returns the problems of the form field named field.
func (p *ncProblems) For(field string) fieldProblems {
	return fieldProblems{ID: field + "-problems", List: p.Fields[field]}
}
