package web

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/roles"
)

// The audit trail (API.md 17). Every authenticated request that is not a
// GET or HEAD records one entry, whatever its answer (a 403 or a 422 too):
// who (the user or the key), what (the action, the route pattern, the
// target), the fields it changed before and after, the answer's status and
// the peer address. The console changes things only through the API (in
// process), so its actions are recorded here too, under the API's routes.
//
// Before and after are the target as the API shows it (its secrets
// masked already): before is read through the target's GET route ahead of
// the change, after is the change's answer. changes holds the fields that
// differ, objects flattened to dotted paths: {"state": {"from": "running",
// "to": "paused"}}; a create has only "to", a delete only "from".

// maxAuditBody is how much of an answer is kept to find what it changed.
const maxAuditBody = 1 << 20

// progressFields are a target's fields that the service changes by itself
// (a campaign's counters and log while it dials): not what a request
// changed, so left out of its changes.
var progressFields = map[string]bool{"processed_rows": true, "failed_rows": true, "executed_count": true,
	"total_queued_count": true, "next_dial_at": true, "dialed_by": true, "logs": true, "last_used_at": true}

// secretFields are masked wherever they appear in an entry's changes: the
// answers that carry a secret once (a new API key, a set-password link, a
// presigned upload URL).
var secretFields = map[string]bool{"key": true, "set_password_url": true, "upload_url": true, "password": true, "token": true}

// audited serves an audited route for p: refuses it when p's role may not,
// runs h otherwise, and records the entry.
func (s *Server) audited(w http.ResponseWriter, r *http.Request, ps httprouter.Params, p store.Principal, op roles.Operation,
	pattern string, h authedHandler) {
	allowed := p.Role.Allows(op.Need)
	var before map[string]any
	if allowed && (op.Param != "" || r.Method != http.MethodPost) && op.Action != "workflow.validate" {
		// The target exists already (an id in the path, or the
		// organization's one policy): read it as it is.
		before = s.snapshot(r, p, op, pattern, ps)
	}
	cw := &capturingWriter{ResponseWriter: w}
	var err error
	if allowed {
		err = h(cw, r, ps, p.OrganizationID)
	} else {
		err = errStatus(http.StatusForbidden, op.Refusal(p.Role))
	}
	if err != nil {
		s.writeError(cw, r, err)
	}
	status := cw.status
	if status == 0 {
		status = http.StatusOK
	}
	e := store.AuditEntry{OrganizationID: p.OrganizationID, ActorName: p.ActorName, Action: op.Action,
		Method: r.Method, Route: pattern, TargetType: op.Target(), Status: status, Address: peerAddress(r)}
	e.ActorType, e.ActorID = actorOf(p)
	if id, err := strconv.ParseInt(ps.ByName(op.Param), 10, 64); op.Param != "" && err == nil {
		e.TargetID = &id
	}
	changes := map[string]change{}
	if status < 300 && allowed {
		var after map[string]any
		if r.Method != http.MethodDelete && cw.body.Len() > 0 && cw.body.Len() < maxAuditBody {
			_ = json.Unmarshal(cw.body.Bytes(), &after) // not an object: nothing to compare
		}
		if e.TargetID == nil && op.Action != "suppression.create" {
			if id, ok := after["id"].(float64); ok {
				n := int64(id)
				e.TargetID = &n
			}
		}
		switch op.Action {
		case "workflow.validate": // changes nothing
		case "campaign.redial":
			// The answer is the new campaign, not the target.
			changes["redial_campaign_id"] = change{To: after["id"], hasTo: true}
		default:
			diff("", before, after, changes)
		}
	}
	e.Changes, _ = json.Marshal(changes)
	if err := s.db.RecordAudit(context.WithoutCancel(r.Context()), e); err != nil {
		// The change is made and answered: the entry cannot be its
		// condition. Logged without the changes (they may hold numbers).
		s.log.Error("audit: record entry", slog.String("action", e.Action), slog.Int64("org_id", e.OrganizationID),
			slog.Int("status", e.Status), slog.String("error", err.Error()))
	}
}

// actorOf is the audit actor of p: its user, else its key.
func actorOf(p store.Principal) (string, int64) {
	if p.UserID != 0 {
		return store.AuditActorUser, p.UserID
	}
	return store.AuditActorAPIKey, p.APIKeyID
}

// peerAddress is the connection's peer address, without its port.
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// change is one field's values before and after. A field that did not
// exist on one side (a create's before, a delete's after) has no key there;
// one that was null has a null: {"from": null, "to": "..."} is a field set
// by an update, {"to": "..."} one a create made.
type change struct {
	From, To       any
	hasFrom, hasTo bool
}

func (c change) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, 2)
	if c.hasFrom {
		m["from"] = c.From
	}
	if c.hasTo {
		m["to"] = c.To
	}
	return json.Marshal(m)
}

// diff adds to out the fields of before and after (under prefix) whose
// values differ; a nil map is an object that does not exist (before a
// create, after a delete). Objects are compared field by field, anything
// else whole; secret fields are masked.
func diff(prefix string, before, after map[string]any, out map[string]change) {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	for k := range keys {
		if prefix == "" && progressFields[k] && before != nil && after != nil {
			continue
		}
		b, hadB := before[k]
		a, hasA := after[k]
		bo, bObj := b.(map[string]any)
		ao, aObj := a.(map[string]any)
		if (bObj || !hadB) && (aObj || !hasA) && (bObj || aObj) {
			diff(prefix+k+".", bo, ao, out)
			continue
		}
		bj, _ := json.Marshal(b)
		aj, _ := json.Marshal(a)
		if hadB == hasA && bytes.Equal(bj, aj) {
			continue
		}
		c := change{hasFrom: hadB, hasTo: hasA}
		if hadB {
			c.From = mask(k, b)
		}
		if hasA {
			c.To = mask(k, a)
		}
		out[prefix+k] = c
	}
}

// mask hides the value of a secret field.
func mask(field string, v any) any {
	if secretFields[field] && v != nil {
		return "****"
	}
	return v
}

// snapshot reads op's target as p sees it through its GET route (nil when
// it has none or the read fails: a 404 target changes nothing).
func (s *Server) snapshot(r *http.Request, p store.Principal, op roles.Operation, pattern string, ps httprouter.Params) map[string]any {
	path, list := snapshotPath(op.Target(), pattern, ps)
	if path == "" {
		return nil
	}
	ctx := context.WithValue(r.Context(), principalKey{}, p)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil
	}
	req.RemoteAddr = r.RemoteAddr
	rec := httptest.NewRecorder()
	s.router.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil
	}
	var obj map[string]any
	if json.Unmarshal(rec.Body.Bytes(), &obj) != nil {
		return nil
	}
	if list == "" {
		return obj
	}
	want, err := strconv.ParseFloat(ps.ByName(op.Param), 64)
	if err != nil {
		return nil
	}
	items, _ := obj[list].([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["id"] == want {
			return m
		}
	}
	return nil
}

// snapshotPath returns the GET path that shows a target of type target
// named by pattern's parameters, and, when it answers a list, the list's
// field (the target is the item with the path's id).
func snapshotPath(target, pattern string, ps httprouter.Params) (path, list string) {
	fill := func(p string) string {
		for _, param := range ps {
			p = strings.Replace(p, ":"+param.Key, param.Value, 1)
		}
		return p
	}
	cut := func(through string) string {
		i := strings.Index(pattern, through)
		if i < 0 {
			return ""
		}
		return fill(pattern[:i+len(through)])
	}
	switch target {
	case "campaign":
		return cut(":campaign_id"), ""
	case "workflow":
		return cut(":workflow_id"), ""
	case "telephony_config":
		return cut(":config_id"), ""
	case "phone_number":
		if i := strings.Index(pattern, "/:phone_number_id"); i >= 0 {
			return fill(pattern[:i]), "phone_numbers"
		}
	case "compliance_policy":
		return "/api/v1/organizations/compliance", ""
	case "organization_security":
		return "/api/v1/organizations/security", ""
	case "organization_limits":
		return "/api/v1/organizations/limits", ""
	case "user":
		return "/api/v1/users", "users"
	case "api_key":
		return "/api/v1/api-keys", "api_keys"
	case "suppression":
		if id, err := strconv.ParseInt(ps.ByName("suppression_id"), 10, 64); err == nil && id > 0 {
			return "/api/v1/suppressions?limit=1&after_id=" + strconv.FormatInt(id-1, 10), "suppressions"
		}
	}
	return "", ""
}

// capturingWriter passes an answer through and keeps its status and (up
// to maxAuditBody) its body.
type capturingWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *capturingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *capturingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body.Len()+len(p) <= maxAuditBody {
		w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *capturingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
