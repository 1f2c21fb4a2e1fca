package dialer

import (
	"context"
	"log/slog"
	"time"

	"github.com/outdial/outdial/store"
)

// Abandoned calls (API.md 19): the voice agent reports its events
// (AgentEvent); the final status of every call carries what the store
// needs to decide whether a person answered and heard nothing
// (abandonmentInputs, folded into the status's transaction); the rates go
// to the snapshots and the diagnosis (AbandonedRates).

// AbandonedRateWindow is the window of abandoned_rate_24h.
const AbandonedRateWindow = 24 * time.Hour

// AbandonedRates is abandoned_rate_24h: abandoned / answered by a person
// over the last 24 h, of a campaign and of its organization; nil below
// store.MinAnsweredForRate such calls.
type AbandonedRates struct {
	Campaign     *float64
	Organization *float64
}

// AbandonedRates returns campaign campaignID's and organization org's
// abandoned_rate_24h at the engine's now.
func (e *Engine) AbandonedRates(ctx context.Context, org, campaignID int64) (AbandonedRates, error) {
	since := e.now().Add(-AbandonedRateWindow)
	ab, an, err := e.db.AbandonedRate(ctx, org, campaignID, since)
	if err != nil {
		return AbandonedRates{}, err
	}
	oab, oan, err := e.db.AbandonedRate(ctx, org, 0, since)
	if err != nil {
		return AbandonedRates{}, err
	}
	return AbandonedRates{Campaign: store.AbandonedShare(ab, an), Organization: store.AbandonedShare(oab, oan)}, nil
}

// abandonAfter is how long a person who answered a call of organization
// org may wait for the agent's first audio before the call counts as
// abandoned: the (cached) compliance policy's abandonment.abandon_after_ms,
// whether the policy is enabled or not (the figures are measured either
// way); the default when the policy cannot be read.
func (e *Engine) abandonAfter(ctx context.Context, org int64) time.Duration {
	if org == 0 {
		return store.DefaultAbandonAfter
	}
	p, err := e.policy(ctx, org)
	if err != nil {
		e.log.Warn("dialer: compliance policy of a final status", slog.Int64("organization_id", org), slog.String("error", err.Error()))
		return store.DefaultAbandonAfter
	}
	return store.PolicyAbandonAfter(p.Abandonment.AbandonAfterMs)
}

// abandonmentInputs returns what a final status of campaign campaignID's
// call carries for the abandonment verdict: whether its answer spoke the
// built-in greeting (no agent: audio at the answer) and the policy's
// abandon_after_ms. Both come from caches on the hot path (the campaign's
// info, the policy); when the campaign cannot be read, the call is judged
// as an agent's.
func (e *Engine) abandonmentInputs(ctx context.Context, campaignID int64) (audioAtAnswer bool, after time.Duration) {
	ci, err := e.campaignInfo(ctx, campaignID)
	if err != nil {
		e.log.Warn("dialer: campaign of a final status", slog.Int64("campaign_id", campaignID), slog.String("error", err.Error()))
		return false, e.abandonAfter(ctx, 0)
	}
	return e.agentURL(ci) == "", e.abandonAfter(ctx, ci.orgID)
}

// AgentEvent records the voice agent's report of event (store.AgentConnected,
// AgentFirstAudio or AgentFailed) for attempt attemptID, arrived now, with
// the time the agent gave (nil when none; recorded, not trusted). The first
// report of each event counts; a repeat changes nothing. A first_audio that
// arrives after the call ended records its answer_to_first_audio_ms (and
// the histogram); it does not change whether the call was abandoned. An
// unknown attempt is store's ENOTFOUND. The caller checked the token.
func (e *Engine) AgentEvent(ctx context.Context, attemptID int64, event string, reported *time.Time) error {
	res, err := e.db.AgentEvent(ctx, attemptID, event, e.now(), reported)
	if err != nil {
		return err
	}
	if res.LateAnswerToFirstAudioMs != nil {
		e.met.AnswerToFirstAudio(time.Duration(*res.LateAnswerToFirstAudioMs) * time.Millisecond)
	}
	return nil
}
