package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The telephony configuration form is built from the providers' field list
// (GET /api/v1/organizations/telephony-providers): each field is rendered
// from its name, type, required and sensitive flags alone, so a provider
// added to the catalogue gets its form with no change here.
//
// Secrets (sensitive fields) are never put on a page: the create form's
// secret inputs start empty and stay empty after a failed submit (the
// operator types them again); the edit form shows the stored value masked,
// as the API answers it, beside an empty input, and a secret left empty is
// not sent at all, so the stored one is kept.

// providerJSON is one provider of GET /api/v1/organizations/telephony-providers.
type providerJSON struct {
	Provider    string          `json:"provider"`
	DisplayName string          `json:"display_name"`
	Fields      []providerField `json:"fields"`
}

// providerField is one field of a provider's config object.
type providerField struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive"`
	Description string `json:"description"`
}

// providers fetches the providers and their fields.
func (a apiClient) providers() ([]providerJSON, error) {
	var out struct {
		Providers []providerJSON `json:"providers"`
	}
	if err := a.get("/api/v1/organizations/telephony-providers", &out); err != nil {
		return nil, err
	}
	if len(out.Providers) == 0 {
		return nil, errors.New("the API lists no telephony providers")
	}
	return out.Providers, nil
}

// findProvider returns the provider named name.
func findProvider(list []providerJSON, name string) (providerJSON, bool) {
	for _, p := range list {
		if p.Provider == name {
			return p, true
		}
	}
	return providerJSON{}, false
}

// configField is one rendered field of the configuration form.
type configField struct {
	// ID is the input's id; Input its form name ("config.<field>").
	ID, Input string
	Name      string
	Label     string
	Help      string
	Boolean   bool
	Required  bool
	Sensitive bool
	// Value is a non-sensitive string field's value; Checked a boolean's.
	Value   string
	Checked bool
	// Masked is a sensitive field's stored value as the API shows it
	// (masked); Stored reports whether one is stored (edit form only).
	Masked string
	Stored bool
	Error  string
}

// providerChoice is one provider of the form with its fields.
type providerChoice struct {
	Provider, DisplayName string
	Selected              bool
	Fields                []configField
}

// configForm is the data of telephony_form.html.
type configForm struct {
	// ID is the configuration's id; 0 on the create form.
	ID      int64
	Name    string
	Default bool
	// Provider is the selected provider; Choices every provider (the
	// create form) or only the configuration's (the edit form).
	Provider string
	Choices  []providerChoice
	Errors   formErrors
	// Retype is set after a failed submit that had secrets typed in: they
	// were not kept and must be typed again.
	Retype bool
	Notice string
	// Numbers is the edit form's phone numbers section.
	Numbers numbersSection
}

// Selected returns the selected provider's choice.
func (f configForm) Selected() providerChoice {
	for _, c := range f.Choices {
		if c.Selected {
			return c
		}
	}
	return providerChoice{}
}

// Action is where the form posts.
func (f configForm) Action() string {
	if f.ID == 0 {
		return Prefix + "telephony/new"
	}
	return fmt.Sprintf("%stelephony/%d", Prefix, f.ID)
}

// fieldValues are what a form shows in its provider fields: non-sensitive
// values by field name (a string, or a bool for a boolean field), and the
// stored masked secrets (the edit form).
type fieldValues struct {
	values map[string]any
	masked map[string]any
}

// buildChoices renders the providers' fields: the provider named selected
// gets vals and the field errors of errs; the others are blank.
func buildChoices(list []providerJSON, selected string, vals fieldValues, errs formErrors) []providerChoice {
	out := make([]providerChoice, 0, len(list))
	for _, p := range list {
		ch := providerChoice{Provider: p.Provider, DisplayName: p.DisplayName, Selected: p.Provider == selected}
		for _, f := range p.Fields {
			cf := configField{
				ID: "f-" + p.Provider + "-" + f.Name, Input: "config." + f.Name, Name: f.Name,
				Label: humanize(f.Name), Help: f.Description,
				Boolean: f.Type == "boolean", Required: f.Required, Sensitive: f.Sensitive,
			}
			if ch.Selected {
				cf.Error = errs.Field("config." + f.Name)
				switch v := vals.values[f.Name].(type) {
				case string:
					if !f.Sensitive {
						cf.Value = v
					}
				case bool:
					cf.Checked = v
				}
				if f.Sensitive {
					if m, ok := vals.masked[f.Name].(string); ok && m != "" {
						cf.Masked, cf.Stored = m, true
					}
				}
			}
			ch.Fields = append(ch.Fields, cf)
		}
		out = append(out, ch)
	}
	return out
}

// postedValues reads the non-sensitive provider fields of a submitted form,
// to show them again after a failure; retype reports whether a secret was
// typed in (and so must be typed again).
func postedValues(p providerJSON, form url.Values) (vals map[string]any, retype bool) {
	vals = map[string]any{}
	for _, f := range p.Fields {
		v := form.Get("config." + f.Name)
		switch {
		case f.Type == "boolean":
			vals[f.Name] = v != ""
		case f.Sensitive:
			retype = retype || v != ""
		default:
			vals[f.Name] = v
		}
	}
	return vals, retype
}

// configBody builds the config object of a create (create is true: the
// provider is sent, empty fields are left out) or an update (the provider
// is not sent; a non-sensitive field is sent as typed, empty resetting an
// optional one to its default; a secret is sent only when typed, or as
// null when its "clear" box is ticked, so one left empty keeps its stored
// value).
func configBody(p providerJSON, form url.Values, create bool) map[string]any {
	cfg := map[string]any{}
	if create {
		cfg["provider"] = p.Provider
	}
	for _, f := range p.Fields {
		key := "config." + f.Name
		v := strings.TrimSpace(form.Get(key))
		switch {
		case f.Type == "boolean":
			cfg[f.Name] = v != ""
		case f.Sensitive:
			if v != "" {
				cfg[f.Name] = reflowPEM(v)
			} else if !create && !f.Required && form.Get(key+".clear") != "" {
				cfg[f.Name] = nil
			}
		case v != "" || !create:
			cfg[f.Name] = v
		}
	}
	return cfg
}

// reflowPEM puts back the line breaks of a PEM block pasted into a one-line
// (password) input, which drops them or turns them into spaces: the body
// is wrapped at 64 characters between its BEGIN and END lines. Any other
// value, a PEM block with its line breaks included, is returned as it is.
func reflowPEM(v string) string {
	if !strings.HasPrefix(v, "-----BEGIN ") || strings.Contains(v, "\n") {
		return v
	}
	rest := strings.TrimPrefix(v, "-----BEGIN ")
	label, body, ok := strings.Cut(rest, "-----")
	if !ok {
		return v
	}
	end := "-----END " + label + "-----"
	body, ok = strings.CutSuffix(strings.TrimSpace(body), end)
	if !ok {
		return v
	}
	body = strings.Join(strings.Fields(body), "")
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----\n")
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	if body != "" {
		b.WriteString(body + "\n")
	}
	b.WriteString(end + "\n")
	return b.String()
}

// acronyms are the words humanize writes in capitals.
var acronyms = map[string]string{"id": "ID", "sid": "SID", "url": "URL", "api": "API", "ari": "ARI", "pem": "PEM"}

// humanize turns a field name into a label: "account_sid" → "Account SID".
func humanize(name string) string {
	words := strings.Split(name, "_")
	for i, w := range words {
		if a, ok := acronyms[w]; ok {
			words[i] = a
		} else if i == 0 && w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// formErrors are the problems of a failed form submit: by field key (the
// problem's location after "body", joined with "."), and those of no field
// the form shows.
type formErrors struct {
	Fields map[string]string
	Form   []string
}

// Field returns the problem of the field key, "" when it has none.
func (e formErrors) Field(key string) string { return e.Fields[key] }

// Any reports whether there is a problem.
func (e formErrors) Any() bool { return len(e.Fields) > 0 || len(e.Form) > 0 }

// add records msg for key; a key the form does not show ("" or not in
// shown) is a form-level problem.
func (e *formErrors) add(key, msg string, shown func(string) bool) {
	if key == "" || (shown != nil && !shown(key)) {
		e.Form = append(e.Form, msg)
		return
	}
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	if have, ok := e.Fields[key]; ok {
		msg = have + " " + msg
	}
	e.Fields[key] = msg
}

// formErrorsOf reads the API error err into a form's problems: a 422's
// problems by field (keyOf maps a location after "body" to the field key
// the form shows, "" for none; nil keeps the joined location), any other
// answer below 500 (and a provider's 502) as one form-level problem. ok is
// false for anything else, which the caller returns as an error page.
func formErrorsOf(err error, keyOf func(loc []string) string, shown func(string) bool) (fe formErrors, status int, ok bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.status == http.StatusUnauthorized || (ae.status >= 500 && ae.status != http.StatusBadGateway) {
		return fe, 0, false
	}
	if len(ae.problems) == 0 {
		fe.Form = []string{ae.detail}
		return fe, ae.status, true
	}
	for _, p := range ae.problems {
		loc := make([]string, 0, len(p.Loc))
		for i, l := range p.Loc {
			if i == 0 && l == "body" {
				continue
			}
			loc = append(loc, fmt.Sprint(l))
		}
		key := strings.Join(loc, ".")
		if keyOf != nil {
			key = keyOf(loc)
		}
		msg := problemText(p.Msg)
		if n := len(loc); n >= 2 && loc[n-2] == "row" {
			msg = "Row " + loc[n-1] + ": " + msg
		}
		fe.add(key, msg, shown)
	}
	return fe, ae.status, true
}

// problemText is a problem's message as a form shows it: without the
// "Value error, " pydantic puts before some.
func problemText(msg string) string {
	msg = strings.TrimPrefix(msg, "Value error, ")
	if r, n := utf8.DecodeRuneInString(msg); n > 0 {
		msg = string(unicode.ToUpper(r)) + msg[n:]
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}
