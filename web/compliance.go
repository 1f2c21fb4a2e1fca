package web

import (
	"fmt"
	"math"
	"net/http"
	"slices"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// The organization's compliance policy (API.md 12.2, 12.3, 19): calling
// hours on the callee's clock, the attempt cap across campaigns and the
// abandoned-calls policy. PUT is partial like a telephony configuration's
// update: only the fields sent change, inside calling_hours, attempt_cap
// and abandonment too; it is checked against the
// stored policy in the transaction that stores the next version, so two
// PUTs never mix. Every PUT (an empty one too) increments the version and
// logs what changed with the caller's API key; version and updated_at in a
// body are read-only and ignored, like every unknown key.

// policyJSON is the policy resource.
type policyJSON struct {
	CallingHours store.CallingHours      `json:"calling_hours"`
	AttemptCap   store.AttemptCap        `json:"attempt_cap"`
	Abandonment  store.AbandonmentPolicy `json:"abandonment"`
	Version      int64                   `json:"version"`
	UpdatedAt    *string                 `json:"updated_at"`
}

func policyOut(p store.VersionedPolicy) policyJSON {
	ch := p.CallingHours
	if ch.Days == nil {
		ch.Days = []int{}
	}
	return policyJSON{CallingHours: ch, AttemptCap: p.AttemptCap, Abandonment: p.Abandonment, Version: p.Version, UpdatedAt: optTS(p.UpdatedAt)}
}

// policyChangeJSON is one entry of the change log.
type policyChangeJSON struct {
	ID        int64                     `json:"id"`
	Version   int64                     `json:"version"`
	ChangedAt string                    `json:"changed_at"`
	APIKeyID  *int64                    `json:"api_key_id"`
	Changes   map[string]map[string]any `json:"changes"`
}

func (s *Server) getCompliance(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	p, err := s.db.CompliancePolicy(r.Context(), org)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, policyOut(p))
	return nil
}

// putCompliance applies the body's fields to the stored policy, stores the
// next version with the caller's key in the change log, and tells the
// dialer, whose running campaigns look at the new policy at once.
func (s *Server) putCompliance(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	p, err := s.db.UpdateCompliancePolicy(r.Context(), org, principalOf(r).APIKeyID, func(pol *store.Policy) error {
		var p Problems
		f := fields{obj: body, loc: []any{"body"}, p: &p}
		if sub, present, ok := f.Object("calling_hours", false, true); present && ok {
			readCallingHours(sub, &pol.CallingHours)
		}
		if sub, present, ok := f.Object("attempt_cap", false, true); present && ok {
			setBool(sub, "enabled", &pol.AttemptCap.Enabled)
			setInt(sub, "max_attempts", wire.IntRange{Min: 1, Max: 100}, &pol.AttemptCap.MaxAttempts)
			setInt(sub, "window_hours", wire.IntRange{Min: 1, Max: store.MaxCapWindowHours}, &pol.AttemptCap.WindowHours)
		}
		if sub, present, ok := f.Object("abandonment", false, true); present && ok {
			readAbandonment(sub, &pol.Abandonment)
		}
		return p.Err()
	})
	if err != nil {
		return err
	}
	if s.dialer != nil {
		s.dialer.PolicyChanged(org)
	}
	writeJSON(w, http.StatusOK, policyOut(p))
	return nil
}

// readAbandonment applies the fields of an abandonment object to a.
func readAbandonment(f fields, a *store.AbandonmentPolicy) {
	setBool(f, "enabled", &a.Enabled)
	setInt(f, "abandon_after_ms", wire.AbandonAfterMsRange, &a.AbandonAfterMs)
	setFloat(f, "max_rate", wire.AbandonMaxRateRange, &a.MaxRate)
	setInt(f, "window_hours", wire.AbandonWindowRange, &a.WindowHours)
	setInt(f, "min_answered", wire.AbandonMinAnsweredRange, &a.MinAnswered)
	setInt(f, "recall_after_hours", wire.RecallAfterHoursRange, &a.RecallAfterHours)
}

// readCallingHours applies the fields of a calling_hours object to ch:
// start and end HH:MM (end may be 24:00), start before end once merged with
// the stored values, days a non-empty set of 0..6 (stored sorted).
func readCallingHours(f fields, ch *store.CallingHours) {
	setBool(f, "enabled", &ch.Enabled)
	start, end := ch.Start, ch.End
	startOK, endOK := true, true
	if v, sent := f.obj["start"]; sent && v != nil {
		if s, _, ok := f.String("start", false, false, 0, 0); ok {
			_, startOK = readClock(f, "start", s, false)
			start = s
		} else {
			startOK = false
		}
	}
	if v, sent := f.obj["end"]; sent && v != nil {
		if s, _, ok := f.String("end", false, false, 0, 0); ok {
			_, endOK = readClock(f, "end", s, true)
			end = s
		} else {
			endOK = false
		}
	}
	if startOK && endOK {
		s, errS := dialer.ParseClock(start, false)
		e, errE := dialer.ParseClock(end, true)
		if errS == nil && errE == nil && s >= e {
			f.p.Add(f.loc, "value_error", fmt.Sprintf("Value error, start must be before end (start %s, end %s)", start, end),
				map[string]any{"start": start, "end": end}, nil)
		}
		ch.Start, ch.End = start, end
	}
	if v, sent := f.obj["days"]; sent && v != nil {
		if days, ok := readDays(f, v); ok {
			ch.Days = days
		}
	}
}

// readDays reads a non-empty list of distinct days 0..6 (0 = Monday) and
// returns it sorted.
func readDays(f fields, v any) ([]int, bool) {
	loc := at(f.loc, "days")
	list, isList := v.([]any)
	if !isList {
		f.p.Add(loc, "list_type", "Input should be a valid list", v, nil)
		return nil, false
	}
	if len(list) == 0 {
		f.p.Add(loc, "too_short", "List should have at least 1 item after validation, not 0", v,
			map[string]any{"field_type": "List", "min_length": 1, "actual_length": 0})
		return nil, false
	}
	days := make([]int, 0, len(list))
	seen := map[int64]bool{}
	ok := true
	for i, item := range list {
		n, isInt := checkInt(f.p, at(loc, i), item)
		if !isInt || !checkRange(f.p, at(loc, i), item, n, ptr[int64](0), ptr[int64](6)) {
			ok = false
			continue
		}
		if seen[n] {
			f.p.Add(at(loc, i), "value_error", fmt.Sprintf("Value error, day %d is listed twice", n), item, nil)
			ok = false
			continue
		}
		seen[n] = true
		days = append(days, int(n))
	}
	slices.Sort(days)
	return days, ok
}

// listComplianceChanges lists the policy's changes, newest first.
func (s *Server) listComplianceChanges(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	var p Problems
	limit := queryInt(&p, r, "limit", 50, 1, 200)
	before := queryInt(&p, r, "before_id", 0, 0, math.MaxInt64)
	if err := p.Err(); err != nil {
		return err
	}
	list, err := s.db.PolicyChanges(r.Context(), org, before, int(limit))
	if err != nil {
		return err
	}
	out := make([]policyChangeJSON, len(list))
	for i, c := range list {
		changes := c.Changes
		if changes == nil {
			changes = map[string]map[string]any{}
		}
		out[i] = policyChangeJSON{ID: c.ID, Version: c.Version, ChangedAt: ts(c.ChangedAt), APIKeyID: c.APIKeyID, Changes: changes}
	}
	writeJSON(w, http.StatusOK, map[string]any{"changes": out})
	return nil
}
