package web

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// Reading the audit trail (API.md 17): admins only, oldest first, in pages
// (after_id), or as JSON Lines. Nothing edits or deletes an entry: the
// routes answer GET only (405 otherwise); entries go only by retention
// (serve --audit-retention).

// auditEntryJSON is an entry as the API shows it.
type auditEntryJSON = wire.AuditEntry

type auditActorJSON = wire.AuditActor

type auditTargetJSON = wire.AuditTarget

func auditOut(e store.AuditEntry) auditEntryJSON {
	changes := e.Changes
	if len(changes) == 0 {
		changes = json.RawMessage("{}")
	}
	return auditEntryJSON{ID: e.ID, At: ts(e.At), Actor: auditActorJSON{Type: e.ActorType, ID: e.ActorID, Name: e.ActorName},
		Action: e.Action, Method: e.Method, Route: e.Route, Target: auditTargetJSON{Type: e.TargetType, ID: e.TargetID},
		Changes: changes, Status: e.Status, Address: e.Address}
}

// auditFilter reads the list's query parameters.
func auditFilter(r *http.Request) (store.AuditFilter, bool, error) {
	var p Problems
	q := r.URL.Query()
	f := store.AuditFilter{
		Limit:      int(queryInt(&p, r, "limit", store.DefaultAuditLimit, 1, store.MaxAuditLimit)),
		AfterID:    queryInt(&p, r, "after_id", 0, 0, math.MaxInt64),
		Action:     strings.TrimSpace(q.Get("action")),
		TargetType: strings.TrimSpace(q.Get("target_type")),
	}
	if raw := q.Get("target_id"); raw != "" {
		id := queryInt(&p, r, "target_id", 0, 1, math.MaxInt64)
		f.TargetID = &id
	}
	if raw := strings.TrimSpace(q.Get("actor")); raw != "" {
		kind, idText, _ := strings.Cut(raw, ":")
		id, err := strconv.ParseInt(idText, 10, 64)
		if (kind != store.AuditActorUser && kind != store.AuditActorAPIKey) || err != nil || id < 1 {
			p.Add([]any{"query", "actor"}, "string_pattern_mismatch", "String should match pattern '^(user|api_key):[0-9]+$'", raw,
				map[string]any{"pattern": "^(user|api_key):[0-9]+$"})
		} else {
			f.ActorType, f.ActorID = kind, &id
		}
	}
	return f, q.Get("limit") != "", p.Err()
}

func (s *Server) listAudit(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	f, limited, err := auditFilter(r)
	if err != nil {
		return err
	}
	if wantsNDJSON(r) {
		return s.exportAudit(w, r, org, f, limited)
	}
	list, err := s.db.ListAudit(r.Context(), org, f)
	if err != nil {
		return err
	}
	out := make([]auditEntryJSON, len(list))
	for i, e := range list {
		out[i] = auditOut(e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": out})
	return nil
}

// wantsNDJSON reports whether r asks for JSON Lines.
func wantsNDJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(mt), "application/x-ndjson") {
			return true
		}
	}
	return false
}

// exportAudit streams the entries f selects as JSON Lines: every one after
// f.AfterID, or, when the request gave a limit, that many.
func (s *Server) exportAudit(w http.ResponseWriter, r *http.Request, org int64, f store.AuditFilter, limited bool) error {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	enc := json.NewEncoder(w)
	flusher := http.NewResponseController(w)
	left := f.Limit
	if !limited {
		f.Limit = store.MaxAuditLimit
	}
	n := 0
	err := s.db.EachAudit(r.Context(), org, f, func(e store.AuditEntry) error {
		if limited && left == 0 {
			return errStopExport
		}
		left--
		if err := enc.Encode(auditOut(e)); err != nil {
			return err
		}
		if n++; n%store.MaxAuditLimit == 0 {
			_ = flusher.Flush()
		}
		return nil
	})
	if err != nil && err != errStopExport {
		// The status is sent: the stream ends short, which a reader sees
		// as a last line missing or cut.
		s.log.Warn("audit export ended early", "error", err.Error())
	}
	return nil
}

var errStopExport = errStatus(http.StatusOK, "limit reached")

func (s *Server) getAuditEntry(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "audit_id")
	if err != nil {
		return err
	}
	list, err := s.db.ListAudit(r.Context(), org, store.AuditFilter{AfterID: id - 1, Limit: 1})
	if err != nil {
		return err
	}
	if len(list) == 0 || list[0].ID != id {
		return errStatus(http.StatusNotFound, "audit entry not found")
	}
	writeJSON(w, http.StatusOK, auditOut(list[0]))
	return nil
}
