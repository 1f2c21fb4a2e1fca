package web

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/web/wire"
)

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

func diagnosisBody(d *dialer.Diagnosis) wire.Diagnosis {
	out := wire.Diagnosis{CampaignID: d.CampaignID, State: d.State, Dialing: d.Dialing, InFlight: d.InFlight,
		MaxConcurrency: d.MaxConcurrency, ReadyContacts: d.ReadyContacts, Reasons: make([]wire.Reason, len(d.Reasons)),
		AbandonedRate24h: wire.AbandonedRates(d.AbandonedRate24h)}
	for i, rs := range d.Reasons {
		out.Reasons[i] = wire.Reason{Code: rs.Code, Message: rs.Message, Count: rs.Count, Until: optTS(rs.Until)}
	}
	return out
}
