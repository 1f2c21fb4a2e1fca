package cloudonixsim

// One simulated call: its script runs in a goroutine that waits on timers,
// the hang-up channel and the server's context, and sends the call's
// webhooks one at a time.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxCXML bounds how much of a voice-application answer is kept.
const maxCXML = 64 << 10

// call is one placed call and its script's state.
type call struct {
	s      *Server
	info   CallInfo      // immutable
	script Script        // set before start, then read-only
	hangup chan struct{} // closed by the first accepted DELETE

	mu                           sync.Mutex
	status                       string
	startedAt, answeredAt, ended time.Time
	hungUp, inFlight, final      bool
	cxml, cxmlType               string
	answerStatus                 int
	callbacks                    []Callback
}

// start runs the script in its own goroutine.
func (c *call) start() {
	if c.s.closed.Load() {
		return
	}
	c.s.scripts.Add(1)
	go func() {
		defer c.s.scripts.Done()
		c.run()
	}()
}

// run plays the script: ringing, then answered and completed after the talk
// time, or the unanswered final status; a hang-up ends it early.
func (c *call) run() {
	c.mu.Lock()
	c.startedAt = time.Now()
	c.status = "ringing"
	c.mu.Unlock()
	var held [][]byte
	c.send(c.snapshot(), false, &held)
	if !c.wait(c.script.RingDelay) {
		c.end("cancel", held)
		return
	}
	if c.script.Outcome != Human {
		st := string(c.script.Outcome)
		if c.script.FinalStatus != "" {
			st = c.script.FinalStatus
		}
		c.end(st, held)
		return
	}
	c.mu.Lock()
	c.status, c.answeredAt = "connected", time.Now()
	c.mu.Unlock()
	c.send(c.snapshot(), false, &held)
	if c.info.Request.URL != "" {
		c.fetchCXML()
	}
	c.wait(c.script.TalkDuration) // a hang-up of an answered call completes it
	c.end("completed", held)
}

// wait returns true after d (never for Never), false when the call is hung
// up or the server closes first.
func (c *call) wait(d time.Duration) bool {
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return true
	case <-c.hangup:
		return false
	case <-c.s.ctx.Done():
		return false
	}
}

// hangUp accepts a DELETE: false when the call has already ended.
func (c *call) hangUp() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended.IsZero() || c.hungUp {
		return false
	}
	c.hungUp = true
	close(c.hangup)
	return true
}

// end gives the call its final status and sends the final update (unless
// lost) and then what was held back, latest first.
func (c *call) end(status string, held [][]byte) {
	c.mu.Lock()
	c.status, c.ended = status, time.Now()
	c.mu.Unlock()
	if c.s.ctx.Err() == nil {
		if c.script.LoseFinal {
			c.leave()
		} else {
			c.send(c.snapshot(), true, nil)
		}
		for i := len(held) - 1; i >= 0; i-- {
			c.deliver(held[i])
			if c.script.Duplicate {
				c.deliver(held[i])
			}
		}
	}
	c.leave()
	c.mu.Lock()
	c.final = true
	c.mu.Unlock()
	c.s.counters.Update(func(st *Stats) { st.Final++ })
}

// leave ends the call's time in flight, once.
func (c *call) leave() {
	c.mu.Lock()
	was := c.inFlight
	c.inFlight = false
	c.mu.Unlock()
	if was {
		c.s.counters.Update(func(st *Stats) { st.InFlight-- })
	}
}

// send delivers one session update (twice with Duplicate) after the
// script's CallbackDelay, or holds a non-final one back (OutOfOrder).
func (c *call) send(sess Session, final bool, held *[][]byte) {
	if c.info.Request.Callback == "" {
		return
	}
	body, _ := json.Marshal(sess)
	if c.script.OutOfOrder && !final {
		*held = append(*held, body)
		return
	}
	if c.script.CallbackDelay > 0 {
		t := time.NewTimer(c.script.CallbackDelay)
		select {
		case <-t.C:
		case <-c.s.ctx.Done():
			t.Stop()
			return
		}
	}
	if final {
		c.leave()
	}
	c.deliver(body)
	if c.script.Duplicate {
		c.deliver(body)
	}
}

// deliver posts one session update as JSON to the call's callback and
// records the answer.
func (c *call) deliver(body []byte) {
	target := c.info.Request.Callback
	status, err := c.s.post(c.s.ctx, target, body)
	cb := Callback{URL: target, Body: body, Status: status, Err: errStatus(status, err)}
	c.mu.Lock()
	c.callbacks = append(c.callbacks, cb)
	c.mu.Unlock()
	c.s.counters.Update(func(st *Stats) {
		st.Callbacks++
		if cb.Err != "" {
			st.CallbackErrors++
		}
	})
}

// post sends body as JSON to target and returns the HTTP status.
func (s *Server) post(ctx context.Context, target string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Cloudonix-Sim/1.0")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// answerParams are the voice-application request parameters of the call.
func (c *call) answerParams() map[string]string {
	return map[string]string{
		"CallSid":    c.info.Token,
		"Session":    c.info.Token,
		"AccountSid": c.s.domain,
		"Domain":     c.s.domain,
		"From":       c.info.From,
		"To":         c.info.To,
		"Direction":  "outbound-api",
		"CallStatus": "in-progress",
		"ApiVersion": "2010-04-01",
	}
}

// fetchCXML requests the call's url (the voice application) and records
// the CXML answered.
func (c *call) fetchCXML() {
	target := c.info.Request.URL
	var req *http.Request
	var err error
	params := c.answerParams()
	if c.s.method == http.MethodGet {
		q := url.Values{}
		for k, v := range params {
			q.Set(k, v)
		}
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		req, err = http.NewRequestWithContext(c.s.ctx, http.MethodGet, target+sep+q.Encode(), nil)
	} else {
		body, _ := json.Marshal(params)
		req, err = http.NewRequestWithContext(c.s.ctx, http.MethodPost, target, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	status, text, ctype := 0, "", ""
	if err == nil {
		req.Header.Set("User-Agent", "Cloudonix-Sim/1.0")
		var resp *http.Response
		if resp, err = c.s.client.Do(req); err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, maxCXML))
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			status, text, ctype = resp.StatusCode, string(b), resp.Header.Get("Content-Type")
		}
	}
	c.mu.Lock()
	c.cxml, c.cxmlType, c.answerStatus = text, ctype, status
	c.mu.Unlock()
	c.s.counters.Update(func(st *Stats) { st.AnswerRequests++ })
}

// Session is the Session model as the simulator sends and serves it.
type Session struct {
	DomainID     int64          `json:"domainId"`
	Domain       SessionDomain  `json:"domain"`
	SubscriberID int64          `json:"subscriberId"`
	Destination  string         `json:"destination"`
	CallerID     string         `json:"callerId"`
	Direction    string         `json:"direction"`
	Token        string         `json:"token"`
	Status       string         `json:"status"`
	TimeLimit    int            `json:"timeLimit,omitempty"`
	Profile      map[string]any `json:"profile,omitempty"`
	Callback     string         `json:"callback,omitempty"`
	// Epoch milliseconds; null until the event happened.
	CallStartTime  *int64 `json:"callStartTime"`
	CallAnswerTime *int64 `json:"callAnswerTime"`
	CallEndTime    *int64 `json:"callEndTime"`
	// ISO-8601 forms of the same times.
	StartTime  *string `json:"startTime"`
	AnswerTime *string `json:"answerTime"`
	EndTime    *string `json:"endTime"`
}

// SessionDomain is the domain object inside a Session.
type SessionDomain struct {
	ID     int64  `json:"id"`
	Domain string `json:"domain"`
}

// session returns the call's Session now.
func (c *call) session() Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshotLocked()
}

// snapshot is session, for the script's updates.
func (c *call) snapshot() Session { return c.session() }

// snapshotLocked builds the Session with c.mu held.
func (c *call) snapshotLocked() Session {
	r := c.info.Request
	sess := Session{DomainID: c.s.domainID, Domain: SessionDomain{ID: c.s.domainID, Domain: c.s.domain},
		Destination: c.info.To, CallerID: c.info.From, Direction: "outbound-api", Token: c.info.Token,
		Status: c.status, Profile: r.Profile, Callback: r.Callback}
	if r.TimeLimit != nil {
		sess.TimeLimit = int(*r.TimeLimit)
	}
	stamp := func(t time.Time) (*int64, *string) {
		if t.IsZero() {
			return nil, nil
		}
		ms, iso := t.UnixMilli(), t.UTC().Format(time.RFC3339Nano)
		return &ms, &iso
	}
	sess.CallStartTime, sess.StartTime = stamp(c.startedAt)
	sess.CallAnswerTime, sess.AnswerTime = stamp(c.answeredAt)
	sess.CallEndTime, sess.EndTime = stamp(c.ended)
	return sess
}
