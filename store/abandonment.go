package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Abandoned calls (API.md 19). The voice agent reports what happened on its
// side of an answered call (AgentEvent); when the call ends, ApplyStatus
// decides, in the transaction that ends it, whether a person answered and
// was left in silence (DecideAbandonment); AbandonedRate counts the
// verdicts over a window.

// The voice agent's events (API.md 19).
const (
	AgentConnected  = "connected"
	AgentFirstAudio = "first_audio"
	AgentFailed     = "failed"
)

// DefaultAbandonAfter is the compliance policy's default
// abandonment.abandon_after_ms: a person who hears nothing for longer after
// the answer was abandoned.
const DefaultAbandonAfter = 2000 * time.Millisecond

// PolicyAbandonAfter is the CallAudio.AbandonAfter (and
// StatusUpdate.AbandonAfter) of a policy's abandon_after_ms. Zero there
// means DefaultAbandonAfter, so a policy of 0 ms is passed as a
// nanosecond: the verdict compares whole milliseconds, so only audio at
// the answer (0 ms) is in time, as 0 ms says.
func PolicyAbandonAfter(ms int) time.Duration {
	if ms <= 0 {
		return time.Nanosecond
	}
	return time.Duration(ms) * time.Millisecond
}

// CallAudio is what DecideAbandonment looks at when a call ends.
type CallAudio struct {
	// PersonAnswered: the outcome is answered and answered_by is not a
	// machine's verdict (every answered call with detection off).
	PersonAnswered bool
	// AnsweredAt is when the call was answered.
	AnsweredAt time.Time
	// FirstAudioAt and FailedAt are the arrival times of the agent's first
	// first_audio and failed reports, nil when none arrived (yet).
	FirstAudioAt *time.Time
	FailedAt     *time.Time
	// AudioAtAnswer: the answer had no agent and spoke the workflow's
	// greeting (API.md 6), audio from the answer on.
	AudioAtAnswer bool
	// AbandonAfter is the policy's abandon_after_ms; 0 means
	// DefaultAbandonAfter.
	AbandonAfter time.Duration
}

// Abandonment is the verdict on one call: both nil when no person answered.
type Abandonment struct {
	// Abandoned: no first_audio came within the policy's abandon_after_ms of
	// the answer (none at all included), or the agent reported failed before
	// any first_audio.
	Abandoned *bool
	// AnswerToFirstAudioMs is the time from the answer to the first
	// first_audio's arrival, 0 when it arrived before the answer was
	// recorded (the answer webhook can trail the agent); nil when none came.
	AnswerToFirstAudioMs *int64
}

// DecideAbandonment applies API.md 19 to a call that ends. The window is
// inclusive: first audio exactly abandon_after_ms after the answer is in
// time. A failed report after the first audio does not abandon the call:
// the person heard the agent.
func DecideAbandonment(c CallAudio) Abandonment {
	if !c.PersonAnswered {
		return Abandonment{}
	}
	no, yes, zero := false, true, int64(0)
	if c.AudioAtAnswer {
		return Abandonment{Abandoned: &no, AnswerToFirstAudioMs: &zero}
	}
	limit := c.AbandonAfter
	if limit <= 0 {
		limit = DefaultAbandonAfter
	}
	var v Abandonment
	if c.FirstAudioAt != nil {
		ms := audioDelayMS(c.AnsweredAt, *c.FirstAudioAt)
		v.AnswerToFirstAudioMs = &ms
	}
	failedFirst := c.FailedAt != nil && (c.FirstAudioAt == nil || c.FailedAt.Before(*c.FirstAudioAt))
	inTime := v.AnswerToFirstAudioMs != nil && *v.AnswerToFirstAudioMs <= limit.Milliseconds()
	v.Abandoned = &no
	if failedFirst || !inTime {
		v.Abandoned = &yes
	}
	return v
}

// audioDelayMS is answer to first audio in milliseconds, never negative.
func audioDelayMS(answered, audio time.Time) int64 {
	return max(0, audio.Sub(answered).Milliseconds())
}

// AgentEventResult tells what AgentEvent did.
type AgentEventResult struct {
	CampaignID int64
	// First: this was the attempt's first report of the event, now
	// recorded; false for a repeat, which changed nothing.
	First bool
	// LateAnswerToFirstAudioMs is set when a first first_audio arrived
	// after the call had ended with a person's answer: the call's
	// answer_to_first_audio_ms, now recorded (its abandoned verdict stays).
	LateAnswerToFirstAudioMs *int64
}

// AgentEvent records the voice agent's report of event (AgentConnected,
// AgentFirstAudio or AgentFailed) for attempt id, arrived at arrived, with
// the time the agent reported (nil when it gave none; recorded, not
// trusted). Only the first report of each event counts; a repeat changes
// nothing. An event may come before the answer is recorded, or after the
// call ended: a first_audio after the end records the call's
// answer_to_first_audio_ms when a person answered and none was recorded,
// and leaves its abandoned verdict as it is. An unknown attempt is
// ENOTFOUND, an unknown event EINVALID.
func (db *DB) AgentEvent(ctx context.Context, id int64, event string, arrived time.Time, reported *time.Time) (AgentEventResult, error) {
	if event != AgentConnected && event != AgentFirstAudio && event != AgentFailed {
		return AgentEventResult{}, Errorf(EINVALID, "unknown agent event %q", event)
	}
	var res AgentEventResult
	err := db.inBatch(ctx, func(q sqlcdb.Querier) error {
		res = AgentEventResult{}
		r, err := lockAttempt(ctx, q, id)
		if err != nil {
			return notFound(err, "call attempt", id)
		}
		res.CampaignID = r.CampaignID
		at := sql.NullInt64{Int64: arrived.UnixMilli(), Valid: true}
		rep := nullMS(reported)
		p := sqlcdb.RecordAgentEventParams{ID: id}
		switch event {
		case AgentConnected:
			if r.AgentConnectedAt.Valid {
				return nil
			}
			p.ConnectedAt, p.ConnectedReportedAt = at, rep
		case AgentFirstAudio:
			if r.AgentFirstAudioAt.Valid {
				return nil
			}
			p.FirstAudioAt, p.FirstAudioReportedAt = at, rep
			if r.State == AttemptDone && r.Abandoned.Valid && !r.AnswerToFirstAudioMs.Valid && r.AnsweredAt.Valid {
				ms := audioDelayMS(fromMS(r.AnsweredAt.Int64), arrived)
				p.LateMs = sql.NullInt64{Int64: ms, Valid: true}
				res.LateAnswerToFirstAudioMs = &ms
			}
		case AgentFailed:
			if r.AgentFailedAt.Valid {
				return nil
			}
			p.FailedAt, p.FailedReportedAt = at, rep
		}
		if _, err := q.RecordAgentEvent(ctx, p); err != nil {
			return fmt.Errorf("record agent event: %w", err)
		}
		res.First = true
		return nil
	})
	if err != nil {
		return AgentEventResult{}, err
	}
	return res, nil
}

// AbandonedRate counts the calls answered by a person since since, and how
// many of them were abandoned (API.md 19), of campaign campaignID of
// organization org, or of every campaign of org when campaignID is 0. A
// campaign of another organization counts nothing. One search of the
// call_attempts_abandonment index per campaign: cheap enough for every
// snapshot.
func (db *DB) AbandonedRate(ctx context.Context, org, campaignID int64, since time.Time) (abandoned, answered int64, err error) {
	s := sql.NullInt64{Int64: since.UnixMilli(), Valid: true}
	if campaignID == 0 {
		r, err := db.rq.AbandonedCountsOfOrganization(ctx, sqlcdb.AbandonedCountsOfOrganizationParams{OrganizationID: org, Since: s})
		if err != nil {
			return 0, 0, fmt.Errorf("abandoned calls of organization %d: %w", org, err)
		}
		return r.Abandoned, r.Answered, nil
	}
	r, err := db.rq.AbandonedCountsOfCampaign(ctx, sqlcdb.AbandonedCountsOfCampaignParams{CampaignID: campaignID, OrganizationID: org, Since: s})
	if err != nil {
		return 0, 0, fmt.Errorf("abandoned calls of campaign %d: %w", campaignID, err)
	}
	return r.Abandoned, r.Answered, nil
}

// MinAnsweredForRate is how many person-answered calls a window needs
// before its abandonment rate is shown (API.md 19: null below 10).
const MinAnsweredForRate = 10

// AbandonedShare is abandoned / answered, nil when answered is below
// MinAnsweredForRate.
func AbandonedShare(abandoned, answered int64) *float64 {
	if answered < MinAnsweredForRate {
		return nil
	}
	r := float64(abandoned) / float64(answered)
	return &r
}

// decideOnFinish is DecideAbandonment for attempt r (read under its row
// lock) ending with final status u at at (unix ms): a person answered when
// the outcome, after the machine verdicts, is answered (ApplyStatus stores
// voicemail for a machine's answer when verdicts are looked at; without
// them, every answered call); the answer is the recorded one, else the
// final status's.
func decideOnFinish(r sqlcdb.CallAttempt, u StatusUpdate, at int64) Abandonment {
	return DecideAbandonment(CallAudio{
		PersonAnswered: u.Outcome == "answered",
		AnsweredAt:     fromMS(answerOf(r, at)),
		FirstAudioAt:   optTime(r.AgentFirstAudioAt),
		FailedAt:       optTime(r.AgentFailedAt),
		AudioAtAnswer:  u.AudioAtAnswer,
		AbandonAfter:   u.AbandonAfter,
	})
}

// answerOf is attempt r's recorded answer (unix ms), else at, the final
// status's time.
func answerOf(r sqlcdb.CallAttempt, at int64) int64 {
	if r.AnsweredAt.Valid {
		return r.AnsweredAt.Int64
	}
	return at
}

func nullBool(b *bool) sql.NullInt64 {
	if b == nil {
		return sql.NullInt64{}
	}
	if *b {
		return sql.NullInt64{Int64: 1, Valid: true}
	}
	return sql.NullInt64{Int64: 0, Valid: true}
}

func nullInt(v *int64) sql.NullInt64 {
	if v == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *v, Valid: true}
}

func optBool(v sql.NullInt64) *bool {
	if !v.Valid {
		return nil
	}
	b := v.Int64 == 1
	return &b
}
