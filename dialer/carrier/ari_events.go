package carrier

// The ARI events websocket: one connection per configuration
// (GET /ari/events?app=<app_name>&subscribeAll=false, Basic auth), kept
// open with pings, reconnected with capped exponential backoff and full
// jitter (ari_reconnect.go), and followed after every (re)connect by a look
// at every call in flight (GET /ari/channels/{id}), since events sent while
// we were away are lost.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// ariEvent is the part of ARI's events we read (rest-api/api-docs/events.json).
type ariEvent struct {
	Type        string      `json:"type"`
	Timestamp   string      `json:"timestamp"`
	Application string      `json:"application"`
	Channel     *ariChannel `json:"channel"`
	// Dial: the channel dialled (ours when ARI originated it) and the
	// caller (a dialplan Dial by the far half of a Local/ channel).
	Peer       *ariChannel `json:"peer"`
	Caller     *ariChannel `json:"caller"`
	DialStatus string      `json:"dialstatus"`
	// ChannelDestroyed, ChannelHangupRequest.
	Cause int `json:"cause"`
}

// Events keeps the events websocket open until ctx ends, reconnecting with
// backoff, and applies what the events say about the calls this carrier
// follows to sink (see ari_calls.go). It returns once ctx ended and the
// work it started (answers, hang-ups) is over. One Events per carrier at a
// time.
//
// Reconnects: a connection that stayed up timing.stable is reopened at
// once; after a failed attempt (a refused or failed handshake, or a
// connection closed sooner) the next waits timing.backoff(n), n counting
// the failures since the last stable connection, whatever the calls
// waiting for the websocket do: they may cut one wait short per
// timing.kickEvery (see awaitEvents). Failures are logged at warning level,
// rate-limited (see ariEventsLog).
func (a *ari) Events(ctx context.Context, sink EventSink) {
	a.mu.Lock()
	a.sink, a.sinkC = sink, ctx
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.sink, a.sinkC = nil, nil
		for t := range a.timers {
			a.stopTimerLocked(t)
		}
		for _, c := range a.calls {
			c.grace = nil
		}
		a.mu.Unlock()
		a.work.Wait()
	}()
	defer a.setEventsState(false, false, "")
	var (
		failures int       // failed attempts since the last stable connection
		kicked   time.Time // when a waiting call last cut a wait short
		logs     = ariEventsLog{a: a}
	)
	for ctx.Err() == nil {
		start := a.now()
		a.mu.Lock()
		a.evDials++
		a.mu.Unlock()
		conn, status, err := a.dial(ctx)
		if err == nil {
			a.setEventsState(true, false, "")
			logs.connected(failures)
			// Before the first event is read: an event of an adopted call
			// must find it followed, answered if it was, and a call placed
			// while the websocket was down must be looked up (its answer
			// may be among the lost events) before its hang-up is read.
			a.adoptInFlight(ctx)
			a.lookUpBlind(ctx)
			a.work.Add(1)
			go func() {
				defer a.work.Done()
				a.reconcile(ctx)
			}()
			a.read(ctx, conn)
			up := a.now().Sub(start)
			if ctx.Err() != nil || up >= a.timing.stable {
				a.setEventsState(false, false, "the connection was lost")
				failures = 0
				continue
			}
			a.setEventsState(false, false, "the connection closed right after it was made")
			err, status = fmt.Errorf("connection closed after %s", up.Round(time.Millisecond)), 0
		} else {
			a.setEventsState(false, status == http.StatusUnauthorized || status == http.StatusForbidden, ariEventsCause(err, status))
			if ctx.Err() != nil {
				break
			}
		}
		// Kicks made before this result are answered by it: a call still
		// waiting kicks again (see awaitEvents).
		select {
		case <-a.kick:
		default:
		}
		d := a.timing.backoff(failures)
		failures++
		now := a.now()
		logs.failed(now, err, status, now.Add(d))
		var kick <-chan struct{}
		// After a refusal for the credentials a waiting call may always
		// cut the wait short: the call that asks was placed after the
		// campaign was resumed (a refused campaign pauses and places
		// nothing), so the credentials were presumably fixed; if not, its
		// own AuthFailed pauses the campaign again. No storm can follow.
		refused := status == http.StatusUnauthorized || status == http.StatusForbidden
		if refused || kicked.IsZero() || now.Sub(kicked) >= a.timing.kickEvery {
			kick = a.kick
		}
		if a.timing.sleep(ctx, d, kick) {
			kicked = a.now()
		}
	}
}

// setEventsState records the result of a connection attempt (or a lost
// connection): whether the events websocket is connected, whether the
// attempt was refused for the credentials, and why it is not connected
// (ariEventsCause; "" when connected or not tried yet); it wakes the calls
// waiting for it (see awaitEvents).
func (a *ari) setEventsState(connected, refused bool, cause string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.evConnected, a.evRefused, a.evCause = connected, refused, cause
	if refused {
		a.evRefusedDial = a.evDials
	}
	a.evResults++
	close(a.evChanged)
	a.evChanged = make(chan struct{})
}

// awaitEvents waits up to timing.eventsWait for the events websocket before
// a call is placed. When it is down it asks for a connection attempt now
// (skipping what is left of the backoff, which Events grants at most once
// per timing.kickEvery) and waits for the next attempt's result: nil
// once connected; an AuthFailed *Error when an attempt started after the
// wait began was refused for the credentials (the campaign pauses; no call
// is originated without its events, which a blind call would lose); a
// Unavailable *Error (noEventsError) when the wait (or ctx) ends first:
// the call is dialled later, it is not the contact's failure. With
// eventsWait 0 it does not wait.
func (a *ari) awaitEvents(ctx context.Context) error {
	if a.timing.eventsWait <= 0 {
		return nil
	}
	t := time.NewTimer(a.timing.eventsWait)
	defer t.Stop()
	a.mu.Lock()
	since := a.evDials
	a.mu.Unlock()
	for {
		a.mu.Lock()
		connected, changed := a.evConnected || a.elsewhere, a.evChanged
		refusedNow := a.evRefused && a.evRefusedDial > since
		a.mu.Unlock()
		if connected {
			return nil // ours, or another process's (SharedEventSource)
		}
		if refusedNow {
			return &Error{Kind: AuthFailed, HTTPStatus: http.StatusUnauthorized,
				Message: "ari: the events websocket was refused for the credentials"}
		}
		select {
		case a.kick <- struct{}{}:
		default:
		}
		select {
		case <-changed:
		case <-t.C:
			return a.noEventsError()
		case <-ctx.Done():
			return a.noEventsError()
		}
	}
}

// eventsURL is the websocket URL of the events of our application.
func (a *ari) eventsURL() string {
	u := a.url("events", url.Values{"app": {a.app}, "subscribeAll": {"false"}})
	if rest, ok := strings.CutPrefix(u, "https://"); ok {
		return "wss://" + rest
	}
	return "ws://" + strings.TrimPrefix(u, "http://")
}

// dial opens the events websocket with Basic auth; a refused handshake
// also returns its HTTP status.
func (a *ari) dial(ctx context.Context) (*websocket.Conn, int, error) {
	dctx, cancel := context.WithTimeout(ctx, a.timing.dialTimeout)
	defer cancel()
	h := http.Header{}
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(a.app+":"+a.password)))
	conn, resp, err := websocket.Dial(dctx, a.eventsURL(), &websocket.DialOptions{HTTPClient: a.wsHTTP, HTTPHeader: h})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		return nil, status, err
	}
	conn.SetReadLimit(1 << 20)
	return conn, http.StatusSwitchingProtocols, nil
}

// read applies the connection's events until it fails or ctx ends, pinging
// it meanwhile.
func (a *ari) read(ctx context.Context, conn *websocket.Conn) {
	defer conn.CloseNow()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var pinger sync.WaitGroup
	pinger.Add(1)
	go func() {
		defer pinger.Done()
		t := time.NewTicker(a.timing.ping)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				pctx, pcancel := context.WithTimeout(rctx, a.timing.ping)
				err := conn.Ping(pctx)
				pcancel()
				if err != nil {
					cancel() // the connection is dead: reconnect
					return
				}
			}
		}
	}()
	defer pinger.Wait()
	defer cancel()
	for {
		typ, data, err := conn.Read(rctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		var ev ariEvent
		if json.Unmarshal(data, &ev) != nil {
			continue
		}
		a.handle(ctx, &ev)
	}
}

// reconcile looks up every call in flight whose channel was not seen
// destroyed and whose originate was answered (GET /ari/channels/{id}): a channel Up that was not seen
// answered is answered now; a channel Asterisk no longer has ended while we
// were away and, unless its events still come within farGrace, ends as
// gone (see ari.gone). A lookup that fails leaves the call as it is (the
// dialer's deadline reconciles it).
func (a *ari) reconcile(ctx context.Context) {
	a.mu.Lock()
	var ids []string
	for id, c := range a.calls {
		if !c.ownGone && !c.finished && !c.placing && !c.placingElsewhere {
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	for _, id := range ids {
		var ch ariChannel
		status, err := a.do(ctx, http.MethodGet, a.url("channels/"+url.PathEscape(id), nil), nil, &ch)
		if err == nil && strings.HasPrefix(ch.Name, "Local/") {
			a.mu.Lock()
			if c := a.calls[id]; c != nil {
				c.local = true
			}
			a.mu.Unlock()
		}
		switch {
		case status == http.StatusNotFound:
			a.goneLater(id)
		case err == nil && ch.State == "Up":
			a.takeOver(ctx, id)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// lookUpBlind looks up, before any event is read, the calls originated while
// the websocket was down (ariCall.blind): one Up is taken over as answered,
// one Asterisk no longer has ends as gone.
func (a *ari) lookUpBlind(ctx context.Context) {
	a.mu.Lock()
	var ids []string
	for id, c := range a.calls {
		if c.blind && !c.finished {
			c.blind = false
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	for _, id := range ids {
		var ch ariChannel
		status, err := a.do(ctx, http.MethodGet, a.url("channels/"+url.PathEscape(id), nil), nil, &ch)
		switch {
		case status == http.StatusNotFound:
			a.goneLater(id)
		case err == nil && ch.State == "Up":
			a.takeOver(ctx, id)
		}
	}
}

// adoptInFlight follows every call the engine has in flight through this
// configuration (EventSink.InFlight) that this carrier does not follow
// yet: calls an earlier carrier of the configuration followed until an
// update replaced it, or an earlier process placed. reconcile then looks
// each of them up like its own.
func (a *ari) adoptInFlight(ctx context.Context) {
	a.mu.Lock()
	sink := a.sink
	a.mu.Unlock()
	if sink == nil {
		return
	}
	calls, err := sink.InFlight(ctx)
	if err != nil {
		return // the calls stay with the dialer's deadline
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range calls {
		if c, known := a.calls[a.CallID(f.AttemptID)]; known {
			c.placingElsewhere = c.placingElsewhere && f.Placing
			continue
		}
		c := a.followLocked(a.CallID(f.AttemptID), f.AttemptID, false)
		c.placingElsewhere = f.Placing && !c.finished
		if f.Answered && !c.finished {
			// Answered and handed to its agent or greeting by the carrier
			// that followed it before: its end is an answered call's, and
			// it is not answered again.
			c.answered, c.answeredAt, c.ringing, c.answering = true, now, true, true
		}
	}
}

// takeOver notes that the followed call id is up (answered): its agent
// media is adopted when an earlier process made it (see adoptMedia), else
// the answer is made now if it was not (its StasisStart came while nobody
// listened, or before a restart).
func (a *ari) takeOver(ctx context.Context, id string) {
	a.adoptMedia(ctx, id)
	var acts []func()
	a.mu.Lock()
	if c := a.calls[id]; c != nil && !c.finished {
		a.answeredLocked(c, a.now(), true, &acts)
	}
	a.mu.Unlock()
	ariRun(acts)
}

// adoptMedia takes over the agent's media channel and bridge of an
// answered call whose answer this carrier did not make (an earlier process
// did, before a restart): when the media channel exists the call is not
// answered again, and both are removed when it ends.
func (a *ari) adoptMedia(ctx context.Context, id string) {
	a.mu.Lock()
	c := a.calls[id]
	skip := c == nil || c.answering
	a.mu.Unlock()
	if skip {
		return
	}
	var ch ariChannel
	if _, err := a.do(ctx, http.MethodGet, a.url("channels/"+url.PathEscape(id+ariMediaSuffix), nil), nil, &ch); err != nil {
		return
	}
	a.mu.Lock()
	if !c.answering && !c.finished {
		c.answering = true
		c.mediaID, c.bridgeID = id+ariMediaSuffix, id+ariBridgeSuffix
	}
	a.mu.Unlock()
}

// goneLater ends call id as gone after farGrace unless its events finish
// it first.
func (a *ari) goneLater(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.calls[id]; c == nil || c.finished || c.ownGone || a.sink == nil {
		return
	}
	sink, ctx := a.sink, a.sinkC
	a.afterLocked(a.timing.farGrace, func() {
		a.mu.Lock()
		c := a.calls[id]
		if c == nil || c.finished || c.ownGone {
			a.mu.Unlock()
			return
		}
		st, media, bridge := a.goneLocked(c)
		a.mu.Unlock()
		sink.Status(ctx, c.attemptID, st)
		a.cleanup(ctx, media, bridge)
	})
}

// afterLocked runs f after d unless Events ends first (see stopTimerLocked);
// a.mu is held.
func (a *ari) afterLocked(d time.Duration, f func()) *time.Timer {
	a.work.Add(1)
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		defer a.work.Done()
		a.mu.Lock()
		_, ok := a.timers[t]
		delete(a.timers, t)
		a.mu.Unlock()
		if ok {
			f()
		}
	})
	a.timers[t] = struct{}{}
	return t
}

// stopTimerLocked cancels a timer of afterLocked that has not fired; a.mu
// is held.
func (a *ari) stopTimerLocked(t *time.Timer) {
	if _, ok := a.timers[t]; !ok {
		return
	}
	delete(a.timers, t)
	if t.Stop() {
		a.work.Done()
	}
}

// ariRun runs the actions collected under a.mu, in order.
func ariRun(acts []func()) {
	for _, f := range acts {
		f()
	}
}
