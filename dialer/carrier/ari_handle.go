package carrier

// Applying ARI events to the calls followed, and the answer: when a call
// enters our Stasis application the dialer is asked what to do with it
// (EventSink.Answer); with an agent URL the call is bridged with an
// externalMedia channel to the websocket client ws_client_name, else it is
// hung up at once (ARI has no text-to-speech: the greeting is not spoken,
// and the call is recorded answered).

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// handle applies one event. State changes happen under a.mu; what they
// cause (statuses to the sink, the answer, hang-ups) runs after, in order.
func (a *ari) handle(ctx context.Context, ev *ariEvent) {
	var acts []func()
	a.mu.Lock()
	switch ev.Type {
	case "ChannelStateChange", "StasisStart":
		c, role := a.eventCall(ev.Channel)
		if c == nil || role != ariOwn {
			break
		}
		switch {
		case ev.Type == "StasisStart":
			a.answeredLocked(c, a.eventTime(ev.Timestamp), true, &acts)
		case ev.Channel.State == "Up":
			a.answeredLocked(c, a.eventTime(ev.Timestamp), false, &acts)
		case ev.Channel.State == "Ringing" || ev.Channel.State == "Ring":
			a.ringingLocked(c, &acts)
		}
	case "Dial":
		if c, role := a.eventCall(ev.Peer); c != nil && role == ariOwn {
			switch ev.DialStatus {
			case "ANSWER":
				a.answeredLocked(c, a.eventTime(ev.Timestamp), false, &acts)
			case "RINGING":
				a.ringingLocked(c, &acts)
			default:
				if ariDialOutcomes[ev.DialStatus] != "" {
					c.dialStatus = ev.DialStatus
				}
			}
		} else if c, role := a.eventCall(ev.Caller); c != nil && role == ariFar && ariDialOutcomes[ev.DialStatus] != "" {
			c.farDialStatus = ev.DialStatus
		}
	case "ChannelDestroyed":
		c, role := a.eventCall(ev.Channel)
		if c == nil {
			break
		}
		switch role {
		case ariOwn:
			c.ownGone, c.ownCause, c.endedAt = true, ev.Cause, a.eventTime(ev.Timestamp)
			if c.decided() {
				a.finishEventLocked(ctx, c, &acts)
			} else {
				c.grace = a.afterLocked(a.timing.farGrace, func() { a.graceOver(ctx, c) })
			}
		case ariFar:
			c.farGone, c.farCause = true, ev.Cause
			if c.ownGone {
				a.finishEventLocked(ctx, c, &acts)
			}
		case ariMedia:
			// The agent's side ended: so does the call.
			if c.mediaID != "" && !c.ownGone {
				id := c.id
				acts = append(acts, func() { a.hangUpChannel(ctx, id) })
			}
		}
	}
	a.mu.Unlock()
	ariRun(acts)
}

// eventCall returns the call followed that channel ch belongs to and its
// role, following it from now on when it is ours but was not followed yet
// (after a restart, or events of a call placed by an earlier carrier of the
// same configuration). A finished call is nil. a.mu is held.
func (a *ari) eventCall(ch *ariChannel) (*ariCall, ariRole) {
	if ch == nil {
		return nil, ariNone
	}
	own, attemptID, role := a.classify(ch.ID)
	if role == ariNone {
		return nil, ariNone
	}
	var c *ariCall
	if role == ariMedia {
		c = a.calls[own] // a media channel never starts following a call
	} else {
		c = a.followLocked(own, attemptID, role == ariFar || len(ch.Name) > 6 && ch.Name[:6] == "Local/")
	}
	if c == nil || c.finished {
		return nil, ariNone
	}
	c.placingElsewhere = false // it shows
	return c, role
}

// answeredLocked notes that c was answered at t, reporting it once, and
// with start begins the answer (once). a.mu is held.
func (a *ari) answeredLocked(c *ariCall, t time.Time, start bool, acts *[]func()) {
	sink, ctx := a.sink, a.sinkC
	if !c.answered {
		c.answered, c.answeredAt = true, t
		st := Status{ProviderCallID: c.id, Raw: "answered", Answered: true}
		if sink != nil {
			*acts = append(*acts, func() { sink.Status(ctx, c.attemptID, st) })
		}
	}
	if start && !c.answering && sink != nil {
		c.answering = true
		a.work.Add(1)
		*acts = append(*acts, func() {
			go func() {
				defer a.work.Done()
				a.answer(ctx, sink, c)
			}()
		})
	}
}

// ringingLocked reports once that c rings. a.mu is held.
func (a *ari) ringingLocked(c *ariCall, acts *[]func()) {
	if c.ringing || c.answered || a.sink == nil {
		return
	}
	c.ringing = true
	sink, ctx := a.sink, a.sinkC
	st := Status{ProviderCallID: c.id, Raw: "ringing"}
	*acts = append(*acts, func() { sink.Status(ctx, c.attemptID, st) })
}

// finishEventLocked finishes c from its events: its final status goes to
// the sink, then its media channel and bridge are removed. a.mu is held.
func (a *ari) finishEventLocked(ctx context.Context, c *ariCall, acts *[]func()) {
	a.finishLocked(c)
	st, sink := c.finalStatus(), a.sink
	media, bridge := c.mediaID, c.bridgeID
	*acts = append(*acts, func() {
		if sink != nil {
			sink.Status(ctx, c.attemptID, st)
		}
		a.cleanup(ctx, media, bridge)
	})
}

// graceOver finishes c when its far half did not come within farGrace.
func (a *ari) graceOver(ctx context.Context, c *ariCall) {
	var acts []func()
	a.mu.Lock()
	c.grace = nil
	if !c.finished {
		a.finishEventLocked(ctx, c, &acts)
	}
	a.mu.Unlock()
	ariRun(acts)
}

// answer does what the dialer says with the answered call c: with an agent
// URL (and ws_client_name set) an externalMedia channel to the websocket
// client ws_client_name, carrying the attempt id, the contact's context, the
// agent URL, the webhook token and the opt-out and agent events URLs as
// channel variables (see ariMediaVariables), and a mixing bridge joining it
// with the call;
// otherwise, or when a step fails, the call is hung up.
func (a *ari) answer(ctx context.Context, sink EventSink, c *ariCall) {
	ans, err := sink.Answer(ctx, c.attemptID)
	if err != nil || ans.AgentURL == "" || a.wsClient == "" {
		a.hangUpChannel(ctx, c.id)
		return
	}
	mediaID, bridgeID := c.id+ariMediaSuffix, c.id+ariBridgeSuffix
	if _, err := a.do(ctx, http.MethodPost, a.url("channels/externalMedia", a.mediaQuery(mediaID)),
		map[string]any{"variables": ariMediaVariables(c.attemptID, ans)}, nil); err != nil {
		a.hangUpChannel(ctx, c.id)
		return
	}
	if !a.recordMedia(c, &c.mediaID, mediaID) {
		a.cleanup(ctx, mediaID, "")
		return
	}
	q := url.Values{"type": {"mixing"}, "bridgeId": {bridgeID}, "name": {"outdial-" + strconv.FormatInt(c.attemptID, 10)}}
	if _, err := a.do(ctx, http.MethodPost, a.url("bridges", q), nil, nil); err != nil {
		a.hangUpChannel(ctx, c.id)
		return
	}
	if !a.recordMedia(c, &c.bridgeID, bridgeID) {
		a.cleanup(ctx, "", bridgeID)
		return
	}
	add := url.Values{"channel": {c.id + "," + mediaID}}
	if _, err := a.do(ctx, http.MethodPost, a.url("bridges/"+url.PathEscape(bridgeID)+"/addChannel", add), nil, nil); err != nil {
		a.hangUpChannel(ctx, c.id)
	}
}

// mediaQuery is the externalMedia request's query: our application, the
// media channel's id, the websocket client configuration (websocket_client.conf)
// as external_host, ulaw, transport websocket with encapsulation none (the
// only one websocket takes), Asterisk connecting out (connection_type
// client) and audio both ways.
func (a *ari) mediaQuery(mediaID string) url.Values {
	return url.Values{
		"app":             {a.app},
		"channelId":       {mediaID},
		"external_host":   {a.wsClient},
		"format":          {"ulaw"},
		"transport":       {"websocket"},
		"encapsulation":   {"none"},
		"connection_type": {"client"},
		"direction":       {"both"},
	}
}

// ariMediaVariables are the media channel's variables: OUTDIAL_ATTEMPT_ID,
// OUTDIAL_CONTEXT (the contact's initial context as a JSON object, whole:
// being one variable, none of its keys can stand in for the others),
// OUTDIAL_AGENT_URL, and OUTDIAL_OPT_OUT_TOKEN, OUTDIAL_TOKEN (the same
// webhook token), OUTDIAL_OPT_OUT_URL and OUTDIAL_AGENT_EVENTS_URL when the
// answer has them (the websocket client configuration decides where
// Asterisk connects; newer Asterisk versions report the channel variables
// to the agent in their MEDIA_START message).
func ariMediaVariables(attemptID int64, ans Answer) map[string]string {
	ctxJSON, _ := json.Marshal(ans.Context) // a map of strings always encodes
	if ans.Context == nil {
		ctxJSON = []byte("{}")
	}
	v := map[string]string{
		ariVarAttempt: strconv.FormatInt(attemptID, 10),
		ariVarContext: string(ctxJSON),
		ariVarAgent:   ans.AgentURL,
	}
	if ans.OptOutToken != "" {
		v[ariVarOptOutToken] = ans.OptOutToken
	}
	if ans.OptOutURL != "" {
		v[ariVarOptOutURL] = ans.OptOutURL
	}
	if ans.OptOutToken != "" {
		v[ariVarToken] = ans.OptOutToken
	}
	if ans.AgentEventsURL != "" {
		v[ariVarAgentEventsURL] = ans.AgentEventsURL
	}
	return v
}

// recordMedia stores id in *field (c's media channel or bridge) unless c
// finished meanwhile, in which case the caller removes it itself.
func (a *ari) recordMedia(c *ariCall, field *string, id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c.finished {
		return false
	}
	*field = id
	return true
}

// hangUpChannel hangs channel id up (a channel already gone is fine).
func (a *ari) hangUpChannel(ctx context.Context, id string) {
	_, _ = a.do(ctx, http.MethodDelete, a.url("channels/"+url.PathEscape(id), nil), nil, nil)
}

// cleanup removes a finished call's media channel and bridge ("" for
// none); failures are ignored (Asterisk removes an empty bridge's
// channels' leftovers on restart, and there is nobody to tell).
func (a *ari) cleanup(ctx context.Context, media, bridge string) {
	ctx = context.WithoutCancel(ctx)
	if media != "" {
		a.hangUpChannel(ctx, media)
	}
	if bridge != "" {
		_, _ = a.do(ctx, http.MethodDelete, a.url("bridges/"+url.PathEscape(bridge), nil), nil, nil)
	}
}
