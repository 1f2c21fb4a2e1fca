package dialer

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Webhook errors the web layer maps to statuses.
var (
	// ErrForbidden: bad token, bad signature, or an attempt that does not
	// belong to the provider in the URL. Answered 403; nothing changes.
	ErrForbidden = errors.New("forbidden")
	// ErrMalformed: an authentic (or unsigned) webhook whose payload the
	// carrier cannot read. Answered 400; nothing changes.
	ErrMalformed = errors.New("malformed webhook")
)

// Token returns the webhook token of attempt id: an HMAC of the id with the
// server secret, URL-safe.
func (e *Engine) Token(attemptID int64) string {
	m := hmac.New(sha256.New, e.cfg.TokenKey)
	m.Write([]byte("attempt:" + strconv.FormatInt(attemptID, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// ValidToken reports whether token is attempt id's token (constant time).
func (e *Engine) ValidToken(attemptID int64, token string) bool {
	return hmac.Equal([]byte(e.Token(attemptID)), []byte(token))
}

// callbackURL is the URL of kind ("answer" or "status") for an attempt.
func (e *Engine) callbackURL(provider, kind string, attemptID int64) string {
	return fmt.Sprintf("%s/api/v1/telephony/%s/%s/%d?t=%s", e.cfg.PublicURL, provider, kind, attemptID, e.Token(attemptID))
}

// attemptOf returns attempt id (from the attempts this process placed, else
// the database) and its campaign.
func (e *Engine) attemptOf(ctx context.Context, id int64) (*store.Attempt, *campaignInfo, error) {
	a := e.live.get(id)
	if a == nil {
		var err error
		if a, err = e.db.GetAttempt(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	c, err := e.campaignInfo(ctx, a.CampaignID)
	if err != nil {
		return nil, nil, err
	}
	return a, c, nil
}

// webhookTarget loads what a webhook for attempt id needs, checking its
// token and that the attempt's configuration uses provider.
func (e *Engine) webhookTarget(ctx context.Context, provider string, attemptID int64, token string) (*store.Attempt, *campaignInfo, carrier.Carrier, error) {
	if !e.ValidToken(attemptID, token) {
		return nil, nil, nil, ErrForbidden
	}
	a, c, err := e.attemptOf(ctx, attemptID)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return nil, nil, nil, ErrForbidden
	}
	if err != nil {
		return nil, nil, nil, err
	}
	car, spec, err := e.carrierFor(ctx, c.orgID, c.configID)
	if err != nil {
		return nil, nil, nil, err
	}
	if spec.Provider != provider {
		return nil, nil, nil, ErrForbidden
	}
	return a, c, car, nil
}

// HandleStatus verifies and applies a status webhook for attempt id. A bad
// token or signature is ErrForbidden and changes nothing; duplicates and
// late non-final events are accepted and ignored.
func (e *Engine) HandleStatus(ctx context.Context, provider string, attemptID int64, token string, w carrier.Webhook) error {
	ignored, err := e.handleStatus(ctx, provider, attemptID, token, w)
	e.observeWebhook(ctx, provider, ignored, err)
	return err
}

// handleStatus is HandleStatus; ignored reports a duplicate or late event.
func (e *Engine) handleStatus(ctx context.Context, provider string, attemptID int64, token string, w carrier.Webhook) (ignored bool, err error) {
	a, c, car, err := e.webhookTarget(ctx, provider, attemptID, token)
	if err != nil {
		return false, err
	}
	st, err := car.ParseStatus(w)
	if errors.Is(err, carrier.ErrForged) {
		return false, ErrForbidden
	}
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if st.ProviderCallID != "" && a.ProviderCallID != nil && *a.ProviderCallID != st.ProviderCallID &&
		(st.RequestID == "" || *a.ProviderCallID != st.RequestID) {
		return false, ErrForbidden // a signed event of another call sent to this attempt's URL
	}
	res, err := e.apply(ctx, a.CampaignID, attemptID, st, "", fromProvider, nil)
	if err != nil || res.Ignored {
		return res.Ignored, err
	}
	callID := st.ProviderCallID
	if callID == "" && a.ProviderCallID != nil {
		callID = *a.ProviderCallID
	}
	switch {
	case st.NeedsAnswer && !res.Final:
		e.answerByCommand(ctx, car, c, a, callID)
	case st.HangUp && !res.Final:
		if err := car.HangUp(ctx, callID); err != nil {
			e.log.Warn("dialer: hang up after the answer", slog.Int64("attempt_id", attemptID), slog.String("error", err.Error()))
		}
	}
	return false, nil
}

// answerByCommand gives the provider the answer of an answered call as REST
// commands (carrier.Answerer, Telnyx). When that fails the call is hung up
// rather than left silent until the callee gives up.
func (e *Engine) answerByCommand(ctx context.Context, car carrier.Carrier, c *campaignInfo, a *store.Attempt, callID string) {
	ans, ok := car.(carrier.Answerer)
	if !ok || callID == "" {
		return
	}
	answer, err := e.answerFor(ctx, c, a)
	if err == nil {
		err = ans.Answered(ctx, callID, answer)
	}
	if err == nil {
		return
	}
	e.log.Warn("dialer: answer the call", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
	if err := car.HangUp(ctx, callID); err != nil {
		e.log.Warn("dialer: hang up an unanswerable call", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
	}
}

// Answer verifies an answer webhook and returns the markup that tells the
// provider what to do with the answered call (API.md 6). A status event
// sent to the answer URL (carrier.ErrStatusEvent: Vobiz's Ring and Hangup)
// is applied as a status webhook and answered with no markup (ct "").
func (e *Engine) Answer(ctx context.Context, provider string, attemptID int64, token string, w carrier.Webhook) (ct string, body []byte, err error) {
	ignored, counted := false, false // a status event is counted by HandleStatus
	defer func() {
		if !counted {
			e.observeWebhook(ctx, provider, ignored, err)
		}
	}()
	a, c, car, err := e.webhookTarget(ctx, provider, attemptID, token)
	if err != nil {
		return "", nil, err
	}
	answeredBy, err := car.VerifyAnswer(w)
	if errors.Is(err, carrier.ErrStatusEvent) {
		// A status event at the answer URL: applied as one, answered with
		// no markup (ct "").
		counted = true
		return "", nil, e.HandleStatus(ctx, provider, attemptID, token, w)
	}
	if errors.Is(err, carrier.ErrForged) {
		return "", nil, ErrForbidden
	}
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	res, err := e.apply(ctx, a.CampaignID, attemptID, carrier.Status{Raw: "answered", Answered: true, AnsweredBy: answeredBy, Sequence: int(a.Sequence)}, "", fromProvider, nil)
	if err != nil {
		return "", nil, err
	}
	ignored = res.Ignored
	ans, err := e.answerFor(ctx, c, a)
	if err != nil {
		return "", nil, err
	}
	ct, body = car.AnswerMarkup(ans)
	return ct, body, nil
}
