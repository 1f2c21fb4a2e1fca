package console

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// The new-campaign form as the browser posts it, and the create body it
// becomes (API.md 4.2). Numbers are passed to the API as the text typed
// (the API reads integers and numbers from strings, 0.3 of docs/api.md), so
// its 422 problems name exactly what the operator wrote; an empty optional
// number is left out, and the API's default applies.

// maxSlotRows bounds the rows of the slot editor read from a form (the API
// takes at most wire.MaxSlots slots; a row has at least one).
const maxSlotRows = wire.MaxSlots

// slotWeekdays names the days of week in the API's order (0 = Monday).
var slotWeekdays = [7]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// newCampaignForm holds the new-campaign form's values: what the page shows
// in its fields, first with the defaults and, after a failed submit, as
// they were sent.
type newCampaignForm struct {
	Name string
	// SourceID is the file_key of the uploaded CSV (set by newcampaign.js
	// once the upload is done); SourceName and SourceSize describe it.
	SourceID, SourceName, SourceSize string
	WorkflowID, ConfigID             string
	DefaultCountry                   string
	MaxConcurrency, RateLimit        string

	RetryEnabled                                   bool
	MaxRetries, RetryDelay                         string
	RetryOnBusy, RetryOnNoAnswer, RetryOnVoicemail bool

	ScheduleEnabled bool
	Timezone        string
	Slots           []slotRow

	BreakerEnabled                            bool
	FailureThreshold, WindowSeconds, MinCalls string

	// Start is true when the operator asked to start the campaign at once
	// (the "Create and start" button), false for a draft.
	Start bool
}

// slotRow is one row of the slot editor: the same hours on one or more
// days, which becomes one API slot per day.
type slotRow struct {
	Days       [7]bool
	Start, End string
	// Problems are the problems of this row's slots.
	Problems []string
}

// dayBox is one day checkbox of a slot row, for the template.
type dayBox struct {
	Index   int
	Name    string
	Short   string
	Checked bool
}

// DayBoxes lists the row's day checkboxes, Monday first.
func (s slotRow) DayBoxes() []dayBox {
	out := make([]dayBox, 7)
	for i, name := range slotWeekdays {
		out[i] = dayBox{Index: i, Name: name, Short: name[:3], Checked: s.Days[i]}
	}
	return out
}

// defaultNewCampaignForm is the form of a new page: the API's defaults (API.md 4.2),
// and one slot row of slotWeekdays 09:00 to 17:00 ready for a calling window.
func defaultNewCampaignForm() newCampaignForm {
	rc, cb := wire.DefaultRetryConfig, wire.DefaultCircuitBreaker
	return newCampaignForm{
		MaxConcurrency: strconv.Itoa(wire.DefaultMaxConcurrency),
		RetryEnabled:   rc.Enabled, MaxRetries: strconv.Itoa(rc.MaxRetries), RetryDelay: strconv.Itoa(rc.RetryDelaySeconds),
		RetryOnBusy: rc.RetryOnBusy, RetryOnNoAnswer: rc.RetryOnNoAnswer, RetryOnVoicemail: rc.RetryOnVoicemail,
		Slots:          []slotRow{{Days: [7]bool{true, true, true, true, true}, Start: "09:00", End: "17:00"}},
		BreakerEnabled: cb.Enabled, FailureThreshold: strconv.FormatFloat(cb.FailureThreshold, 'f', -1, 64),
		WindowSeconds: strconv.Itoa(cb.WindowSeconds), MinCalls: strconv.Itoa(cb.MinCallsInWindow),
		Start: true,
	}
}

// slotFieldName matches the names of the slot editor's fields: slot-N-day,
// slot-N-start, slot-N-end.
var slotFieldName = regexp.MustCompile(`^slot-([0-9]{1,4})-(day|start|end)$`)

// parseNewCampaignForm reads the posted form. Problems it finds on its own (a
// slot row without a day, too many rows) are added to probs.
func parseNewCampaignForm(v url.Values, probs *ncProblems) newCampaignForm {
	get := func(k string) string { return strings.TrimSpace(v.Get(k)) }
	on := func(k string) bool { return v.Get(k) != "" }
	f := newCampaignForm{
		Name:     v.Get("name"),
		SourceID: get("source_id"), SourceName: get("source_name"), SourceSize: get("source_size"),
		WorkflowID: get("workflow_id"), ConfigID: get("telephony_configuration_id"),
		DefaultCountry: get("default_country"),
		MaxConcurrency: get("max_concurrency"), RateLimit: get("rate_limit_per_second"),
		RetryEnabled: on("retry_enabled"), MaxRetries: get("max_retries"), RetryDelay: get("retry_delay_seconds"),
		RetryOnBusy: on("retry_on_busy"), RetryOnNoAnswer: on("retry_on_no_answer"), RetryOnVoicemail: on("retry_on_voicemail"),
		ScheduleEnabled: on("schedule_enabled"), Timezone: get("schedule_timezone"),
		BreakerEnabled: on("breaker_enabled"), FailureThreshold: get("breaker_failure_threshold"),
		WindowSeconds: get("breaker_window_seconds"), MinCalls: get("breaker_min_calls_in_window"),
		Start: v.Get("action") != "draft",
	}
	rows := map[int]*slotRow{}
	for k, vals := range v {
		m := slotFieldName.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		row := rows[i]
		if row == nil {
			row = &slotRow{}
			rows[i] = row
		}
		switch m[2] {
		case "start":
			row.Start = strings.TrimSpace(vals[0])
		case "end":
			row.End = strings.TrimSpace(vals[0])
		case "day":
			for _, d := range vals {
				if n, err := strconv.Atoi(d); err == nil && n >= 0 && n < 7 {
					row.Days[n] = true
				}
			}
		}
	}
	idx := make([]int, 0, len(rows))
	for i := range rows {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	if len(idx) > maxSlotRows {
		probs.add("slots", fmt.Sprintf("At most %d rows of hours; remove some.", maxSlotRows))
		idx = idx[:maxSlotRows]
	}
	for _, i := range idx {
		f.Slots = append(f.Slots, *rows[i])
	}
	if f.ScheduleEnabled {
		for i := range f.Slots {
			if f.Slots[i].Days == [7]bool{} {
				f.Slots[i].Problems = append(f.Slots[i].Problems, "Choose at least one day.")
				probs.count++
			}
		}
		if len(f.Slots) == 0 {
			probs.add("slots", "Add at least one row of hours, or turn the calling window off.")
		}
	}
	return f
}

// createBody returns the body of POST /api/v1/campaign for the form, and
// for each slot it sends the index of its row in f.Slots (a row of several
// days becomes several slots), to place the API's slot problems.
func (f newCampaignForm) createBody() (map[string]any, []int) {
	body := map[string]any{"name": f.Name, "source_type": "csv"}
	optional := func(key, v string) {
		if v != "" {
			body[key] = v
		}
	}
	optional("source_id", f.SourceID)
	optional("workflow_id", f.WorkflowID)
	optional("telephony_configuration_id", f.ConfigID)
	optional("default_country", f.DefaultCountry)
	optional("max_concurrency", f.MaxConcurrency)
	optional("rate_limit_per_second", f.RateLimit)
	retry := map[string]any{"enabled": f.RetryEnabled, "retry_on_busy": f.RetryOnBusy,
		"retry_on_no_answer": f.RetryOnNoAnswer, "retry_on_voicemail": f.RetryOnVoicemail}
	if f.MaxRetries != "" {
		retry["max_retries"] = f.MaxRetries
	}
	if f.RetryDelay != "" {
		retry["retry_delay_seconds"] = f.RetryDelay
	}
	body["retry_config"] = retry
	breaker := map[string]any{"enabled": f.BreakerEnabled}
	for k, v := range map[string]string{"failure_threshold": f.FailureThreshold,
		"window_seconds": f.WindowSeconds, "min_calls_in_window": f.MinCalls} {
		if v != "" {
			breaker[k] = v
		}
	}
	body["circuit_breaker"] = breaker
	var rowOf []int
	if f.ScheduleEnabled {
		slots := []map[string]any{}
		for i, row := range f.Slots {
			for d, on := range row.Days {
				if on {
					slots = append(slots, map[string]any{"day_of_week": d, "start_time": row.Start, "end_time": row.End})
					rowOf = append(rowOf, i)
				}
			}
		}
		body["schedule_config"] = map[string]any{"enabled": true, "timezone": f.Timezone, "slots": slots}
	}
	return body, rowOf
}

// SizeText says how large the uploaded file is ("" when unknown).
func (f newCampaignForm) SizeText() string {
	n, err := strconv.ParseInt(f.SourceSize, 10, 64)
	if err != nil || n < 0 {
		return ""
	}
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " bytes"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	default:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
}
