package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The compliance policy (docs/api.md 9.2): the calling hours (on, start,
// end, days) and the attempt cap, edited in one form that PUTs the whole
// policy; the policy's version and the change log
// (GET /api/v1/organizations/compliance/changes) below it.

// changesPageSize is how many change log entries a page shows.
const changesPageSize = 20

// policyAPI is the API's path of the organization's policy.
const policyAPI = "/api/v1/organizations/compliance"

// policyJSON is the API's compliance policy.
type policyJSON struct {
	CallingHours struct {
		Enabled bool   `json:"enabled"`
		Start   string `json:"start"`
		End     string `json:"end"`
		Days    []int  `json:"days"`
	} `json:"calling_hours"`
	AttemptCap struct {
		Enabled     bool `json:"enabled"`
		MaxAttempts int  `json:"max_attempts"`
		WindowHours int  `json:"window_hours"`
	} `json:"attempt_cap"`
	Version   int64   `json:"version"`
	UpdatedAt *string `json:"updated_at"`
}

// policyDayNames are the days of the policy, 0 = Monday.
var policyDayNames = [7]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// policyDay is one day's checkbox.
type policyDay struct {
	Value   int
	Name    string
	Checked bool
}

// policyForm is the form's values and problems.
type policyForm struct {
	HoursEnabled bool
	Start, End   string
	Days         []policyDay
	CapEnabled   bool
	MaxAttempts  string
	WindowHours  string
	Errors       formErrors
}

// changeRow is one change log entry as shown.
type changeRow struct {
	ID, Version int64
	ChangedAt   string
	By          string
	Items       []changeItem
}

// changeItem is one field a change changed.
type changeItem struct {
	Path, From, To string
}

// complianceView is the data of compliance.html.
type complianceView struct {
	Form      policyForm
	Version   int64
	UpdatedAt *string
	Notice    string
	Changes   []changeRow
	// Older links the next page of older changes; Newest the first page.
	Older, Newest string
	// Limits is the organization's limit form (limits.go).
	Limits limitsView
}

// formOf is the form showing the stored policy p.
func formOf(p policyJSON) policyForm {
	f := policyForm{HoursEnabled: p.CallingHours.Enabled, Start: p.CallingHours.Start, End: p.CallingHours.End,
		CapEnabled: p.AttemptCap.Enabled, MaxAttempts: strconv.Itoa(p.AttemptCap.MaxAttempts),
		WindowHours: strconv.Itoa(p.AttemptCap.WindowHours)}
	f.Days = policyDayBoxes(p.CallingHours.Days)
	return f
}

// policyDayBoxes are the seven days' checkboxes with days checked.
func policyDayBoxes(days []int) []policyDay {
	out := make([]policyDay, len(policyDayNames))
	for i, n := range policyDayNames {
		out[i] = policyDay{Value: i, Name: n, Checked: slices.Contains(days, i)}
	}
	return out
}

// compliancePage shows the policy form and the change log.
func compliancePage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	var p policyJSON
	if err := c.api(r, s).get(policyAPI, &p); err != nil {
		return err
	}
	notice := map[string]string{"saved": "The policy was saved; running campaigns apply it at once.",
		"limits": "The organization's limit was saved; running campaigns claim under it at once."}[r.URL.Query().Get("notice")]
	return c.renderCompliance(w, r, s, http.StatusOK, p, formOf(p), notice)
}

// renderCompliance renders the page with form, the stored policy p's
// version, and a page of the change log (?before_id=).
func (c *Console) renderCompliance(w http.ResponseWriter, r *http.Request, s *session, status int, p policyJSON, form policyForm, notice string) error {
	return c.renderCompliancePage(w, r, s, status, p, form, notice, nil)
}

// renderCompliancePage is renderCompliance with the limit form's state
// (nil: the organization's limit as stored).
func (c *Console) renderCompliancePage(w http.ResponseWriter, r *http.Request, s *session, status int, p policyJSON, form policyForm,
	notice string, lv *limitsView) error {
	v := complianceView{Form: form, Version: p.Version, UpdatedAt: p.UpdatedAt, Notice: notice}
	if lv != nil {
		v.Limits = *lv
	} else {
		stored, err := c.limitsOf(r, s)
		if err != nil {
			return err
		}
		v.Limits = stored
	}
	q := url.Values{"limit": {strconv.Itoa(changesPageSize)}}
	if before, err := strconv.ParseInt(r.URL.Query().Get("before_id"), 10, 64); err == nil && before > 0 && r.Method == http.MethodGet {
		q.Set("before_id", strconv.FormatInt(before, 10))
		v.Newest = Prefix + "compliance#changes"
	}
	var page struct {
		Changes []struct {
			ID        int64                     `json:"id"`
			Version   int64                     `json:"version"`
			ChangedAt string                    `json:"changed_at"`
			APIKeyID  *int64                    `json:"api_key_id"`
			Changes   map[string]map[string]any `json:"changes"`
		} `json:"changes"`
	}
	if err := c.api(r, s).get(policyAPI+"/changes?"+q.Encode(), &page); err != nil {
		return err
	}
	for _, ch := range page.Changes {
		row := changeRow{ID: ch.ID, Version: ch.Version, ChangedAt: ch.ChangedAt, By: "not through the API"}
		if ch.APIKeyID != nil {
			row.By = fmt.Sprintf("API key %d", *ch.APIKeyID)
		}
		paths := make([]string, 0, len(ch.Changes))
		for path := range ch.Changes {
			paths = append(paths, path)
		}
		slices.Sort(paths)
		for _, path := range paths {
			d := ch.Changes[path]
			row.Items = append(row.Items, changeItem{Path: path, From: changeValue(path, d["from"]), To: changeValue(path, d["to"])})
		}
		v.Changes = append(v.Changes, row)
	}
	if n := len(page.Changes); n == changesPageSize {
		v.Older = fmt.Sprintf("%scompliance?before_id=%d#changes", Prefix, page.Changes[n-1].ID)
	}
	return c.renderStatus(w, r, s, status, "compliance.html", "Compliance", "compliance", v)
}

// changeValue writes a changed value as text: days by name, strings as
// they are, anything else as JSON.
func changeValue(path string, v any) string {
	if days, ok := v.([]any); ok && strings.HasSuffix(path, ".days") {
		names := make([]string, 0, len(days))
		for _, d := range days {
			if n, ok := d.(float64); ok && n >= 0 && int(n) < len(policyDayNames) && float64(int(n)) == n {
				names = append(names, policyDayNames[int(n)][:3])
			} else {
				names = append(names, fmt.Sprint(d))
			}
		}
		return strings.Join(names, ", ")
	}
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return "none"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// policyFields are the fields of the form by problem key.
var policyFields = map[string]bool{
	"calling_hours": true, "calling_hours.enabled": true, "calling_hours.start": true, "calling_hours.end": true,
	"calling_hours.days": true, "attempt_cap.enabled": true, "attempt_cap.max_attempts": true, "attempt_cap.window_hours": true,
}

// policyKey maps a problem's location to its field: the days' items to the
// days, the rest by their first two names.
func policyKey(loc []string) string {
	if len(loc) > 2 {
		loc = loc[:2]
	}
	return strings.Join(loc, ".")
}

// complianceSave PUTs the whole form; a refused one shows the form again
// with the values sent and the problems beside their fields.
func complianceSave(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	var days []int
	for _, d := range r.PostForm["days"] {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 && n < len(policyDayNames) && !slices.Contains(days, n) {
			days = append(days, n)
		}
	}
	slices.Sort(days)
	form := policyForm{
		HoursEnabled: r.PostFormValue("hours_enabled") != "",
		Start:        strings.TrimSpace(r.PostFormValue("start")),
		End:          strings.TrimSpace(r.PostFormValue("end")),
		Days:         policyDayBoxes(days),
		CapEnabled:   r.PostFormValue("cap_enabled") != "",
		MaxAttempts:  strings.TrimSpace(r.PostFormValue("max_attempts")),
		WindowHours:  strings.TrimSpace(r.PostFormValue("window_hours")),
	}
	if days == nil {
		days = []int{}
	}
	body := map[string]any{
		"calling_hours": map[string]any{"enabled": form.HoursEnabled, "start": form.Start, "end": form.End, "days": days},
		"attempt_cap":   map[string]any{"enabled": form.CapEnabled, "max_attempts": form.MaxAttempts, "window_hours": form.WindowHours},
	}
	api := c.api(r, s)
	err := api.do(http.MethodPut, policyAPI, body, nil)
	if err == nil {
		http.Redirect(w, r, Prefix+"compliance?notice=saved", http.StatusSeeOther)
		return nil
	}
	fe, status, ok := formErrorsOf(err, policyKey, func(k string) bool { return policyFields[k] })
	if !ok {
		return err
	}
	form.Errors = fe
	var p policyJSON
	if err := api.get(policyAPI, &p); err != nil {
		return err
	}
	return c.renderCompliance(w, r, s, status, p, form, "")
}
