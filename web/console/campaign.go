package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/outdial/outdial/web/wire"
)

// The campaign page (API.md 14): what an operator watches and steers a
// campaign from. The handler renders the campaign as the API gives it
// (GET /api/v1/campaign/{id}), its diagnosis (/diagnosis) and one page of
// its calls (/calls, paged by the API's after_id, filtered by outcome and
// state: a page costs the same for a million contacts as for ten).
// campaign.js keeps it live from the campaign's event stream; the forms
// (campaign_forms.go) change it through the API.

// callsPageSize is how many calls a page of the calls table shows.
const callsPageSize = 50

// logEntry is one campaign log entry of the API, as the page shows it.
type logEntry struct{ wire.LogEntry }

// DetailsText is the entry's details as "key=value" pairs in key order
// ("" without details).
func (l logEntry) DetailsText() string {
	keys := make([]string, 0, len(l.Details))
	for k := range l.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := l.Details[k]
		if _, isString := v.(string); !isString {
			if b, err := json.Marshal(v); err == nil {
				v = string(b)
			}
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(parts, " ")
}

// diagnosisView is the API's diagnosis as the page shows it.
type diagnosisView struct {
	wire.Diagnosis
	Reasons []reasonView
}

// reasonView is one reason of a diagnosis, as the page shows it.
type reasonView struct{ wire.Reason }

// Sentence is the operator's sentence for the reason's code (its message
// when the code is new).
func (r reasonView) Sentence() string {
	if s, ok := blockedWords[r.Code]; ok {
		return s
	}
	return r.Message
}

// callOutcomes and callStates are the calls table's filters: the values
// the API's ?outcome= and ?state= take.
var (
	callOutcomes = []string{"answered", "voicemail", "busy", "no_answer", "failed", "canceled", "unknown"}
	callStates   = []string{"queued", "dialing", "in_flight", "done"}
)

// breakdownOutcomes are the outcomes of the snapshot's breakdown, in the
// order the chart shows them.
var breakdownOutcomes = []outcomeLabel{{"answered", "Answered"}, {"voicemail", "Voicemail"}, {"busy", "Busy"},
	{"no_answer", "No answer"}, {"failed", "Failed"}, {"canceled", "Canceled"}, {"unknown", "Unknown"}, {"suppressed", "Suppressed"}}

// blockedWords says in an operator's words what each diagnosis code (the
// snapshot's blocked_by, API.md 11) means. The page carries it for
// campaign.js, so the words live in one place.
var blockedWords = map[string]string{
	"not_running":           "The campaign is not running, so it places no calls.",
	"all_final":             "Every contact has a final outcome: nobody is left to call.",
	"calling_window_closed": "The campaign's calling window is closed for the contacts that are ready.",
	"calling_hours":         "The organization's calling hours hold contacts back in their time zones.",
	"waiting_for_retries":   "Contacts are waiting for their retry delay to pass.",
	"attempt_cap":           "Contacts reached the organization's attempt cap across campaigns for now.",
	"max_concurrency":       "Every call slot is busy: as many calls are in flight as the maximum concurrency allows.",
	"rate_limit":            "The rate limit spaces new calls out.",
	"provider_backoff":      "The provider cannot take calls right now (it asked to slow down, cannot be reached, or its events connection cannot be made): the campaign waits before the next call.",
	"no_caller_id":          "The telephony configuration has no active number to call from: add one under Telephony.",
}

// blockedWord is one entry of blockedWords, for the template.
type blockedWord struct{ Code, Sentence string }

// campaignView is the data of campaign.html.
type campaignView struct {
	C         wire.Campaign
	Logs      []logEntry // newest first
	Diagnosis *diagnosisView
	// DiagnosisErr says why there is no diagnosis (the server runs
	// without its dialer).
	DiagnosisErr string
	Calls        callsTable
	// Abandon is the "Abandoned calls" card (campaign_abandoned.go).
	Abandon  abandonView
	Settings settingsForm
	Redial   redialForm
	// Notice is what went wrong with the last action (a 409), "" when
	// nothing did.
	Notice   string
	Words    []blockedWord
	Outcomes []outcomeLabel
	// callsReload is the link to this page of the calls table.
	callsReload string
}

// outcomeLabel names an outcome for people.
type outcomeLabel struct{ Code, Label string }

// opButton is one of the page's state buttons.
type opButton struct{ Op, Label string }

// Ops are the state buttons, each shown when the state allows it.
func (campaignView) Ops() []opButton {
	return []opButton{{"start", "Start"}, {"pause", "Pause"}, {"resume", "Resume"}, {"cancel", "Cancel"}}
}

// CallOutcomes and CallStates are the calls table's filter values.
func (campaignView) CallOutcomes() []string { return callOutcomes }

// CallStates: see CallOutcomes.
func (campaignView) CallStates() []string { return callStates }

// InFlight is the number of calls in flight the diagnosis saw (0 without
// one).
func (v campaignView) InFlight() int {
	if v.Diagnosis == nil {
		return 0
	}
	return v.Diagnosis.InFlight
}

// Queued is the number of contacts not final and not in a call now.
func (v campaignView) Queued() int64 {
	return max(0, v.C.TotalRows-v.C.ProcessedRows-int64(v.InFlight()))
}

// CallsReload is this page of the calls table again.
func (v campaignView) CallsReload() string { return v.callsReload }

// Can reports whether the campaign's state allows op (start, pause,
// resume, cancel, redial, edit), as API.md 4.4 says.
func (v campaignView) Can(op string) bool {
	return allowed(op, v.C.State, v.C.RedialedCampaignID != nil)
}

// allowed reports whether op is allowed in state; redialed is set when the
// campaign was redialed already.
func allowed(op, state string, redialed bool) bool {
	switch op {
	case "start":
		return state == "draft"
	case "pause":
		return state == "running"
	case "resume":
		return state == "paused"
	case "cancel", "edit":
		return state == "draft" || state == "running" || state == "paused"
	case "redial":
		return (state == "completed" || state == "cancelled") && !redialed
	}
	return false
}

// Final reports whether the campaign's state is final.
func (v campaignView) Final() bool {
	switch v.C.State {
	case "completed", "cancelled", "failed":
		return true
	}
	return false
}

// Until formats a diagnosis time: the UTC clock time, and how far away.
func (v campaignView) Until(at *string) string {
	if at == nil {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, *at)
	if err != nil {
		return *at
	}
	return t.UTC().Format("15:04:05 UTC, Jan 2")
}

// callsTable is one page of the calls table.
type callsTable struct {
	Calls []wire.Call
	// Outcome and State are the filters applied ("" for any).
	Outcome, State string
	// Columns are the contact columns the table can show (the campaign's
	// CSV columns but the phone number, which it always shows); Column is
	// the one it shows ("" for none).
	Columns []string
	Column  string
	// Next is the link to the next page ("" on the last), First the link
	// to the first page (when this is not it).
	Next, First string
	// Err is the API's reason for refusing the filters.
	Err string
}

// campaignPage renders the campaign page.
func campaignPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := campaignID(r)
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such campaign.")
		return nil
	}
	return c.renderCampaign(w, r, s, http.StatusOK, id, nil)
}

// campaignID reads the path's campaign id: a positive integer.
func campaignID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id, err == nil && id > 0
}

// campaignPath is the console page of campaign id.
func campaignPath(id int64) string { return Prefix + "campaigns/" + strconv.FormatInt(id, 10) }

// renderCampaign renders campaign id's page with status; edit, when not
// nil, sets what the settings or redial form show (a rejected change)
// and the notice.
func (c *Console) renderCampaign(w http.ResponseWriter, r *http.Request, s *session, status int, id int64, edit func(*campaignView)) error {
	a := c.api(r, s)
	base := "/api/v1/campaign/" + strconv.FormatInt(id, 10)
	v := campaignView{Outcomes: breakdownOutcomes}
	if err := a.get(base, &v.C); err != nil {
		return err
	}
	v.Logs = make([]logEntry, len(v.C.Logs))
	for i, l := range v.C.Logs {
		v.Logs[len(v.C.Logs)-1-i] = logEntry{l}
	}
	var d wire.Diagnosis
	if err := a.get(base+"/diagnosis", &d); err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.status != http.StatusServiceUnavailable {
			return err
		}
		v.DiagnosisErr = ae.detail
	} else {
		v.Diagnosis = &diagnosisView{Diagnosis: d, Reasons: make([]reasonView, len(d.Reasons))}
		for i, rs := range d.Reasons {
			v.Diagnosis.Reasons[i] = reasonView{rs}
		}
	}
	var rates *wire.Diagnosis
	if v.Diagnosis != nil {
		rates = &v.Diagnosis.Diagnosis
	}
	v.Abandon = a.abandonCard(id, rates)
	calls, err := c.callsTable(r, s, id, v.C.Columns)
	if err != nil {
		return err
	}
	v.Calls = calls
	v.callsReload = campaignPath(id) + "#calls"
	if q := r.URL.Query(); r.Method == http.MethodGet && len(q) > 0 {
		q.Del("saved")
		v.callsReload = callsLink(id, q)
	}
	for _, code := range []string{"not_running", "all_final", "no_caller_id", "provider_backoff", "calling_window_closed",
		"calling_hours", "attempt_cap", "max_concurrency", "rate_limit", "waiting_for_retries"} {
		v.Words = append(v.Words, blockedWord{code, blockedWords[code]})
	}
	v.Settings = settingsFrom(v.C)
	v.Settings.Saved = r.URL.Query().Get("saved") != ""
	v.Redial = redialForm{Values: map[string]string{"name": v.C.Name + " (redial)"},
		Checked: map[string]bool{"retry_on_busy": true, "retry_on_no_answer": true, "retry_on_voicemail": true}}
	if edit != nil {
		edit(&v)
	}
	return c.renderStatus(w, r, s, status, "campaign.html", v.C.Name, "campaigns", v)
}

// callsTable reads the page of calls the request's query names: outcome
// and state filters, after_id (the last call of the previous page) and
// column, the contact column shown (columns are the campaign's CSV
// columns). Filters the API refuses make an empty table saying why.
func (c *Console) callsTable(r *http.Request, s *session, id int64, columns []string) (callsTable, error) {
	in := r.URL.Query()
	t := callsTable{Outcome: in.Get("outcome"), State: in.Get("state")}
	for _, col := range columns {
		if col != "" && !strings.Contains(col, ",") && !strings.EqualFold(col, "phone_number") {
			t.Columns = append(t.Columns, col)
		}
	}
	t.Column = contactColumn(in, t.Columns)
	q := url.Values{"limit": {strconv.Itoa(callsPageSize + 1)}}
	filters := url.Values{}
	if t.Outcome != "" {
		filters.Set("outcome", t.Outcome)
	}
	if t.State != "" {
		filters.Set("state", t.State)
	}
	if in.Has("column") {
		// Chosen (none included): the pages keep the choice.
		filters.Set("column", t.Column)
	}
	for k, vs := range filters {
		if k != "column" {
			q[k] = vs
		}
	}
	if t.Column != "" {
		q.Set("columns", t.Column)
	}
	after := in.Get("after_id")
	if after != "" {
		q.Set("after_id", after)
		t.First = callsLink(id, filters)
	}
	var page wire.CallList
	path := fmt.Sprintf("/api/v1/campaign/%d/calls?%s", id, q.Encode())
	if err := c.api(r, s).get(path, &page); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusUnprocessableEntity {
			t.Err = ae.detail
			return t, nil
		}
		return t, err
	}
	t.Calls = page.Calls
	if len(t.Calls) > callsPageSize {
		t.Calls = t.Calls[:callsPageSize]
		next := url.Values{"after_id": {strconv.FormatInt(t.Calls[callsPageSize-1].ID, 10)}}
		for k, vs := range filters {
			next[k] = vs
		}
		t.Next = callsLink(id, next)
	}
	return t, nil
}

// contactColumn is the contact column the calls table shows: the query's
// column when it is one of columns ("" when it is empty: none chosen), else
// by default the first column whose name has "name" in it (first_name,
// Full Name), else none.
func contactColumn(in url.Values, columns []string) string {
	if in.Has("column") {
		if col := in.Get("column"); slices.Contains(columns, col) {
			return col
		}
		if in.Get("column") == "" {
			return ""
		}
	}
	for _, col := range columns {
		if strings.Contains(strings.ToLower(col), "name") {
			return col
		}
	}
	return ""
}

// callsLink is the campaign page with the calls table's query q, anchored
// at the table.
func callsLink(id int64, q url.Values) string {
	p := campaignPath(id)
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p + "#calls"
}
