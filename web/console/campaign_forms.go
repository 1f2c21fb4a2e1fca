package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// The campaign page's forms, each a console route that calls the API and
// comes back to the page (303), or shows the page again with what the API
// refused: the state buttons (POST .../start|pause|resume|cancel, which
// campaign.js sends to the API directly when scripts run, so a pause takes
// effect without a page load), the settings (PATCH) and the redial.

// campaignOp returns the handler of a state button: POST the API's
// operation, then back to the page; a state that does not allow it (409)
// shows the page with the API's reason.
func campaignOp(op string) handlerFunc {
	return func(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
		id, ok := campaignID(r)
		if !ok {
			c.renderError(w, r, s, http.StatusNotFound, "There is no such campaign.")
			return nil
		}
		err := c.api(r, s).do(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/%s", id, op), nil, nil)
		if status, detail, ok := refused(err); ok {
			return c.renderCampaign(w, r, s, status, id, func(v *campaignView) { v.Notice = detail })
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, campaignPath(id), http.StatusSeeOther)
		return nil
	}
}

// refused reports whether err is the API refusing a change (409 or 422),
// with its status and detail.
func refused(err error) (int, string, bool) {
	var ae *apiError
	if errors.As(err, &ae) && (ae.status == http.StatusConflict || ae.status == http.StatusUnprocessableEntity) {
		return ae.status, ae.detail, true
	}
	return 0, "", false
}

// settingsField is one field of the settings form, named as the API names
// it ("retry_config.max_retries" is max_retries of retry_config).
type settingsField struct {
	Name, Label, Kind string // Kind: "text", "int", "decimal" or "checkbox"
	Min, Max, Step    string // of number fields
	Hint              string
}

// ID is the field's element id.
func (f settingsField) ID() string { return "set-" + strings.ReplaceAll(f.Name, ".", "-") }

// settingsGroup is a fieldset of the settings form.
type settingsGroup struct {
	Legend string
	Fields []settingsField
}

// settingsGroups are the fields the settings form edits (API.md 4.3's
// PATCH, without the schedule), with the API's ranges (wire.Bounds).
var settingsGroups = []settingsGroup{
	{"General", []settingsField{
		{Name: "name", Label: "Name", Kind: "text"},
		numberField("max_concurrency", "Maximum concurrent calls", "int", ""),
		numberField("rate_limit_per_second", "New calls per second", "decimal", ""),
	}},
	{"Retries", []settingsField{
		{Name: "retry_config.enabled", Label: "Retry calls", Kind: "checkbox"},
		numberField("retry_config.max_retries", "Retries per contact", "int", ""),
		numberField("retry_config.retry_delay_seconds", "Delay before a retry (seconds)", "int", ""),
		{Name: "retry_config.retry_on_busy", Label: "Retry when busy", Kind: "checkbox"},
		{Name: "retry_config.retry_on_no_answer", Label: "Retry when not answered", Kind: "checkbox"},
		{Name: "retry_config.retry_on_voicemail", Label: "Retry on voicemail", Kind: "checkbox"},
	}},
	{"Circuit breaker", []settingsField{
		{Name: "circuit_breaker.enabled", Label: "Pause when too many calls fail", Kind: "checkbox"},
		numberField("circuit_breaker.failure_threshold", "Failure share that pauses", "decimal", " (0.5 is half)"),
		numberField("circuit_breaker.window_seconds", "Over the last (seconds)", "int", ""),
		numberField("circuit_breaker.min_calls_in_window", "At least this many calls", "int", ""),
	}},
}

// numberField is the settings form's number field of the API's field name
// (kind "int" or "decimal"), with the API's range as its min, max and
// hint (and more after the range in the hint).
func numberField(name, label, kind, more string) settingsField {
	b, ok := wire.Bounds()[name]
	if !ok {
		panic("console: no range for the campaign field " + name)
	}
	step := "1"
	if kind == "decimal" {
		step = "any"
	}
	return settingsField{Name: name, Label: label, Kind: kind, Min: b.Min, Max: b.Max, Step: step, Hint: b.Hint() + more}
}

// settingsForm is what the settings form shows: the values (the
// campaign's, or those a rejected change sent), the API's problems by
// field name, and the problems that name no field.
type settingsForm struct {
	Groups   []settingsGroup
	Values   map[string]string
	Checked  map[string]bool
	Problems map[string]string
	Other    []string
	Saved    bool
}

// settingsFrom fills the settings form from the campaign.
func settingsFrom(c wire.Campaign) settingsForm {
	rc, cb := c.RetryConfig, c.CircuitBreaker
	return settingsForm{Groups: settingsGroups,
		Values: map[string]string{
			"name":                                c.Name,
			"max_concurrency":                     strconv.Itoa(c.MaxConcurrency),
			"rate_limit_per_second":               strconv.FormatFloat(c.RateLimitPerSecond, 'f', -1, 64),
			"retry_config.max_retries":            strconv.Itoa(rc.MaxRetries),
			"retry_config.retry_delay_seconds":    strconv.Itoa(rc.RetryDelaySeconds),
			"circuit_breaker.failure_threshold":   strconv.FormatFloat(cb.FailureThreshold, 'f', -1, 64),
			"circuit_breaker.window_seconds":      strconv.Itoa(cb.WindowSeconds),
			"circuit_breaker.min_calls_in_window": strconv.Itoa(cb.MinCallsInWindow),
		},
		Checked: map[string]bool{
			"retry_config.enabled":            rc.Enabled,
			"retry_config.retry_on_busy":      rc.RetryOnBusy,
			"retry_config.retry_on_no_answer": rc.RetryOnNoAnswer,
			"retry_config.retry_on_voicemail": rc.RetryOnVoicemail,
			"circuit_breaker.enabled":         cb.Enabled,
		},
		Problems: map[string]string{},
	}
}

// jsonNumber matches a JSON number; a number field holding anything else
// is sent as the text typed, for the API to refuse with its own words.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// settingsBody builds the PATCH body of a submitted settings form: every
// field, nested as the API nests them (a checkbox not sent is false).
func settingsBody(r *http.Request) (map[string]any, settingsForm) {
	form := settingsForm{Groups: settingsGroups, Values: map[string]string{}, Checked: map[string]bool{}, Problems: map[string]string{}}
	body := map[string]any{}
	for _, g := range settingsGroups {
		for _, f := range g.Fields {
			var v any
			raw := strings.TrimSpace(r.PostFormValue(f.Name))
			switch f.Kind {
			case "checkbox":
				on := r.PostFormValue(f.Name) != ""
				form.Checked[f.Name], v = on, on
			case "text":
				form.Values[f.Name], v = r.PostFormValue(f.Name), r.PostFormValue(f.Name)
			default:
				form.Values[f.Name], v = raw, raw
				if jsonNumber.MatchString(raw) {
					v = json.Number(raw)
				}
			}
			obj, key := body, f.Name
			if parent, child, nested := strings.Cut(f.Name, "."); nested {
				sub, _ := body[parent].(map[string]any)
				if sub == nil {
					sub = map[string]any{}
					body[parent] = sub
				}
				obj, key = sub, child
			}
			obj[key] = v
		}
	}
	return body, form
}

// campaignSettings saves the settings form with PATCH; the API's 422
// problems are shown next to the fields they name.
func campaignSettings(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := campaignID(r)
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such campaign.")
		return nil
	}
	body, form := settingsBody(r)
	err := c.api(r, s).do(http.MethodPatch, fmt.Sprintf("/api/v1/campaign/%d", id), body, nil)
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusUnprocessableEntity && len(ae.problems) > 0 {
		for _, p := range ae.problems {
			name := problemField(p.Loc)
			if name == "" {
				form.Other = append(form.Other, p.Msg)
			} else if _, dup := form.Problems[name]; !dup {
				form.Problems[name] = p.Msg
			}
		}
		return c.renderCampaign(w, r, s, http.StatusUnprocessableEntity, id, func(v *campaignView) { v.Settings = form })
	}
	if status, detail, ok := refused(err); ok {
		form.Other = append(form.Other, detail)
		return c.renderCampaign(w, r, s, status, id, func(v *campaignView) { v.Settings = form })
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, campaignPath(id)+"?saved=1#settings", http.StatusSeeOther)
	return nil
}

// problemField returns the settings field a 422 problem's loc names
// (["body","retry_config","max_retries"] is "retry_config.max_retries"),
// "" when it names none of them.
func problemField(loc []any) string {
	if len(loc) < 2 || loc[0] != "body" {
		return ""
	}
	parts := make([]string, 0, 2)
	for _, l := range loc[1:min(len(loc), 3)] {
		s, ok := l.(string)
		if !ok {
			break
		}
		parts = append(parts, s)
	}
	name := strings.Join(parts, ".")
	for _, g := range settingsGroups {
		for _, f := range g.Fields {
			if f.Name == name {
				return name
			}
		}
	}
	return ""
}

// redialFlags are the redial form's outcome checkboxes, as the API names
// them.
var redialFlags = []struct{ Name, Label string }{
	{"retry_on_busy", "Busy"},
	{"retry_on_no_answer", "Not answered"},
	{"retry_on_voicemail", "Voicemail"},
	{"retry_on_failed", "Failed"},
}

// redialForm is what the redial form shows.
type redialForm struct {
	Values  map[string]string
	Checked map[string]bool
	Err     string
}

// Flags lists the redial form's checkboxes.
func (redialForm) Flags() []struct{ Name, Label string } { return redialFlags }

// campaignRedial creates the redial campaign and goes to its page; the
// API's refusal (409: not final, redialed already, nobody to call) is
// shown on this campaign's page.
func campaignRedial(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := campaignID(r)
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such campaign.")
		return nil
	}
	form := redialForm{Values: map[string]string{"name": r.PostFormValue("name")}, Checked: map[string]bool{}}
	body := map[string]any{}
	if name := strings.TrimSpace(form.Values["name"]); name != "" {
		body["name"] = form.Values["name"]
	}
	for _, f := range redialFlags {
		on := r.PostFormValue(f.Name) != ""
		form.Checked[f.Name], body[f.Name] = on, on
	}
	var child struct {
		ID int64 `json:"id"`
	}
	err := c.api(r, s).do(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/redial", id), body, &child)
	if status, detail, ok := refused(err); ok {
		form.Err = detail
		return c.renderCampaign(w, r, s, status, id, func(v *campaignView) { v.Redial = form })
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, campaignPath(child.ID), http.StatusSeeOther)
	return nil
}
