package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// StatusUpdate is one call status to apply to an attempt.
type StatusUpdate struct {
	At             time.Time
	Raw            string
	ProviderCallID string
	// RequestID, when set, is the provider call id the attempt may have been
	// recorded with until now (Plivo's request_uuid); it is replaced by
	// ProviderCallID.
	RequestID  string
	Answered   bool
	AnsweredBy string
	Sequence   int
	// Final statuses end the attempt with Outcome.
	Final           bool
	Outcome         string
	DurationSeconds int
	Error           string
	// FromProvider: the status is the provider's (a webhook, an event, a
	// status query), so the call was placed; a final one counts the call in
	// executed_count if its placement was never recorded. False for the
	// outcomes the service decides itself (initiation failed, unknown). A
	// provider's "unknown" (it has no such call) proves nothing.
	FromProvider bool
	// ReplayKeys name the signed request the status came in
	// (carrier.Status.ReplayKeys); ReplayUntil is how long they are
	// remembered. A status whose key was recorded and has not expired was
	// applied already: it is ignored. The keys are recorded in the
	// transaction that applies the status, so a failed application leaves
	// none behind and the provider's retry is applied.
	ReplayKeys  []string
	ReplayUntil time.Time
	// Machine reports whether an answered_by verdict is not a person
	// (carrier.IsMachine); a final answered outcome of an attempt whose
	// verdict, from this or an earlier status, is a machine's is stored as
	// voicemail. nil: verdicts are not looked at.
	Machine func(answeredBy string) bool
	// Evidence, when set, is the guard rails' evidence stored with a final
	// status the service decided (a suppressed attempt, 12.5).
	Evidence []byte
	// AudioAtAnswer: the call's answer spoke the workflow's greeting, with
	// no voice agent (API.md 6): a person who answered heard audio from the
	// answer on (DecideAbandonment).
	AudioAtAnswer bool
	// AbandonAfter is the abandonment policy's abandon_after_ms for a final
	// status; 0 means DefaultAbandonAfter.
	AbandonAfter time.Duration
}

// RetryPolicy decides, inside ApplyStatus's transaction, whether a final
// outcome of the attempt-th attempt of a contact is retried under the
// campaign's retry configuration rc, and when the retry is due.
type RetryPolicy func(rc RetryConfig, attempt int64, outcome string) (retry bool, due time.Time)

// Applied tells what ApplyStatus did.
type Applied struct {
	// Ignored: the attempt was already final (a duplicate or late event).
	Ignored    bool
	CampaignID int64
	Final      bool
	Outcome    string
	// Retried: a new attempt of the contact was queued.
	Retried bool
	// Completed: this status made every contact final and the running
	// campaign completed.
	Completed bool
	// ContactRow and Attempt identify the call that ended (Final only).
	ContactRow int64
	Attempt    int64
	// StartedAt is when the call that ended was claimed for dialling
	// (Final only; nil when it never was).
	StartedAt *time.Time
	// Abandonment is the verdict on the call that ended (Final only; both
	// nil when no person answered), stored with it.
	Abandonment Abandonment
}

// ApplyStatus applies u to attempt id in one transaction. A status for a
// final attempt is ignored; a non-final one only notes progress (and never
// goes back in sequence). A final one ends the attempt, then either queues
// the contact's next attempt (when policy says so) or makes the contact final
// with the outcome, updates the campaign's counters, and completes a running
// campaign whose contacts are all final.
func (db *DB) ApplyStatus(ctx context.Context, id int64, u StatusUpdate, policy RetryPolicy) (Applied, error) {
	if !u.Final {
		// A non-final status (most webhooks) is one statement: its WHERE
		// clause already skips a final or requeued attempt and a sequence
		// going back, so it needs no read of the attempt first.
		var answeredAt sql.NullInt64
		if u.Answered {
			answeredAt = sql.NullInt64{Int64: u.At.UnixMilli(), Valid: true}
		}
		var n int64
		err := db.inBatch(ctx, func(q sqlcdb.Querier) error {
			n = 0
			if fresh, err := recordReplayKeys(ctx, q, u); err != nil || !fresh {
				return err
			}
			var err error
			n, err = q.NoteAttemptProgress(ctx, sqlcdb.NoteAttemptProgressParams{RawStatus: str(u.Raw),
				AnsweredAt: answeredAt, AnsweredBy: str(u.AnsweredBy), Sequence: int64(u.Sequence),
				Replaces: str(u.RequestID), ProviderCallID: str(u.ProviderCallID), ID: id})
			if err != nil || n == 0 || !u.FromProvider {
				return err
			}
			// The provider reports on the call: it placed it, also when the
			// placement is not recorded yet (the report overtook it) or
			// never will be (its answer was lost). Counted once.
			campaignID, err := q.NoteExecutedByProgress(ctx, id)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			return q.AddCampaignCounts(ctx, sqlcdb.AddCampaignCountsParams{Executed: 1, ID: campaignID})
		})
		if err != nil {
			return Applied{}, fmt.Errorf("note attempt progress: %w", err)
		}
		return Applied{Ignored: n == 0}, nil
	}
	var res Applied
	err := db.inBatch(ctx, func(q sqlcdb.Querier) error {
		// Read under the attempt's row lock: two final statuses of one
		// call (a webhook on one node, reconciliation on another) both read
		// it in flight and both ended it, counting the contact twice or
		// queueing two retries (TestRaceStatusAppliedOnce). Now the second
		// reads it once the first committed, and ignores its status.
		r, err := lockAttempt(ctx, q, id)
		if err != nil {
			return notFound(err, "call attempt", id)
		}
		if fresh, err := recordReplayKeys(ctx, q, u); err != nil || !fresh {
			res = Applied{CampaignID: r.CampaignID, Ignored: true}
			return err
		}
		res = Applied{CampaignID: r.CampaignID}
		if r.State == AttemptDone || r.State == AttemptQueued {
			// Final already, or not placed (requeued): nothing to apply.
			res.Ignored = true
			return nil
		}
		at := u.At.UnixMilli()
		var answeredAt sql.NullInt64
		if u.Answered || u.Outcome == "answered" || u.Outcome == "voicemail" {
			answeredAt = sql.NullInt64{Int64: at, Valid: true}
		}
		answeredBy := u.AnsweredBy
		if answeredBy == "" && r.AnsweredBy.Valid {
			answeredBy = r.AnsweredBy.String
		}
		if u.Outcome == "answered" && u.Machine != nil && u.Machine(answeredBy) {
			// The machine verdict came in an earlier event (Telnyx, Vonage,
			// Plivo report it apart from the hang-up).
			u.Outcome = "voicemail"
		}
		verdict := decideOnFinish(r, u, at)
		n, err := q.FinishAttempt(ctx, sqlcdb.FinishAttemptParams{Outcome: str(u.Outcome), RawStatus: str(u.Raw),
			AnsweredBy: str(u.AnsweredBy), Error: str(u.Error), EndedAt: sql.NullInt64{Int64: at, Valid: true},
			DurationSeconds: sql.NullInt64{Int64: int64(u.DurationSeconds), Valid: true}, AnsweredAt: answeredAt,
			CallerID: sql.NullString{}, Replaces: str(u.RequestID), ProviderCallID: str(u.ProviderCallID),
			Compliance: evidence(u.Evidence), Abandoned: nullBool(verdict.Abandoned),
			AnswerToFirstAudioMs: nullInt(verdict.AnswerToFirstAudioMs), ID: id})
		if err != nil {
			return fmt.Errorf("finish attempt: %w", err)
		}
		if n == 0 {
			// Not dialing nor in flight any more: nothing to apply (the
			// row lock makes this the state read above; the count decides
			// all the same).
			res.Ignored = true
			return nil
		}
		res.Final, res.Outcome, res.ContactRow, res.Attempt = true, u.Outcome, r.ContactRow, r.Attempt
		res.StartedAt = optTime(r.StartedAt)
		res.Abandonment = verdict
		if verdict.Abandoned != nil && *verdict.Abandoned {
			if err := recordAbandonedNumber(ctx, q, r, answerOf(r, at)); err != nil {
				return err
			}
		}
		// A call whose placement was never recorded (the answer to the
		// place request lost or not stored) is counted by the provider's
		// final status.
		var executed int64
		if u.FromProvider && u.Outcome != "unknown" && r.Executed == 0 {
			if executed, err = q.NoteExecuted(ctx, id); err != nil {
				return fmt.Errorf("count call: %w", err)
			}
		}
		// Only the retry policy is needed here: one column, not the whole
		// campaign row.
		rcJSON, err := q.GetCampaignRetryConfig(ctx, r.CampaignID)
		if err != nil {
			return fmt.Errorf("campaign of attempt: %w", err)
		}
		var rc RetryConfig
		if err := json.Unmarshal([]byte(rcJSON), &rc); err != nil {
			return fmt.Errorf("campaign %d retry_config: %w", r.CampaignID, err)
		}
		lastCall := sql.NullInt64{Int64: at, Valid: true}
		if r.StartedAt.Valid {
			lastCall = r.StartedAt
		}
		if retry, due := policy(rc, r.Attempt, u.Outcome); retry {
			res.Retried = true
			if _, err := q.InsertAttempt(ctx, sqlcdb.InsertAttemptParams{CampaignID: r.CampaignID, ContactID: r.ContactID,
				ContactRow: r.ContactRow, Attempt: r.Attempt + 1, Priority: 0, DueAt: due.UnixMilli(),
				Timezone: r.Timezone, PhoneNumber: r.PhoneNumber}); err != nil {
				return fmt.Errorf("queue retry: %w", err)
			}
			if err := q.NoteContactAttempt(ctx, sqlcdb.NoteContactAttemptParams{Attempts: r.Attempt, LastCallAt: lastCall,
				Outcome: str(u.Outcome), ID: r.ContactID}); err != nil {
				return fmt.Errorf("note contact attempt: %w", err)
			}
			return q.AddCampaignCounts(ctx, sqlcdb.AddCampaignCountsParams{Queued: 1, Executed: executed, Outcome: u.Outcome, ID: r.CampaignID})
		}
		if _, err := q.FinalizeContact(ctx, sqlcdb.FinalizeContactParams{Outcome: str(u.Outcome), Attempts: r.Attempt,
			LastCallAt: lastCall, DurationSeconds: sql.NullInt64{Int64: int64(u.DurationSeconds), Valid: true},
			AnsweredBy: str(answeredBy), ID: r.ContactID}); err != nil {
			return fmt.Errorf("finalize contact: %w", err)
		}
		// A suppressed contact is final but not failed: nobody was called.
		var failed int64
		if u.Outcome != "answered" && u.Outcome != OutcomeSuppressed {
			failed = 1
		}
		if err := q.AddCampaignCounts(ctx, sqlcdb.AddCampaignCountsParams{Processed: 1, Failed: failed, Executed: executed, Outcome: u.Outcome, ID: r.CampaignID}); err != nil {
			return fmt.Errorf("count contact: %w", err)
		}
		res.Completed, err = db.completeIfDone(ctx, q, r.CampaignID, u.At)
		return err
	})
	return res, err
}

// recordReplayKeys records u's replay keys and reports whether the status
// is fresh: none of its keys names a request applied within its window.
func recordReplayKeys(ctx context.Context, q sqlcdb.Querier, u StatusUpdate) (bool, error) {
	now := u.At.UnixMilli()
	fresh := true
	for _, k := range u.ReplayKeys {
		h := sha256.Sum256([]byte(k))
		key := h[:16]
		if err := q.ForgetExpiredReplayKey(ctx, sqlcdb.ForgetExpiredReplayKeyParams{Key: key, ExpiresAt: now}); err != nil {
			return false, fmt.Errorf("replay key: %w", err)
		}
		n, err := q.RecordReplayKey(ctx, sqlcdb.RecordReplayKeyParams{Key: key, ExpiresAt: u.ReplayUntil.UnixMilli()})
		if err != nil {
			return false, fmt.Errorf("replay key: %w", err)
		}
		fresh = fresh && n == 1
	}
	return fresh, nil
}

// completeIfDone completes a running campaign whose contacts are all final,
// logging campaign_completed.
func (db *DB) completeIfDone(ctx context.Context, q sqlcdb.Querier, campaignID int64, now time.Time) (bool, error) {
	n, err := q.CompleteCampaign(ctx, sqlcdb.CompleteCampaignParams{CompletedAt: sql.NullInt64{Int64: now.UnixMilli(), Valid: true},
		UpdatedAt: now.UnixMilli(), ID: campaignID})
	if err != nil {
		return false, fmt.Errorf("complete campaign: %w", err)
	}
	if n == 0 {
		return false, nil
	}
	return true, addLog(ctx, q, campaignID, now, LogInfo, "campaign_completed", "every contact has a final outcome", nil)
}

// CompleteIfDone completes campaign id when it is running and every contact
// is final; it reports whether it did.
func (db *DB) CompleteIfDone(ctx context.Context, id int64) (bool, error) {
	var done bool
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		var err error
		done, err = db.completeIfDone(ctx, q, id, db.Now())
		return err
	})
	return done, err
}

// Log levels.
const (
	LogInfo    = "info"
	LogWarning = "warning"
	LogError   = "error"
)

// LogEntry is one campaign log entry.
type LogEntry struct {
	ID      int64
	TS      time.Time
	Level   string
	Event   string
	Message string
	Details map[string]any
}

func addLog(ctx context.Context, q sqlcdb.Querier, campaignID int64, ts time.Time, level, event, msg string, details map[string]any) error {
	_, err := insertLog(ctx, q, campaignID, ts, level, event, msg, details)
	return err
}

func insertLog(ctx context.Context, q sqlcdb.Querier, campaignID int64, ts time.Time, level, event, msg string, details map[string]any) (int64, error) {
	if details == nil {
		details = map[string]any{}
	}
	id, err := q.InsertLog(ctx, sqlcdb.InsertLogParams{CampaignID: campaignID, Ts: ts.UnixMilli(), Level: level,
		Event: event, Message: msg, Details: mustJSON(details)})
	if err != nil {
		return 0, fmt.Errorf("insert log: %w", err)
	}
	return id, nil
}

// AddLog appends a log entry to a campaign and returns its id.
func (db *DB) AddLog(ctx context.Context, campaignID int64, level, event, msg string, details map[string]any) (int64, error) {
	return insertLog(ctx, db.wq, campaignID, db.Now(), level, event, msg, details)
}

// UpdateLog rewrites entry id's time, message and details (for aggregated
// events such as call_initiation_failed).
func (db *DB) UpdateLog(ctx context.Context, id int64, msg string, details map[string]any) error {
	if err := db.wq.UpdateLog(ctx, sqlcdb.UpdateLogParams{Ts: db.Now().UnixMilli(), Message: msg, Details: mustJSON(details), ID: id}); err != nil {
		return fmt.Errorf("update log: %w", err)
	}
	return nil
}

func logFromRow(r sqlcdb.CampaignLog) LogEntry {
	e := LogEntry{ID: r.ID, TS: fromMS(r.Ts), Level: r.Level, Event: r.Event, Message: r.Message}
	if err := json.Unmarshal([]byte(r.Details), &e.Details); err != nil || e.Details == nil {
		e.Details = map[string]any{}
	}
	return e
}

// RecentLogs returns the campaign's newest 50 entries, oldest first.
func (db *DB) RecentLogs(ctx context.Context, campaignID int64) ([]LogEntry, error) {
	rows, err := db.rq.RecentLogs(ctx, campaignID)
	if err != nil {
		return nil, fmt.Errorf("recent logs: %w", err)
	}
	out := make([]LogEntry, len(rows))
	for i, r := range rows {
		out[i] = logFromRow(r)
	}
	return out, nil
}

// ListLogs returns up to limit entries newer than after, oldest first.
func (db *DB) ListLogs(ctx context.Context, campaignID int64, after time.Time, limit int) ([]LogEntry, error) {
	rows, err := db.rq.ListLogs(ctx, sqlcdb.ListLogsParams{CampaignID: campaignID, Ts: after.UnixMilli(), Limit: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("list logs: %w", err)
	}
	out := make([]LogEntry, len(rows))
	for i, r := range rows {
		out[i] = logFromRow(r)
	}
	return out, nil
}
