package arisim

// Channels, calls and the event sequences their scripts play.

import (
	"strings"
	"sync"
	"time"
)

// channel is one live Asterisk channel. Guarded by Server.mu.
type channel struct {
	id, name, state string
	app             string // the application subscribed to it
	stasis          bool   // in the application (StasisStart sent)
	call            *call  // nil for a media channel
	far             bool   // the far half of a Local/ channel
	number          string // dialed number (exten)
	callerID        string
	created         time.Time
	vars            map[string]string
	bridge          string // the bridge it is in, "" for none
}

// call is one originated call. Its fields are guarded by Server.mu.
type call struct {
	info      CallInfo
	script    Script
	own, far  *channel // far is nil for a single channel
	timeout   int      // the originate's ring timeout in seconds; -1: none
	args      []string // StasisStart args (appArgs split on commas)
	hangup    chan struct{}
	hangOnce  sync.Once
	ringEnd   chan struct{} // closed by Server.Answer: the ring ends now
	ringOnce  sync.Once
	answered  bool
	ended     bool
	ownCause  int
	farCause  int
	canceled  bool // hung up through the API before answering
	hungUpAPI bool // hung up through the API
}

// stop makes the call's script end the call (a DELETE, or the callee
// hanging up through Server.HangUp).
func (c *call) stop() { c.hangOnce.Do(func() { close(c.hangup) }) }

// Causes of ChannelDestroyed (include/asterisk/causes.h) the scripts use.
const (
	causeNormal      = 16
	causeBusy        = 17
	causeNoAnswer    = 19
	causeAbsent      = 20
	causeRejected    = 21
	causeCongestion  = 34
	causeUnspecified = 0
)

// play runs c's script in its own goroutine until the call ends.
func (s *Server) play(c *call) {
	defer s.wg.Done()
	sc := c.script
	ring := sc.RingDelay
	if sc.Outcome == NoAnswer && ring == 0 {
		ring = time.Duration(c.timeout) * time.Second
		if c.timeout < 0 {
			ring = Never
		}
	}
	if (sc.Outcome == Answer && ring != 0) || sc.Outcome == NoAnswer {
		s.mu.Lock()
		s.setStateLocked(c.own, "Ringing")
		s.dialLocked(c, "RINGING")
		s.mu.Unlock()
	}
	if !s.wait(c, ring, c.ringEnd) {
		s.endByAPI(c)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch sc.Outcome {
	case Busy:
		s.dialLocked(c, "BUSY")
		s.destroyCallLocked(c, causeUnspecified, causeBusy)
	case NoAnswer:
		s.destroyCallLocked(c, causeNoAnswer, causeNoAnswer)
	case Congestion:
		s.dialLocked(c, "CONGESTION")
		s.destroyCallLocked(c, causeUnspecified, causeCongestion)
	case Unavailable:
		s.dialLocked(c, "CHANUNAVAIL")
		s.destroyCallLocked(c, causeUnspecified, causeAbsent)
	case Rejected:
		s.destroyCallLocked(c, causeUnspecified, causeRejected)
	default:
		s.answerLocked(c)
		if !s.listeningLocked(c.own.app) {
			// No websocket of the application: Stasis cannot start, and
			// Asterisk hangs the answered channel up.
			s.hangupLocked(c, causeNormal)
			return
		}
		s.mu.Unlock()
		talked := s.wait(c, sc.TalkDuration, nil)
		s.mu.Lock()
		if c.ended {
			return
		}
		if !talked && s.ctx.Err() != nil {
			return
		}
		s.hangupLocked(c, causeNormal)
	}
}

// wait waits d (Never: forever) or until early is closed and reports
// whether it elapsed; false when the call was hung up meanwhile or the
// simulator closed.
func (s *Server) wait(c *call, d time.Duration, early <-chan struct{}) bool {
	if d == 0 {
		select {
		case <-c.hangup:
			return false
		default:
			return true
		}
	}
	var elapsed <-chan time.Time
	if d != Never {
		t := time.NewTimer(d)
		defer t.Stop()
		elapsed = t.C
	}
	select {
	case <-elapsed:
		return true
	case <-early:
		return true
	case <-c.hangup:
		return false
	case <-s.ctx.Done():
		return false
	}
}

// endByAPI ends a call hung up before it was answered (a DELETE while
// ringing): ChannelHangupRequest, Dial CANCEL, both halves destroyed with
// cause 16.
func (s *Server) endByAPI(c *call) {
	if s.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ended {
		return
	}
	c.canceled = true
	s.emitChannelLocked(c.own, "ChannelHangupRequest", map[string]any{"cause": causeNormal, "soft": false})
	s.dialLocked(c, "CANCEL")
	s.destroyCallLocked(c, causeNormal, causeNormal)
}

// answerLocked answers c: the far half and ours go Up, Dial ANSWER, and our
// channel enters the application (StasisStart) when it is listened to.
func (s *Server) answerLocked(c *call) {
	c.answered = true
	if c.far != nil {
		s.setStateLocked(c.far, "Up")
	}
	s.setStateLocked(c.own, "Up")
	s.dialLocked(c, "ANSWER")
	if s.listeningLocked(c.own.app) {
		c.own.stasis = true
		s.emitChannelLocked(c.own, "StasisStart", map[string]any{"args": c.args})
	}
	s.counters.Update(func(st *Stats) { st.Answered++ })
}

// hangupLocked ends an answered call: ChannelHangupRequest, StasisEnd and
// both halves destroyed with cause.
func (s *Server) hangupLocked(c *call, cause int) {
	if c.ended {
		return
	}
	s.emitChannelLocked(c.own, "ChannelHangupRequest", map[string]any{"cause": cause, "soft": false})
	if c.own.stasis {
		c.own.stasis = false
		s.emitChannelLocked(c.own, "StasisEnd", nil)
	}
	s.destroyCallLocked(c, cause, cause)
}

// setStateLocked changes ch's state and sends ChannelStateChange.
func (s *Server) setStateLocked(ch *channel, state string) {
	ch.state = state
	s.emitChannelLocked(ch, "ChannelStateChange", nil)
}

// dialLocked sends a Dial event of our channel with status dialstatus.
func (s *Server) dialLocked(c *call, dialstatus string) {
	s.emitLocked(c.own.app, map[string]any{
		"type": "Dial", "peer": s.snapshot(c.own), "dialstring": dialString(c.info.Endpoint),
		"dialstatus": dialstatus, "forward": "",
	})
}

// dialString is the resource part of an endpoint ("+1415...@outdial").
func dialString(endpoint string) string {
	_, rest, _ := strings.Cut(endpoint, "/")
	return rest
}

// destroyCallLocked destroys c's channels: ours with cause own, the far
// half with cause far (a single channel ends with far's cause, unless the
// call was hung up through the API or answered). The far half goes first
// unless the script says FarHalfLast.
func (s *Server) destroyCallLocked(c *call, own, far int) {
	if c.ended {
		return
	}
	c.ended = true
	if c.far == nil {
		if own == causeUnspecified {
			own = far
		}
		s.endOwnLocked(c, own)
		s.counters.Update(func(st *Stats) { st.InFlight--; st.Ended++ })
		return
	}
	c.farCause = far
	if !c.script.FarHalfLast {
		s.destroyLocked(c.far, far)
		s.endOwnLocked(c, own)
		s.counters.Update(func(st *Stats) { st.InFlight--; st.Ended++ })
		return
	}
	s.endOwnLocked(c, own)
	farCh := c.far
	s.counters.Update(func(st *Stats) { st.InFlight-- })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if d := c.script.FarHalfDelay; d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
			}
		}
		s.mu.Lock()
		s.destroyLocked(farCh, far)
		s.counters.Update(func(st *Stats) { st.Ended++ })
		s.mu.Unlock()
	}()
}

// endOwnLocked destroys our channel of c: the call is no longer in flight
// (the caller counts it out).
func (s *Server) endOwnLocked(c *call, cause int) {
	c.ownCause = cause
	if c.own.stasis {
		c.own.stasis = false
		s.emitChannelLocked(c.own, "StasisEnd", nil)
	}
	s.destroyLocked(c.own, cause)
}

// destroyLocked removes ch (from its bridge too) and sends
// ChannelDestroyed with cause.
func (s *Server) destroyLocked(ch *channel, cause int) {
	if b := s.bridges[ch.bridge]; b != nil {
		b.remove(ch.id)
	}
	delete(s.channels, ch.id)
	s.emitChannelLocked(ch, "ChannelDestroyed", map[string]any{"cause": cause, "cause_txt": causeText(cause)})
}

// causeText is Asterisk's text of a cause.
func causeText(cause int) string {
	switch cause {
	case causeNormal:
		return "Normal Clearing"
	case causeBusy:
		return "User busy"
	case causeNoAnswer:
		return "No answer"
	case causeAbsent:
		return "Subscriber absent"
	case causeRejected:
		return "Call Rejected"
	case causeCongestion:
		return "Circuit/channel congestion"
	}
	return "Unknown"
}

// HangUp makes the far end of the call whose channel (either half) is id
// hang up, or, for a media channel, the agent leave. It reports whether
// there was such a live channel.
func (s *Server) HangUp(id string) bool {
	s.mu.Lock()
	ch := s.channels[id]
	s.mu.Unlock()
	if ch == nil {
		return false
	}
	if ch.call == nil {
		s.mu.Lock()
		s.endMediaLocked(ch)
		s.mu.Unlock()
		return true
	}
	ch.call.stop()
	return true
}

// Answer ends the ring of the call whose channel is id now: the far end
// answers (Answer) or the call ends as scripted (the other outcomes), as if
// its RingDelay were over. It reports whether there was such a live call.
func (s *Server) Answer(id string) bool {
	s.mu.Lock()
	ch := s.channels[id]
	s.mu.Unlock()
	if ch == nil || ch.call == nil {
		return false
	}
	ch.call.ringOnce.Do(func() { close(ch.call.ringEnd) })
	return true
}

// endMediaLocked destroys a media channel (StasisEnd, ChannelDestroyed 16).
func (s *Server) endMediaLocked(ch *channel) {
	if _, live := s.channels[ch.id]; !live {
		return
	}
	if ch.stasis {
		ch.stasis = false
		s.emitChannelLocked(ch, "StasisEnd", nil)
	}
	s.destroyLocked(ch, causeNormal)
}
