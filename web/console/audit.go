package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/outdial/outdial/web/roles"
	"github.com/outdial/outdial/web/wire"
)

// The audit page (API.md 17), for admins: the organization's audit trail
// as the API gives it, oldest first, a page at a time (after_id), filtered
// by actor, action, target type and target id, each entry's changed fields
// as "from → to"; and the JSON Lines export of the same filters, which the
// console streams from the API (Accept: application/x-ndjson) as a
// download.

// auditPath is the audit page.
const auditPath = Prefix + "audit"

// auditPageSize is how many entries a page shows.
const auditPageSize = 50

// auditFilters are the query parameters the page passes on to the API.
var auditFilters = []string{"actor", "action", "target_type", "target_id"}

// auditView is the data of audit.html.
type auditView struct {
	Entries []auditRow
	// Filter is the filters of the page, by query parameter.
	Filter map[string]string
	// Problem is the API's refusal of the filters (422).
	Problem string
	// Actors are the choices of the actor filter; Actions and Targets
	// the known actions and target types.
	Actors           []auditActorChoice
	Actions, Targets []string
	// Next links the next page, First the first (when not on it);
	// Export downloads every entry of the filters as JSON Lines.
	Next, First, Export string
}

// auditActorChoice is one choice of the actor filter.
type auditActorChoice struct {
	Value, Label string
}

// auditRow is an entry as the table shows it.
type auditRow struct {
	wire.AuditEntry
	// ActorFilter is the actor filter's value for this entry's actor.
	ActorFilter string
	Changes     []auditChange
	// Refused is set for an answer of 400 or more: nothing changed.
	Refused bool
}

// auditChange is one changed field: From and To as text, or Raw when the
// API recorded something other than {"from", "to"}.
type auditChange struct {
	Field, From, To, Raw string
}

// auditPage shows a page of the audit trail.
func auditPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	v := auditView{Filter: map[string]string{}, Actions: auditActions(), Targets: auditTargets()}
	filters := url.Values{}
	for _, k := range auditFilters {
		if val := strings.TrimSpace(q.Get(k)); val != "" {
			v.Filter[k] = val
			filters.Set(k, val)
		}
	}
	v.Export = auditPath + "/export"
	if len(filters) > 0 {
		v.Export += "?" + filters.Encode()
	}
	apiQuery := url.Values{"limit": {strconv.Itoa(auditPageSize)}}
	for k, vals := range filters {
		apiQuery[k] = vals
	}
	if after, err := strconv.ParseInt(q.Get("after_id"), 10, 64); err == nil && after > 0 {
		apiQuery.Set("after_id", strconv.FormatInt(after, 10))
		v.First = auditPath
		if len(filters) > 0 {
			v.First += "?" + filters.Encode()
		}
	}
	api := c.api(r, s)
	status := http.StatusOK
	var list wire.AuditList
	if err := api.get("/api/v1/audit?"+apiQuery.Encode(), &list); err != nil {
		if !isAPIStatus(err, http.StatusUnprocessableEntity) {
			return err
		}
		fe, st, _ := formErrorsOf(err, nil, nil)
		v.Problem, status = strings.Join(append(fe.Form, mapValues(fe.Fields)...), " "), st
	}
	for _, e := range list.Entries {
		v.Entries = append(v.Entries, auditRow{AuditEntry: e, ActorFilter: e.Actor.Type + ":" + strconv.FormatInt(e.Actor.ID, 10),
			Changes: auditChanges(e.Changes), Refused: e.Status >= 400})
	}
	if n := len(list.Entries); n == auditPageSize {
		next := url.Values{"after_id": {strconv.FormatInt(list.Entries[n-1].ID, 10)}}
		for k, vals := range filters {
			next[k] = vals
		}
		v.Next = auditPath + "?" + next.Encode()
	}
	actors, err := auditActors(api)
	if err != nil {
		return err
	}
	v.Actors = actors
	return c.renderStatus(w, r, s, status, "audit.html", "Audit trail", "audit", v)
}

// auditActors lists the organization's users and API keys as choices of
// the actor filter.
func auditActors(api apiClient) ([]auditActorChoice, error) {
	var users wire.UserList
	if err := api.get("/api/v1/users", &users); err != nil {
		return nil, err
	}
	var keys wire.APIKeyList
	if err := api.get("/api/v1/api-keys", &keys); err != nil {
		return nil, err
	}
	out := make([]auditActorChoice, 0, len(users.Users)+len(keys.APIKeys))
	for _, u := range users.Users {
		out = append(out, auditActorChoice{Value: "user:" + strconv.FormatInt(u.ID, 10), Label: u.Email})
	}
	for _, k := range keys.APIKeys {
		out = append(out, auditActorChoice{Value: "api_key:" + strconv.FormatInt(k.ID, 10), Label: "API key " + k.Name})
	}
	return out, nil
}

// auditActions returns every audit action the API records, sorted
// (web/roles lists them with their routes).
func auditActions() []string {
	seen := map[string]bool{}
	for _, p := range roles.Patterns() {
		method, pattern, _ := strings.Cut(p, " ")
		if op, ok := roles.Of(method, pattern); ok && op.Action != "" {
			seen[op.Action] = true
		}
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// auditTargets returns every audit target type, sorted.
func auditTargets() []string {
	seen := map[string]bool{}
	for _, a := range auditActions() {
		t, _, _ := strings.Cut(a, ".")
		seen[t] = true
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// auditChanges returns an entry's changes by field name.
func auditChanges(raw json.RawMessage) []auditChange {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		return []auditChange{{Raw: string(raw)}}
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]auditChange, 0, len(names))
	for _, name := range names {
		var ft map[string]json.RawMessage
		_ = json.Unmarshal(fields[name], &ft) // not an object: ft stays nil
		from, hasFrom := ft["from"]
		to, hasTo := ft["to"]
		if !hasFrom || !hasTo {
			out = append(out, auditChange{Field: name, Raw: string(fields[name])})
			continue
		}
		out = append(out, auditChange{Field: name, From: valueText(from), To: valueText(to)})
	}
	return out
}

// valueText is a changed field's value as the page shows it: a string
// without its quotes, null as "none", anything else as compact JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return "none"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// auditExport streams the audit trail of the page's filters as JSON Lines,
// straight from the API, as a file to download. A refusal (403, a 422 of
// the filters) is the console's error page, since nothing was sent yet.
func auditExport(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	q := url.Values{}
	for _, k := range auditFilters {
		if val := strings.TrimSpace(r.URL.Query().Get(k)); val != "" {
			q.Set(k, val)
		}
	}
	path := "/api/v1/audit"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	req, err := c.api(r, s).request(r.Method, path, nil, "application/x-ndjson")
	if err != nil {
		return err
	}
	ew := &exportWriter{w: w, header: http.Header{}, filename: "outdial-audit-" + c.now().UTC().Format("2006-01-02") + ".jsonl"}
	c.apiH.ServeHTTP(ew, req)
	if ew.status >= 400 {
		return decodeAPIError(ew.status, ew.refusal.Bytes())
	}
	if ew.status == 0 {
		ew.WriteHeader(http.StatusOK) // nothing written: an empty file
	}
	return nil
}

// exportWriter passes an API answer of less than 400 on to the browser as
// a JSON Lines download (flushes included), and keeps the body of one of
// 400 or more for the error page.
type exportWriter struct {
	w        http.ResponseWriter
	header   http.Header // the API's headers: not sent
	filename string
	status   int
	refusal  bytes.Buffer
}

func (ew *exportWriter) Header() http.Header { return ew.header }

func (ew *exportWriter) WriteHeader(code int) {
	if ew.status != 0 || code < 200 {
		return
	}
	ew.status = code
	if code >= 400 {
		return
	}
	h := ew.w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Content-Disposition", `attachment; filename="`+ew.filename+`"`)
	ew.w.WriteHeader(code)
}

func (ew *exportWriter) Write(p []byte) (int, error) {
	if ew.status == 0 {
		ew.WriteHeader(http.StatusOK)
	}
	if ew.status >= 400 {
		if ew.refusal.Len() < 64<<10 {
			ew.refusal.Write(p)
		}
		return len(p), nil
	}
	return ew.w.Write(p)
}

// FlushError sends what was written so far (http.ResponseController's
// Flush), once the answer is a download.
func (ew *exportWriter) FlushError() error {
	if ew.status == 0 || ew.status >= 400 {
		return nil
	}
	return http.NewResponseController(ew.w).Flush()
}
