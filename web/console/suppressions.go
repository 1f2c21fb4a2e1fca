package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The suppression list (docs/api.md 9.1): search by number and page
// through it with the API's paging (?number=, ?after_id=), add numbers
// typed in, import a CSV (suppressions.js uploads it through a presigned
// URL and the form then posts its source_id), delete an entry. An add or
// an import shows what the API did (added, already present, the invalid
// rows) above the list.

// suppressionsPageSize is how many entries a page of the list shows.
const suppressionsPageSize = 50

// suppressionJSON is one entry of the API's list.
type suppressionJSON struct {
	ID          int64   `json:"id"`
	PhoneNumber string  `json:"phone_number"`
	Reason      string  `json:"reason"`
	Source      string  `json:"source"`
	CreatedAt   string  `json:"created_at"`
	ExpiresAt   *string `json:"expires_at"`
}

// suppressionRow is one entry as the list shows it.
type suppressionRow struct {
	suppressionJSON
	Expired bool
}

// addResultJSON is the API's answer to an add.
type addResultJSON struct {
	Added          int `json:"added"`
	AlreadyPresent int `json:"already_present"`
	Invalid        []struct {
		Index *int   `json:"index"`
		Row   *int   `json:"row"`
		Type  string `json:"type"`
		Input any    `json:"input"`
		Msg   string `json:"msg"`
	} `json:"invalid"`
	InvalidCount int `json:"invalid_count"`
}

// suppressForm is an add or import form's values and problems; Prefix
// starts the ids of its reason and expiry fields ("add", "import").
type suppressForm struct {
	Prefix                     string
	Numbers, Reason, ExpiresAt string
	Errors                     formErrors
}

// suppressionsView is the data of suppressions.html.
type suppressionsView struct {
	Entries []suppressionRow
	// Number is the search; SearchError its problem.
	Number, SearchError string
	// Next links the next page, First the first (when not on it).
	Next, First string
	Notice      string
	Add, Import suppressForm
	// Result is what an add or import did; From says which ("numbers",
	// "file").
	Result *addResultJSON
	From   string
	// Invalid are the result's invalid numbers.
	Invalid []invalidRow
}

// invalidRow is one invalid number of an add or import: Where is its item
// (from 1) or its CSV row (the header is row 1).
type invalidRow struct {
	Where int
	Input string
	Msg   string
}

// suppressionsList shows a page of the list.
func suppressionsList(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v := suppressionsView{Add: blankForm("add"), Import: blankForm("import"), Notice: map[string]string{"deleted": "The entry was deleted: its number may be called again."}[r.URL.Query().Get("notice")]}
	return c.renderSuppressions(w, r, s, http.StatusOK, v)
}

// renderSuppressions renders the list page of the request's query into v,
// with status (a search the API refuses is 422).
func (c *Console) renderSuppressions(w http.ResponseWriter, r *http.Request, s *session, status int, v suppressionsView) error {
	q := url.Values{"limit": {strconv.Itoa(suppressionsPageSize)}}
	if r.Method == http.MethodGet {
		v.Number = strings.TrimSpace(r.URL.Query().Get("number"))
		if after, err := strconv.ParseInt(r.URL.Query().Get("after_id"), 10, 64); err == nil && after > 0 {
			q.Set("after_id", strconv.FormatInt(after, 10))
			v.First = Prefix + "suppressions"
			if v.Number != "" {
				v.First += "?number=" + url.QueryEscape(v.Number)
			}
		}
	}
	if v.Number != "" {
		q.Set("number", v.Number)
	}
	var page struct {
		Suppressions []suppressionJSON `json:"suppressions"`
	}
	err := c.api(r, s).get("/api/v1/suppressions?"+q.Encode(), &page)
	if err != nil {
		fe, st, ok := formErrorsOf(err, nil, nil)
		if !ok || st != http.StatusUnprocessableEntity {
			return err
		}
		v.SearchError, status = strings.Join(append(fe.Form, mapValues(fe.Fields)...), " "), st
	}
	now := c.now()
	for _, e := range page.Suppressions {
		row := suppressionRow{suppressionJSON: e}
		if e.ExpiresAt != nil {
			if t, err := time.Parse(time.RFC3339Nano, *e.ExpiresAt); err == nil && !t.After(now) {
				row.Expired = true
			}
		}
		v.Entries = append(v.Entries, row)
	}
	if n := len(page.Suppressions); n == suppressionsPageSize {
		next := url.Values{"after_id": {strconv.FormatInt(page.Suppressions[n-1].ID, 10)}}
		if v.Number != "" {
			next.Set("number", v.Number)
		}
		v.Next = Prefix + "suppressions?" + next.Encode()
	}
	return c.renderStatus(w, r, s, status, "suppressions.html", "Suppression list", "suppressions", v)
}

// blankForm is an empty add or import form.
func blankForm(prefix string) suppressForm { return suppressForm{Prefix: prefix} }

// mapValues returns m's values.
func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// postedSuppressForm reads the reason and expiry fields of an add or
// import form.
func postedSuppressForm(r *http.Request, prefix string) suppressForm {
	return suppressForm{
		Prefix:    prefix,
		Numbers:   r.PostFormValue("numbers"),
		Reason:    strings.TrimSpace(r.PostFormValue("reason")),
		ExpiresAt: strings.TrimSpace(r.PostFormValue("expires_at")),
	}
}

// addBody is the API body of f's reason and expiry, with the source given
// as key and value.
func (f suppressForm) addBody(key string, value any) map[string]any {
	body := map[string]any{key: value}
	if f.Reason != "" {
		body["reason"] = f.Reason
	}
	if f.ExpiresAt != "" {
		body["expires_at"] = expiryUTC(f.ExpiresAt)
	}
	return body
}

// expiryUTC turns a datetime-local value (the form's field, labelled
// UTC) into RFC 3339 in UTC; anything else is sent as typed, for the API
// to judge.
func expiryUTC(v string) string {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

// splitNumbers splits the numbers field at line breaks, commas and
// semicolons, dropping empty items.
func splitNumbers(v string) []string {
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' || r == ';' })
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// suppressFields are the fields of the add and import forms by the API's
// location.
var suppressFields = map[string]bool{"numbers": true, "source_id": true, "reason": true, "expires_at": true}

// suppressKey maps a problem's location to its field: the first element.
func suppressKey(loc []string) string {
	if len(loc) == 0 {
		return ""
	}
	return loc[0]
}

// suppressionsAdd adds the numbers typed in.
func suppressionsAdd(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	f := postedSuppressForm(r, "add")
	numbers := splitNumbers(f.Numbers)
	if len(numbers) == 0 {
		f.Errors.add("numbers", "Type at least one number.", nil)
		return c.renderSuppressions(w, r, s, http.StatusUnprocessableEntity, suppressionsView{Add: f, Import: blankForm("import")})
	}
	return c.addSuppressions(w, r, s, f, f.addBody("numbers", numbers), "numbers")
}

// suppressionsImport adds the numbers of an uploaded CSV (source_id, set by
// suppressions.js once the upload is done).
func suppressionsImport(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	f := postedSuppressForm(r, "import")
	f.Numbers = ""
	source := strings.TrimSpace(r.PostFormValue("source_id"))
	if source == "" {
		f.Errors.add("source_id", "Choose a CSV file (the upload needs JavaScript).", nil)
		return c.renderSuppressions(w, r, s, http.StatusUnprocessableEntity, suppressionsView{Add: blankForm("add"), Import: f})
	}
	return c.addSuppressions(w, r, s, f, f.addBody("source_id", source), "file")
}

// addSuppressions posts body and shows the list with what it did, or the
// form of from ("numbers" or "file") again with the problems.
func (c *Console) addSuppressions(w http.ResponseWriter, r *http.Request, s *session, f suppressForm, body map[string]any, from string) error {
	var res addResultJSON
	err := c.api(r, s).do(http.MethodPost, "/api/v1/suppressions", body, &res)
	if err == nil {
		v := suppressionsView{Result: &res, From: from, Add: blankForm("add"), Import: blankForm("import")}
		for _, in := range res.Invalid {
			row := invalidRow{Input: fmt.Sprint(in.Input), Msg: in.Msg}
			switch {
			case in.Row != nil:
				row.Where = *in.Row
			case in.Index != nil:
				row.Where = *in.Index + 1
			}
			v.Invalid = append(v.Invalid, row)
		}
		return c.renderSuppressions(w, r, s, http.StatusOK, v)
	}
	fe, status, ok := formErrorsOf(err, suppressKey, func(k string) bool { return suppressFields[k] })
	if !ok {
		return err
	}
	f.Errors = fe
	v := suppressionsView{Add: blankForm("add"), Import: blankForm("import")}
	if from == "file" {
		v.Import = f
	} else {
		v.Add = f
	}
	return c.renderSuppressions(w, r, s, status, v)
}

// suppressionDelete deletes an entry.
func suppressionDelete(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such suppression entry.")
		return nil
	}
	if err := c.api(r, s).do(http.MethodDelete, "/api/v1/suppressions/"+strconv.FormatInt(id, 10), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, Prefix+"suppressions?notice=deleted", http.StatusSeeOther)
	return nil
}
