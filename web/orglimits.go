package web

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store"
)

// The organization's limits (API.md 19): max_concurrent_calls, the most
// calls of the organization in flight counting every campaign and node
// (null: no limit).

type limitsJSON struct {
	MaxConcurrentCalls *int `json:"max_concurrent_calls"`
}

func (s *Server) getLimits(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	n, err := s.db.OrganizationLimits(r.Context(), org)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, limitsJSON{MaxConcurrentCalls: n})
	return nil
}

func (s *Server) putLimits(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var limit *int
	if raw, had := body["max_concurrent_calls"]; !had || raw != nil {
		var p Problems
		f := fields{obj: body, loc: []any{"body"}, p: &p}
		v, _, _ := f.Int("max_concurrent_calls", true, ptr[int64](1), ptr[int64](store.MaxConcurrentCallsLimit))
		if err := p.Err(); err != nil {
			return err
		}
		n := int(v)
		limit = &n
	}
	_, after, err := s.db.SetOrganizationLimits(r.Context(), org, limit)
	if err != nil {
		return err
	}
	if s.dialer != nil {
		s.dialer.LimitsChanged(org)
	}
	writeJSON(w, http.StatusOK, limitsJSON{MaxConcurrentCalls: after})
	return nil
}
