package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Attempt states: the call-attempts table is the dialer's durable queue.
const (
	AttemptQueued   = "queued"    // waiting for its due time and a free slot
	AttemptDialing  = "dialing"   // claimed; the provider request may be under way
	AttemptInFlight = "in_flight" // placed at the provider
	AttemptDone     = "done"      // final
)

// Attempt is one call attempt of a contact.
type Attempt struct {
	ID              int64
	CampaignID      int64
	ContactID       int64
	ContactRow      int64
	Attempt         int64
	State           string
	DueAt           time.Time
	Timezone        string
	PhoneNumber     string
	Outcome         *string
	RawStatus       *string
	ProviderCallID  *string
	CallerID        *string
	AnsweredBy      *string
	Error           *string
	Sequence        int64
	StartedAt       *time.Time
	AnsweredAt      *time.Time
	EndedAt         *time.Time
	DeadlineAt      *time.Time
	DurationSeconds *int64
	// Compliance is the guard rails' evidence (JSON), nil until the
	// attempt was placed or held.
	Compliance json.RawMessage
	// The arrival times of the voice agent's first report of each event
	// (API.md 19), nil until one arrived.
	AgentConnectedAt  *time.Time
	AgentFirstAudioAt *time.Time
	AgentFailedAt     *time.Time
	// Abandoned and AnswerToFirstAudioMs are the verdict on the ended call
	// (DecideAbandonment): nil when no person answered or the call has not
	// ended; AnswerToFirstAudioMs is recorded after the end when the first
	// audio came late.
	Abandoned            *bool
	AnswerToFirstAudioMs *int64
}

func attemptFromRow(r sqlcdb.CallAttempt) *Attempt {
	return &Attempt{
		ID: r.ID, CampaignID: r.CampaignID, ContactID: r.ContactID, ContactRow: r.ContactRow, Attempt: r.Attempt,
		State: r.State, DueAt: fromMS(r.DueAt), Timezone: r.Timezone, PhoneNumber: r.PhoneNumber,
		Outcome: nullString(r.Outcome), RawStatus: nullString(r.RawStatus), ProviderCallID: nullString(r.ProviderCallID),
		CallerID: nullString(r.CallerID), AnsweredBy: nullString(r.AnsweredBy), Error: nullString(r.Error),
		Sequence: r.Sequence, StartedAt: optTime(r.StartedAt), AnsweredAt: optTime(r.AnsweredAt),
		EndedAt: optTime(r.EndedAt), DeadlineAt: optTime(r.DeadlineAt), DurationSeconds: optInt(r.DurationSeconds),
		Compliance: rawJSON(r.Compliance), AgentConnectedAt: optTime(r.AgentConnectedAt),
		AgentFirstAudioAt: optTime(r.AgentFirstAudioAt), AgentFailedAt: optTime(r.AgentFailedAt),
		Abandoned: optBool(r.Abandoned), AnswerToFirstAudioMs: optInt(r.AnswerToFirstAudioMs),
	}
}

func rawJSON(s sql.NullString) json.RawMessage {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.RawMessage(s.String)
}

func nullMS(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func str(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// ClaimAttempts moves up to max due, queued attempts of the campaign whose
// timezone is in timezones to dialing, in dialing order (due retries first,
// oldest due first, then first attempts in CSV order), and returns them. The
// claim is durable (synced to disk, see inDurableBatch) before any provider
// request is made, and atomic with
// reading the claimed rows back: on an error (ctx ending while the rows are
// read) nothing is claimed, so no attempt is left dialing that nobody
// dispatches. Each claimed attempt gets deadline: if it has no final status by
// then (its placement could not be recorded, say) it is reconciled like a
// call in flight.
//
// The claim is fenced by lease l (the campaign's, l.CampaignID): when it
// changed hands the claim fails with ErrLeaseLost, and when the campaign is
// no longer running (paused on another node) nothing is claimed.
func (db *DB) ClaimAttempts(ctx context.Context, l Lease, now, deadline time.Time, timezones []string, max int) ([]*Attempt, error) {
	claimed, _, err := db.ClaimAttemptsShared(ctx, l, now, deadline, timezones, max, OrgShare{})
	return claimed, err
}

// ClaimAttemptsShared is ClaimAttempts under the organization's limit
// share (orglimits.go): it claims at most what the organization's slots
// allow the campaign now, and reports whether that held it below max.
func (db *DB) ClaimAttemptsShared(ctx context.Context, l Lease, now, deadline time.Time, timezones []string, max int,
	share OrgShare) ([]*Attempt, bool, error) {
	tz, _ := json.Marshal(timezones)
	campaignID := l.CampaignID
	var rows []sqlcdb.CallAttempt
	var held bool
	err := db.inDurableBatch(ctx, func(q sqlcdb.Querier) error {
		rows, held = nil, false
		if err := db.checkLease(ctx, q, l, true); errors.Is(err, errNotRunning) {
			return nil
		} else if err != nil {
			return err
		}
		max := max
		if share.Limit > 0 {
			allowed, err := orgAllowance(ctx, q, share, campaignID, now.UnixMilli())
			if err != nil {
				return err
			}
			if allowed < max {
				max, held = allowed, true
			}
			if max == 0 {
				return nil
			}
		}
		var err error
		rows, err = claimWithQueueing(ctx, q, campaignID, max, func(n int) ([]sqlcdb.CallAttempt, error) {
			return q.ClaimAttempts(ctx, sqlcdb.ClaimAttemptsParams{
				Now: sql.NullInt64{Int64: now.UnixMilli(), Valid: true}, CampaignID: campaignID,
				Deadline: sql.NullInt64{Int64: deadline.UnixMilli(), Valid: true}, Timezones: string(tz), MaxClaims: int64(n),
			})
		})
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("claim attempts: %w", err)
	}
	out := make([]*Attempt, len(rows))
	for i, r := range rows {
		out[i] = attemptFromRow(r)
	}
	return out, held, nil
}

// CountActiveAttempts returns how many attempts of the campaign are dialing
// or in flight.
func (db *DB) CountActiveAttempts(ctx context.Context, campaignID int64) (int, error) {
	n, err := db.rq.CountActiveAttempts(ctx, campaignID)
	if err != nil {
		return 0, fmt.Errorf("count active attempts: %w", err)
	}
	return int(n), nil
}

// QueuedByTimezone returns, per contact timezone of tzs ("" = the
// campaign's), the earliest due time of the campaign's queued attempts; a
// timezone with none queued is absent. Contacts whose first attempt is not
// queued yet (queue.go) count as due at once in every timezone of tzs. It
// costs a few index lookups per timezone, not a scan of the queue.
func (db *DB) QueuedByTimezone(ctx context.Context, campaignID int64, tzs []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(tzs))
	if more, err := db.unqueuedContacts(ctx, campaignID); err != nil {
		return nil, err
	} else if more {
		addUnqueued(out, tzs)
		return out, nil
	}
	for _, tz := range tzs {
		// Retries (priority 0) and first attempts (1) are ordered apart.
		for _, prio := range []int64{0, 1} {
			ms, err := db.rq.NextQueuedDue(ctx, sqlcdb.NextQueuedDueParams{CampaignID: campaignID, Priority: prio, Timezone: tz})
			if errNoRows(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("queued attempts: %w", err)
			}
			if t, ok := out[tz]; !ok || fromMS(ms).Before(t) {
				out[tz] = fromMS(ms)
			}
		}
	}
	return out, nil
}

// NextDeadline returns the earliest deadline of the campaign's in-flight
// attempts, or the zero time when none is in flight.
func (db *DB) NextDeadline(ctx context.Context, campaignID int64) (time.Time, error) {
	ms, err := db.rq.MinDeadline(ctx, campaignID)
	if err != nil {
		return time.Time{}, fmt.Errorf("next deadline: %w", err)
	}
	if ms == 0 {
		return time.Time{}, nil
	}
	return fromMS(ms), nil
}

// Placement is a call request's result to record: the attempt, the number
// called and where, and the guard rails' evidence (12.5; nil keeps what the
// attempt has).
type Placement struct {
	AttemptID, CampaignID, OrganizationID int64
	PhoneNumber                           string
	ProviderCallID, CallerID              string
	// At is when the request was made; Deadline is when the call is
	// reconciled if no final status came.
	At, Deadline time.Time
	Evidence     []byte
	// Lease fences the write: it fails with ErrLeaseLost when the
	// campaign's lease changed hands. Zero: not fenced (a test's write).
	Lease Lease
}

// recordNumberCall counts p's call for the attempt cap (a no-op when the
// cap reserved it already).
func recordNumberCall(ctx context.Context, q sqlcdb.Querier, p Placement) error {
	if p.OrganizationID == 0 || p.PhoneNumber == "" {
		return nil
	}
	if err := q.RecordNumberCall(ctx, sqlcdb.RecordNumberCallParams{OrganizationID: p.OrganizationID, PhoneNumber: p.PhoneNumber,
		AttemptID: p.AttemptID, PlacedAt: p.At.UnixMilli()}); err != nil {
		return fmt.Errorf("count call for the attempt cap: %w", err)
	}
	return nil
}

func evidence(b []byte) sql.NullString { return sql.NullString{String: string(b), Valid: len(b) > 0} }

// MarkPlaced records that the provider accepted attempt p.AttemptID: it is
// in flight with the provider's call id until p.Deadline, the campaign's
// executed_count grows by one, the number's call counts for the attempt
// cap, and the evidence is stored, in one transaction. It reports false
// when the attempt was no longer dialing (a final status already arrived).
func (db *DB) MarkPlaced(ctx context.Context, p Placement) (bool, error) {
	var placed bool
	err := db.inBatch(ctx, func(q sqlcdb.Querier) error {
		placed = false
		if err := db.checkLease(ctx, q, p.Lease, false); err != nil {
			return err
		}
		n, err := q.MarkAttemptPlaced(ctx, sqlcdb.MarkAttemptPlacedParams{ProviderCallID: str(p.ProviderCallID),
			CallerID: str(p.CallerID), DeadlineAt: sql.NullInt64{Int64: p.Deadline.UnixMilli(), Valid: true},
			Compliance: evidence(p.Evidence), ID: p.AttemptID})
		if err != nil {
			return fmt.Errorf("mark placed: %w", err)
		}
		placed = n == 1
		if err := recordNumberCall(ctx, q, p); err != nil {
			return err
		}
		// Counted once, also when a final status from the provider counted
		// it first (ApplyStatus).
		first, err := q.NoteExecuted(ctx, p.AttemptID)
		if err != nil || first == 0 {
			return err
		}
		return q.AddCampaignCounts(ctx, sqlcdb.AddCampaignCountsParams{Executed: 1, ID: p.CampaignID})
	})
	return placed, err
}

// MarkUnconfirmed records that attempt p.AttemptID's place request may or
// may not have reached the provider (its answer was lost or unreadable): it
// stays open, in flight without a provider call id, until a status, a query
// or its deadline settles it; it is never placed again and not counted in
// executed_count until the provider confirms the call, but it counts for
// the attempt cap (the call may be ringing). It reports false when the
// attempt was no longer dialing (a status settled it already).
func (db *DB) MarkUnconfirmed(ctx context.Context, p Placement, reason string) (bool, error) {
	var n int64
	err := db.inBatch(ctx, func(q sqlcdb.Querier) error {
		n = 0
		if err := db.checkLease(ctx, q, p.Lease, false); err != nil {
			return err
		}
		var err error
		n, err = q.MarkAttemptUnconfirmed(ctx, sqlcdb.MarkAttemptUnconfirmedParams{CallerID: str(p.CallerID),
			DeadlineAt: sql.NullInt64{Int64: p.Deadline.UnixMilli(), Valid: true}, Error: str(reason),
			Compliance: evidence(p.Evidence), ID: p.AttemptID})
		if err != nil {
			return err
		}
		return recordNumberCall(ctx, q, p)
	})
	if err != nil {
		return false, fmt.Errorf("mark unconfirmed: %w", err)
	}
	return n == 1, nil
}

// RequeueAttempt puts a dialing attempt back in the queue, due at due (a
// provider rate limit, a pause before the request went out). It reports
// false when the attempt was no longer dialing (a final status ended it).
// held, when not nil, is the evidence of why a guard rail held the attempt (12.5),
// in the same statement. The write is fenced by lease l (ErrLeaseLost; zero:
// not fenced).
func (db *DB) RequeueAttempt(ctx context.Context, l Lease, id int64, due time.Time, held []byte) (bool, error) {
	var n int64
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		if err := db.checkLease(ctx, q, l, false); err != nil {
			return err
		}
		var err error
		n, err = q.RequeueAttempt(ctx, sqlcdb.RequeueAttemptParams{DueAt: due.UnixMilli(), Compliance: evidence(held), ID: id})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("requeue attempt: %w", err)
	}
	return n == 1, nil
}

// GetAttempt returns attempt id, or ENOTFOUND.
func (db *DB) GetAttempt(ctx context.Context, id int64) (*Attempt, error) {
	r, err := db.rq.GetAttempt(ctx, id)
	if err != nil {
		return nil, notFound(err, "call attempt", id)
	}
	return attemptFromRow(r), nil
}

// UnfinishedAttempts returns every dialing or in-flight attempt of every
// campaign (for reconciliation at start-up).
func (db *DB) UnfinishedAttempts(ctx context.Context) ([]*Attempt, error) {
	return unfinished(db.rq.UnfinishedAttempts(ctx))
}

// UnfinishedAttemptsOf is UnfinishedAttempts of campaign id alone (a
// campaign a node takes over).
func (db *DB) UnfinishedAttemptsOf(ctx context.Context, id int64) ([]*Attempt, error) {
	return unfinished(db.rq.UnfinishedAttemptsOf(ctx, id))
}

func unfinished(rows []sqlcdb.CallAttempt, err error) ([]*Attempt, error) {
	if err != nil {
		return nil, fmt.Errorf("unfinished attempts: %w", err)
	}
	out := make([]*Attempt, len(rows))
	for i, r := range rows {
		out[i] = attemptFromRow(r)
	}
	return out, nil
}

// ExpiredAttempts returns the campaign's in-flight attempts whose deadline is
// at or before now.
func (db *DB) ExpiredAttempts(ctx context.Context, campaignID int64, now time.Time) ([]*Attempt, error) {
	rows, err := db.rq.ExpiredAttempts(ctx, sqlcdb.ExpiredAttemptsParams{CampaignID: campaignID,
		DeadlineAt: sql.NullInt64{Int64: now.UnixMilli(), Valid: true}})
	if err != nil {
		return nil, fmt.Errorf("expired attempts: %w", err)
	}
	out := make([]*Attempt, len(rows))
	for i, r := range rows {
		out[i] = attemptFromRow(r)
	}
	return out, nil
}

// AttemptFilter selects call attempts for listing.
type AttemptFilter struct {
	Outcome *string
	State   *string
	AfterID int64
	Limit   int
}

// ListAttempts returns the campaign's attempts in id order, each filter an
// index range so that a page costs the same at any depth.
func (db *DB) ListAttempts(ctx context.Context, campaignID int64, f AttemptFilter) ([]*Attempt, error) {
	var rows []sqlcdb.CallAttempt
	var err error
	switch {
	case f.Outcome != nil:
		rows, err = db.rq.ListAttemptsByOutcome(ctx, sqlcdb.ListAttemptsByOutcomeParams{CampaignID: campaignID,
			Outcome: toNullString(f.Outcome), AfterID: f.AfterID, State: toNullString(f.State), MaxRows: int64(f.Limit)})
	case f.State != nil:
		rows, err = db.rq.ListAttemptsByState(ctx, sqlcdb.ListAttemptsByStateParams{CampaignID: campaignID,
			State: *f.State, AfterID: f.AfterID, MaxRows: int64(f.Limit)})
	default:
		rows, err = db.rq.ListAttempts(ctx, sqlcdb.ListAttemptsParams{CampaignID: campaignID, AfterID: f.AfterID, MaxRows: int64(f.Limit)})
	}
	if err != nil {
		return nil, fmt.Errorf("list attempts: %w", err)
	}
	out := make([]*Attempt, len(rows))
	for i, r := range rows {
		out[i] = attemptFromRow(r)
	}
	return out, nil
}

// PickCallerID returns the caller id for the next call of configuration
// configID: its active default caller id, else its active numbers least
// recently used first; the chosen number's last use becomes now. ok is false
// when the configuration has no active number.
func (db *DB) PickCallerID(ctx context.Context, configID int64, now time.Time) (addr string, ok bool, err error) {
	// One statement (pick and touch), in the shared write batch.
	err = db.inBatch(ctx, func(q sqlcdb.Querier) error {
		var err error
		addr, err = q.PickAndTouchCallerID(ctx, sqlcdb.PickAndTouchCallerIDParams{
			Now: sql.NullInt64{Int64: now.UnixMilli(), Valid: true}, TelephonyConfigurationID: configID})
		return err
	})
	if errNoRows(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("pick caller id: %w", err)
	}
	return addr, true, nil
}

// CountCallerIDs returns how many active numbers configuration configID has.
func (db *DB) CountCallerIDs(ctx context.Context, configID int64) (int, error) {
	n, err := db.rq.CountActiveCallerIDs(ctx, configID)
	if err != nil {
		return 0, fmt.Errorf("count caller ids: %w", err)
	}
	return int(n), nil
}

// InFlightAttempt is an attempt in flight and whether it was answered.
type InFlightAttempt struct {
	ID       int64
	Answered bool
	// Dialing: its placement is under way (or was interrupted); the others
	// were placed.
	Dialing bool
}

// InFlightAttempts returns the attempts in flight (placed, not final) or
// dialing through telephony configuration configID, in id order.
func (db *DB) InFlightAttempts(ctx context.Context, configID int64) ([]InFlightAttempt, error) {
	rows, err := db.rq.InFlightAttemptIDsForConfig(ctx, configID)
	if err != nil {
		return nil, fmt.Errorf("attempts in flight of configuration: %w", err)
	}
	out := make([]InFlightAttempt, len(rows))
	for i, r := range rows {
		out[i] = InFlightAttempt{ID: r.ID, Answered: r.Answered == 1, Dialing: r.Dialing == 1}
	}
	return out, nil
}
