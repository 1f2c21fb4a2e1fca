package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Campaign operations moved by TransitionCampaign.
const (
	OpStart  = "start"
	OpPause  = "pause"
	OpResume = "resume"
	OpCancel = "cancel"
)

var opNeeds = map[string]string{
	OpStart:  "a draft or paused campaign",
	OpPause:  "a running campaign",
	OpResume: "a paused campaign",
	OpCancel: "a draft, running or paused campaign",
}

var opLog = map[string][2]string{
	OpStart:  {"campaign_started", "campaign started"},
	OpPause:  {"campaign_paused", "campaign paused; calls in flight finish normally"},
	OpResume: {"campaign_resumed", "campaign resumed"},
	OpCancel: {"campaign_cancelled", "campaign cancelled; calls in flight finish normally"},
}

// TransitionCampaign applies op to campaign id of organization orgID and logs
// it, in one transaction. A state that does not allow op is ECONFLICT with a
// message naming the current state and what op needs. Starting or resuming
// opens a fresh circuit-breaker window.
func (db *DB) TransitionCampaign(ctx context.Context, orgID, id int64, op string) (*Campaign, error) {
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// The state is read under the campaign's row lock, so the log's
		// from_state and a refusal's message name the state op met: a cancel
		// read a draft, a start committed meanwhile, and the cancel was
		// logged from draft; a pause refused for a campaign "running" that
		// another node had just cancelled (TestRaceTransitions). The
		// conditional UPDATEs decided correctly already.
		if err := lockCampaign(ctx, q, id); err != nil {
			return err
		}
		r, err := q.GetCampaign(ctx, sqlcdb.GetCampaignParams{ID: id, OrganizationID: orgID})
		if err != nil {
			return notFound(err, "campaign", id)
		}
		now := db.Now()
		ms := now.UnixMilli()
		var n int64
		switch op {
		case OpStart:
			n, err = q.StartCampaign(ctx, sqlcdb.StartCampaignParams{StartedAt: sql.NullInt64{Int64: ms, Valid: true},
				BreakerResetAt: ms, UpdatedAt: ms, ID: id})
		case OpPause:
			n, err = q.MoveCampaignState(ctx, sqlcdb.MoveCampaignStateParams{ToState: StatePaused, Now: ms, ID: id, FromState: StateRunning})
		case OpResume:
			n, err = q.ResumeCampaign(ctx, sqlcdb.ResumeCampaignParams{BreakerResetAt: ms, UpdatedAt: ms, ID: id})
		case OpCancel:
			n, err = q.CancelCampaign(ctx, sqlcdb.CancelCampaignParams{CancelledAt: sql.NullInt64{Int64: ms, Valid: true}, UpdatedAt: ms, ID: id})
		default:
			return fmt.Errorf("unknown campaign operation %q", op)
		}
		if err != nil {
			return fmt.Errorf("%s campaign: %w", op, err)
		}
		if n == 0 {
			return Errorf(ECONFLICT, "campaign %d is %s; %s needs %s", id, r.State, op, opNeeds[op])
		}
		l := opLog[op]
		return addLog(ctx, q, id, now, LogInfo, l[0], l[1], map[string]any{"from_state": r.State})
	})
	if err != nil {
		return nil, err
	}
	return db.GetCampaign(ctx, orgID, id)
}

// PauseCampaignFor pauses running campaign id on the dialer's own decision
// (circuit breaker, refused credentials), logging event as a warning. With
// a non-zero since (when the evidence was gathered, e.g. the provider
// request answered 401 was sent), a campaign resumed after since is left
// running: the user resumed it on newer grounds (fixed credentials). It
// reports false when the campaign was not paused by this call.
func (db *DB) PauseCampaignFor(ctx context.Context, id int64, since time.Time, event, msg string, details map[string]any) (bool, error) {
	return db.moveFor(ctx, id, StatePaused, since, LogWarning, event, msg, details)
}

// FailCampaign moves running campaign id to failed, logging campaign_failed.
func (db *DB) FailCampaign(ctx context.Context, id int64, msg string, details map[string]any) (bool, error) {
	return db.moveFor(ctx, id, StateFailed, time.Time{}, LogError, "campaign_failed", msg, details)
}

func (db *DB) moveFor(ctx context.Context, id int64, to string, since time.Time, level, event, msg string, details map[string]any) (bool, error) {
	var moved bool
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.Now()
		n, err := q.MoveCampaignState(ctx, sqlcdb.MoveCampaignStateParams{ToState: to, Now: now.UnixMilli(), ID: id,
			FromState: StateRunning, Since: sql.NullInt64{Int64: since.UnixMilli(), Valid: !since.IsZero()}})
		if err != nil {
			return fmt.Errorf("move campaign to %s: %w", to, err)
		}
		if moved = n == 1; !moved {
			return nil
		}
		return addLog(ctx, q, id, now, level, event, msg, details)
	})
	return moved, err
}

// SetNextDialAt records when a running campaign waiting for its calling
// window dials next (nil: not waiting).
func (db *DB) SetNextDialAt(ctx context.Context, id int64, t *time.Time) error {
	if err := db.wq.SetNextDialAt(ctx, sqlcdb.SetNextDialAtParams{NextDialAt: nullMS(t), ID: id}); err != nil {
		return fmt.Errorf("set next dial time: %w", err)
	}
	return nil
}
