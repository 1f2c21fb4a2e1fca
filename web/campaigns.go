package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

func (s *Server) writeCampaign(w http.ResponseWriter, r *http.Request, c *store.Campaign) error {
	out, err := s.campaignOut(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// queryInt reads an optional integer query parameter within [ge, le].
func queryInt(p *Problems, r *http.Request, name string, def, ge, le int64) int64 {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def
	}
	loc := []any{"query", name}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		p.Add(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", raw, nil)
		return def
	}
	checkRange(p, loc, raw, n, &ge, &le)
	return n
}

func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	var p Problems
	limit := queryInt(&p, r, "limit", 50, 1, 200)
	before := queryInt(&p, r, "before_id", 0, 0, math.MaxInt64)
	if err := p.Err(); err != nil {
		return err
	}
	list, err := s.db.ListCampaigns(r.Context(), org, before, int(limit))
	if err != nil {
		return err
	}
	// One query for the logs of the whole page, not one per campaign.
	ids := make([]int64, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	logs, err := s.db.RecentLogsOf(r.Context(), ids)
	if err != nil {
		return err
	}
	// And one for the nodes dialing them (only running campaigns, and
	// those settling calls, hold a lease).
	holders, err := s.db.LeaseHolders(r.Context())
	if err != nil {
		return err
	}
	out := make([]wire.Campaign, 0, len(list))
	for _, c := range list {
		out = append(out, campaignWithLogs(c, logs[c.ID], holders[c.ID]))
	}
	writeJSON(w, http.StatusOK, wire.CampaignList{Campaigns: out})
	return nil
}

func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "campaign_id")
	if err != nil {
		return err
	}
	c, err := s.db.GetCampaign(r.Context(), org, id)
	if err != nil {
		return err
	}
	return s.writeCampaign(w, r, c)
}

// deleteCampaign deletes a draft or finished campaign with no call still to
// be recorded; its contacts, calls and logs are purged in the background.
func (s *Server) deleteCampaign(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "campaign_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteCampaign(r.Context(), org, id); err != nil {
		return err
	}
	s.touched(id) // its streams end
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// patchCampaign changes settings of a draft, running or paused campaign; a
// running campaign's runner re-reads them at once.
func (s *Server) patchCampaign(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, idErr := pathID(ps, "campaign_id")
	body, err := readJSONObject(r)
	if err != nil {
		return joinProblems(idErr, err)
	}
	if idErr != nil {
		return idErr
	}
	c, err := s.db.UpdateCampaignSettings(r.Context(), org, id, func(st *store.Settings) error {
		var p Problems
		f := fields{obj: body, loc: []any{"body"}, p: &p}
		if v, ok := body["name"]; ok && v != nil {
			if name, _, ok := f.Name("name", false, false, 1, 255); ok {
				st.Name = name
			}
		}
		readSettings(f, st)
		return p.Err()
	})
	if err != nil {
		return err
	}
	if s.dialer != nil {
		s.dialer.Wake(c.ID)
	}
	s.touched(c.ID)
	return s.writeCampaign(w, r, c)
}

// transition returns the handler of a start/pause/resume/cancel operation.
func (s *Server) transition(op string) authedHandler {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
		id, err := pathID(ps, "campaign_id")
		if err != nil {
			return err
		}
		ctx := r.Context()
		if op == store.OpStart || op == store.OpResume {
			c, err := s.db.GetCampaign(ctx, org, id)
			if err != nil {
				return err
			}
			// A campaign in a state op does not allow gets the store's
			// conflict below, which names the state; the caller id only
			// matters to one that would dial.
			if c.State == store.StatePaused || (op == store.OpStart && c.State == store.StateDraft) {
				if err := s.checkCallerID(ctx, org, c.TelephonyConfigurationID); err != nil {
					return err
				}
			}
		}
		c, err := s.db.TransitionCampaign(ctx, org, id, op)
		if err != nil {
			return err
		}
		if s.dialer != nil {
			switch op {
			case store.OpStart, store.OpResume:
				s.dialer.Wake(id)
			case store.OpPause, store.OpCancel:
				s.dialer.Halt(ctx, id)
			}
		}
		s.touched(id)
		return s.writeCampaign(w, r, c)
	}
}

// checkCallerID answers 409 when configuration configID's provider needs a
// caller id (wire.NeedsCallerID: all but ari) and it has no active phone
// number (API.md 2.6).
func (s *Server) checkCallerID(ctx context.Context, org, configID int64) error {
	cfg, err := s.db.GetTelephonyConfig(ctx, org, configID)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return errStatus(http.StatusConflict, fmt.Sprintf("telephony configuration %d no longer exists", configID))
	}
	if err != nil {
		return err
	}
	if !wire.NeedsCallerID(cfg.Provider) {
		return nil
	}
	n, err := s.db.CountCallerIDs(ctx, cfg.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return errStatus(http.StatusConflict, "telephony configuration "+strconv.FormatInt(cfg.ID, 10)+" has no phone number to call from")
	}
	return nil
}

// isMissingBody reports whether err is readJSONObject's problem for an
// empty body.
func isMissingBody(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve) && len(ve.Problems) == 1 && ve.Problems[0].Type == "missing" && len(ve.Problems[0].Loc) == 1
}

// redialName is the default name of a redial of a campaign named name:
// name + " (redial)", the name cut so that the whole stays within 255
// characters.
func redialName(name string) string {
	const suffix = " (redial)"
	if r := []rune(name); len(r)+len(suffix) > 255 {
		name = string(r[:255-len(suffix)])
	}
	return name + suffix
}

// redialCampaign creates a draft campaign of the contacts whose final
// outcome matches the body's flags.
func (s *Server) redialCampaign(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, idErr := pathID(ps, "campaign_id")
	// The body is optional: none (or only white space) means every default.
	body, err := readJSONObject(r)
	if isMissingBody(err) {
		body, err = map[string]any{}, nil
	}
	if err != nil {
		return joinProblems(idErr, err)
	}
	if idErr != nil {
		return idErr
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	flags := map[string]bool{"retry_on_busy": true, "retry_on_no_answer": true, "retry_on_voicemail": true, "retry_on_failed": false}
	for _, name := range []string{"retry_on_busy", "retry_on_no_answer", "retry_on_voicemail", "retry_on_failed"} {
		v := flags[name] // a fixed order, so that problems come in a stable order
		setBool(f, name, &v)
		flags[name] = v
	}
	ctx := r.Context()
	parent, err := s.db.GetCampaign(ctx, org, id)
	if err != nil {
		return err
	}
	nc := store.NewCampaign{Settings: parent.Settings, WorkflowID: parent.WorkflowID, WorkflowName: parent.WorkflowName,
		WorkflowDefinition: parent.WorkflowDefinition, TelephonyConfigurationID: parent.TelephonyConfigurationID,
		TelephonyConfigurationName: parent.TelephonyConfigurationName,
		SourceID:                   parent.SourceID, DefaultCountry: parent.DefaultCountry, ParentCampaignID: &parent.ID, RedialOf: &parent.ID}
	nc.Name = redialName(parent.Name)
	if v, ok := body["name"]; ok && v != nil {
		if n, _, ok := f.Name("name", false, false, 1, 255); ok {
			nc.Name = n
		}
	}
	if sub, present, ok := f.Object("retry_config", false, true); present && ok {
		nc.RetryConfig = readRetryConfig(sub, nc.RetryConfig)
	}
	if err := p.Err(); err != nil {
		return err
	}
	if parent.State != store.StateCompleted && parent.State != store.StateCancelled {
		return errStatus(http.StatusConflict, "campaign "+strconv.FormatInt(id, 10)+" is "+parent.State+"; redial needs a completed or cancelled campaign")
	}
	if parent.RedialedCampaignID != nil {
		return errStatus(http.StatusConflict, "campaign "+strconv.FormatInt(id, 10)+" was already redialed as campaign "+strconv.FormatInt(*parent.RedialedCampaignID, 10))
	}
	// A finished campaign outlives its configuration; its redial cannot.
	if _, err := s.db.GetTelephonyConfig(ctx, org, parent.TelephonyConfigurationID); store.ErrorCode(err) == store.ENOTFOUND {
		return errStatus(http.StatusConflict, fmt.Sprintf("telephony configuration %d of campaign %d was deleted; create a new campaign instead",
			parent.TelephonyConfigurationID, id))
	} else if err != nil {
		return err
	}
	var outcomes []string
	for flag, outs := range map[string][]string{"retry_on_busy": {carrier.OutcomeBusy}, "retry_on_no_answer": {carrier.OutcomeNoAnswer},
		"retry_on_voicemail": {carrier.OutcomeVoicemail}, "retry_on_failed": {carrier.OutcomeFailed, carrier.OutcomeUnknown, carrier.OutcomeCanceled}} {
		if flags[flag] {
			outcomes = append(outcomes, outs...)
		}
	}
	// The contacts are copied inside the database, a chunk per short
	// transaction: none passes through memory, however many there are.
	c, err := s.db.RedialCampaign(ctx, org, nc, parent.Columns, outcomes)
	if err != nil {
		return err
	}
	return s.writeCampaign(w, r, c)
}

// attemptStates and attemptOutcomes are the values of the calls filters,
// in the order a 422 lists them.
var (
	attemptStates   = []string{store.AttemptQueued, store.AttemptDialing, store.AttemptInFlight, store.AttemptDone}
	attemptOutcomes = []string{carrier.OutcomeAnswered, carrier.OutcomeVoicemail, carrier.OutcomeBusy, carrier.OutcomeNoAnswer,
		carrier.OutcomeFailed, carrier.OutcomeCanceled, carrier.OutcomeUnknown, store.OutcomeSuppressed}
)

// queryEnum reads an optional enum query parameter; another value is
// pydantic's enum problem: "Input should be 'a', 'b' or 'c'", ctx expected.
func queryEnum(p *Problems, r *http.Request, name string, allowed []string) *string {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil
	}
	if !slices.Contains(allowed, v) {
		quoted := make([]string, len(allowed))
		for i, a := range allowed {
			quoted[i] = "'" + a + "'"
		}
		expected := strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
		p.Add([]any{"query", name}, "enum", "Input should be "+expected, v, map[string]any{"expected": expected})
		return nil
	}
	return &v
}

func (s *Server) listCalls(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, idErr := pathID(ps, "campaign_id")
	var p Problems
	f := store.AttemptFilter{Outcome: queryEnum(&p, r, "outcome", attemptOutcomes), State: queryEnum(&p, r, "state", attemptStates)}
	f.Limit = int(queryInt(&p, r, "limit", 100, 1, 1000))
	f.AfterID = queryInt(&p, r, "after_id", 0, 0, math.MaxInt64)
	columns := queryColumns(r)
	if err := joinProblems(idErr, p.Err()); err != nil {
		return err
	}
	c, err := s.db.GetCampaign(r.Context(), org, id)
	if err != nil {
		return err
	}
	if err := checkColumns(columns, c); err != nil {
		return err
	}
	list, err := s.db.ListAttempts(r.Context(), id, f)
	if err != nil {
		return err
	}
	out := make([]wire.Call, len(list))
	for i, a := range list {
		out[i] = attemptOut(a)
	}
	if len(columns) > 0 {
		if err := s.addContacts(r.Context(), id, columns, list, out); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, wire.CallList{Calls: out})
	return nil
}

func (s *Server) listCampaignLogs(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, idErr := pathID(ps, "campaign_id")
	var p Problems
	limit := queryInt(&p, r, "limit", 100, 1, 1000)
	var after time.Time
	if raw := r.URL.Query().Get("after"); raw != "" {
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			p.Add([]any{"query", "after"}, "datetime_from_date_parsing", "Input should be a valid datetime (RFC 3339)", raw, nil)
		}
		after = t
	}
	if err := joinProblems(idErr, p.Err()); err != nil {
		return err
	}
	if _, err := s.db.GetCampaign(r.Context(), org, id); err != nil {
		return err
	}
	logs, err := s.db.ListLogs(r.Context(), id, after, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": logsOut(logs)})
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTS(t *time.Time) string {
	if t == nil {
		return ""
	}
	return ts(*t)
}

func derefInt(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}
