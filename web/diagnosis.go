package web

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer"
)

// diagnosisOut is the body of GET /campaign/{id}/diagnosis (API.md 11).
type diagnosisOut struct {
	CampaignID     int64       `json:"campaign_id"`
	State          string      `json:"state"`
	Dialing        bool        `json:"dialing"`
	InFlight       int         `json:"in_flight"`
	MaxConcurrency int         `json:"max_concurrency"`
	ReadyContacts  int         `json:"ready_contacts"`
	Reasons        []reasonOut `json:"reasons"`
}

type reasonOut struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Count   *int    `json:"count,omitempty"`
	Until   *string `json:"until,omitempty"`
}

// campaignDiagnosis answers why a campaign is or is not dialing.
func (s *Server) campaignDiagnosis(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "campaign_id")
	if err != nil {
		return err
	}
	if s.dialer == nil {
		return errStatus(http.StatusServiceUnavailable, "the dialer is not running")
	}
	d, err := s.dialer.Diagnose(r.Context(), org, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, diagnosisBody(d))
	return nil
}

func diagnosisBody(d *dialer.Diagnosis) diagnosisOut {
	out := diagnosisOut{CampaignID: d.CampaignID, State: d.State, Dialing: d.Dialing, InFlight: d.InFlight,
		MaxConcurrency: d.MaxConcurrency, ReadyContacts: d.ReadyContacts, Reasons: make([]reasonOut, len(d.Reasons))}
	for i, rs := range d.Reasons {
		out.Reasons[i] = reasonOut{Code: rs.Code, Message: rs.Message, Count: rs.Count, Until: optTS(rs.Until)}
	}
	return out
}
