package carrier

// Following ARI calls: what the events of a call's channels tell (answered,
// dial status, the far half's cause, our channel's cause) and the one table
// mapping that to an outcome.
//
// Checked on a real Asterisk 22 (providers.md §1g): behind a Local/ dial
// string the channel we originate (;1) can end with cause 0 while the far
// half (;2) carries the real cause (17 busy, 34 congestion), and the two
// halves' ChannelDestroyed events come in either order. The Dial event's
// dialstatus comes before either destroy. So a call ends on our channel's
// ChannelDestroyed, with the outcome decided, in this order, by:
//
//  1. answered (ChannelStateChange Up, StasisStart or Dial ANSWER on our
//     channel) → answered;
//  2. our channel's final dialstatus (then the far half's, from a Dial the
//     far half made in the dialplan) → BUSY busy, NOANSWER no_answer,
//     CONGESTION and CHANUNAVAIL failed, CANCEL canceled;
//  3. a call we hung up before it was answered → canceled;
//  4. the far half's ChannelDestroyed cause, else our own → 17/21 busy,
//     18/19 no_answer, anything else failed.
//
// When our channel is destroyed first and neither 1 nor 2 decided, a call
// behind Local/ waits up to ariTiming.farGrace for the far half's destroy
// before deciding with our own cause.

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// ariCall is what the carrier knows of one call it follows. Guarded by
// ari.mu.
type ariCall struct {
	id        string // our channel's id
	attemptID int64
	// local: the channel is one half of a Local/ channel, whose far half
	// carries the callee's cause.
	local bool
	// placing: the originate request is under way (the channel may not
	// exist yet, so a lookup finding none means nothing).
	placing bool
	// placingElsewhere: adopted while another process was placing it
	// (FollowedCall.Placing): not looked up until it shows (an event, a
	// lookup finding it, or a later adoption as placed).
	placingElsewhere bool
	// blind: originated while the events websocket was down (after a
	// refused connection: see awaitEvents), so its first events may be
	// lost; the next connection looks it up before reading any event.
	blind bool

	answered   bool
	answeredAt time.Time
	ringing    bool // the ringing status was reported
	answering  bool // the answer action was started
	hungUp     bool // we asked Asterisk to hang the call up

	dialStatus    string // our channel's last final dialstatus
	farDialStatus string // a final dialstatus of a Dial the far half made

	farGone  bool
	farCause int

	ownGone  bool
	ownCause int
	endedAt  time.Time
	grace    *time.Timer // waiting for the far half after our destroy
	finished bool

	// mediaID and bridgeID are the agent's externalMedia channel and the
	// bridge, once created; both are removed when the call ends.
	mediaID, bridgeID string
}

// ariDialOutcomes maps final dialstatus values (main/dial.c) to outcomes.
var ariDialOutcomes = map[string]string{
	"BUSY":        OutcomeBusy,
	"NOANSWER":    OutcomeNoAnswer,
	"CONGESTION":  OutcomeFailed,
	"CHANUNAVAIL": OutcomeFailed,
	"CANCEL":      OutcomeCanceled,
}

// ariCauseOutcome maps a ChannelDestroyed cause (include/asterisk/causes.h)
// of a call that was not answered.
func ariCauseOutcome(cause int) string {
	switch cause {
	case 17, 21: // USER_BUSY, CALL_REJECTED
		return OutcomeBusy
	case 18, 19: // NO_USER_RESPONSE, NO_ANSWER (also ARI's own ring timeout)
		return OutcomeNoAnswer
	}
	return OutcomeFailed
}

// outcome decides a finished call's outcome and raw status (see the file
// comment), e.g. "dialstatus=BUSY cause=0 far_cause=17".
func (c *ariCall) outcome() (outcome, raw string) {
	var parts []string
	if c.answered {
		parts = append(parts, "answered")
	}
	if c.dialStatus != "" {
		parts = append(parts, "dialstatus="+c.dialStatus)
	}
	if c.farDialStatus != "" {
		parts = append(parts, "far_dialstatus="+c.farDialStatus)
	}
	if c.ownGone {
		parts = append(parts, "cause="+strconv.Itoa(c.ownCause))
	}
	if c.farGone {
		parts = append(parts, "far_cause="+strconv.Itoa(c.farCause))
	}
	if c.hungUp {
		parts = append(parts, "hung_up")
	}
	raw = strings.Join(parts, " ")
	switch {
	case c.answered:
		return OutcomeAnswered, raw
	case ariDialOutcomes[c.dialStatus] != "":
		return ariDialOutcomes[c.dialStatus], raw
	case ariDialOutcomes[c.farDialStatus] != "":
		return ariDialOutcomes[c.farDialStatus], raw
	case c.hungUp:
		return OutcomeCanceled, raw
	case c.farGone && c.farCause != 0:
		return ariCauseOutcome(c.farCause), raw
	}
	return ariCauseOutcome(c.ownCause), raw
}

// decided reports whether the outcome no longer depends on the far half.
func (c *ariCall) decided() bool {
	return c.answered || c.farGone || !c.local || c.hungUp ||
		ariDialOutcomes[c.dialStatus] != "" || ariDialOutcomes[c.farDialStatus] != ""
}

// finalStatus is the final Status of a finished call; the talk time runs
// from the answer to our channel's destroy.
func (c *ariCall) finalStatus() Status {
	outcome, raw := c.outcome()
	st := Status{ProviderCallID: c.id, Raw: raw, Answered: c.answered, Final: true, Outcome: outcome}
	if c.answered && !c.answeredAt.IsZero() && c.endedAt.After(c.answeredAt) {
		st.DurationSeconds = int((c.endedAt.Sub(c.answeredAt) + time.Second/2) / time.Second)
	}
	return st
}

// follow returns the call of channel id, following it from now on unless
// it finished lately (a straggling event must not bring it back).
func (a *ari) follow(id string, attemptID int64, local bool) *ariCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.followLocked(id, attemptID, local)
}

// followLocked is follow with a.mu held; it returns nil for a call that
// finished lately.
func (a *ari) followLocked(id string, attemptID int64, local bool) *ariCall {
	if c := a.calls[id]; c != nil {
		c.local = c.local || local
		return c
	}
	if _, ok := a.done[id]; ok {
		return &ariCall{id: id, attemptID: attemptID, finished: true} // detached
	}
	c := &ariCall{id: id, attemptID: attemptID, local: local}
	a.calls[id] = c
	return c
}

// forget stops following a call that was never created.
func (a *ari) forget(id string) {
	a.mu.Lock()
	delete(a.calls, id)
	a.mu.Unlock()
}

// ariDoneTTL is how long a finished call's id is remembered, so late events
// of its channels are ignored.
const ariDoneTTL = 10 * time.Minute

// finishLocked marks c finished and stops following it; the caller reports
// c.finalStatus() and cleans up its media (see cleanup). a.mu is held.
func (a *ari) finishLocked(c *ariCall) {
	c.finished = true
	if c.grace != nil {
		a.stopTimerLocked(c.grace)
		c.grace = nil
	}
	delete(a.calls, c.id)
	now := a.now()
	if now.Sub(a.pruned) > time.Minute {
		for id, at := range a.done {
			if now.Sub(at) > ariDoneTTL {
				delete(a.done, id)
			}
		}
		a.pruned = now
	}
	a.done[c.id] = now
}

// gone is the final status of a channel Asterisk no longer has (Query or
// the reconciliation after a reconnect found none): answered when the call
// was seen answered, its dial status when one decided, else unknown, Raw
// "channel_gone" (plus what was known).
func (a *ari) gone(id string) Status {
	a.mu.Lock()
	c := a.calls[id]
	if c == nil {
		a.mu.Unlock()
		return Status{ProviderCallID: id, Raw: "channel_gone", Final: true, Outcome: OutcomeUnknown}
	}
	st, media, bridge := a.goneLocked(c)
	a.mu.Unlock()
	if media != "" || bridge != "" {
		a.work.Add(1)
		go func() {
			defer a.work.Done()
			a.cleanup(context.Background(), media, bridge)
		}()
	}
	return st
}

// goneLocked finishes c as gone (see gone) and returns its status and the
// agent's media channel and bridge to remove; a.mu is held.
func (a *ari) goneLocked(c *ariCall) (st Status, media, bridge string) {
	a.finishLocked(c)
	st = Status{ProviderCallID: c.id, Raw: "channel_gone", Final: true, Outcome: OutcomeUnknown, Answered: c.answered}
	if c.answered || ariDialOutcomes[c.dialStatus] != "" || ariDialOutcomes[c.farDialStatus] != "" {
		outcome, raw := c.outcome()
		st.Outcome, st.Raw = outcome, "channel_gone "+raw
	}
	return st, c.mediaID, c.bridgeID
}

// ariTimeLayout is the layout of ARI's event timestamps
// ("2026-05-04T10:00:00.123+0000").
const ariTimeLayout = "2006-01-02T15:04:05.000-0700"

// eventTime is an event's timestamp, or now when it has none or it does
// not parse.
func (a *ari) eventTime(ts string) time.Time {
	if t, err := time.Parse(ariTimeLayout, ts); err == nil {
		return t
	}
	return a.now()
}
