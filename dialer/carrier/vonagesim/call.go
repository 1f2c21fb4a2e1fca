package vonagesim

// One simulated call: its script's steps (time.AfterFunc) and the queue of
// webhooks it sends, delivered in order by at most one goroutine at a time.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// maxNCCO bounds how much of an answer webhook's answer is kept.
const maxNCCO = 64 << 10

// Vonage's defaults for a call's timers.
const (
	defaultRingingTimer = 60 * time.Second
	defaultLengthTimer  = 7200 * time.Second
)

// vonageTime is the timestamp format of events (ISO 8601, UTC, ms).
const vonageTime = "2006-01-02T15:04:05.000Z"

// delivery is one queued webhook.
type delivery struct {
	answer bool // the answer webhook (else an event)
	final  bool // the final event
	fields map[string]any
	due    time.Time
}

type call struct {
	s    *Server
	info CallInfo // immutable

	mu sync.Mutex
	// Set by configure, then read-only.
	script                  Script
	answerURL, answerMethod string
	eventURL, eventMethod   string
	md                      string // machine_detection asked for, or ""
	ringingTimer            time.Duration
	lengthTimer             time.Duration

	status              string
	answeredBy          string
	answeredAt, endedAt time.Time
	duration            int
	step                *time.Timer // the pending script step
	q                   simkit.Queue[delivery]
	held                []delivery // OutOfOrder events held back
	ended, inFlight     bool
	final, stopped      bool
	ncco, nccoType      string
	answerStatus        int
	callbacks           []Callback
	lastEvent           *Callback
}

// configure reads the create request and sets the script.
func (c *call) configure(sc Script) {
	switch sc.Outcome {
	case "":
		sc.Outcome = Human
	case Human, Machine, Busy, Timeout, Unanswered, Rejected, Failed, Cancelled:
	default:
		sc.Outcome = Failed
	}
	cr := c.info.Request
	c.mu.Lock()
	defer c.mu.Unlock()
	c.script = sc
	c.status = "started"
	if len(cr.AnswerURL) > 0 {
		c.answerURL = cr.AnswerURL[0]
	}
	c.answerMethod = method(cr.AnswerMethod, http.MethodGet)
	if len(cr.EventURL) > 0 {
		c.eventURL = cr.EventURL[0]
	}
	c.eventMethod = method(cr.EventMethod, http.MethodPost)
	c.md = cr.MachineDetection
	c.ringingTimer, c.lengthTimer = defaultRingingTimer, defaultLengthTimer
	if cr.RingingTimer != nil {
		c.ringingTimer = time.Duration(*cr.RingingTimer) * time.Second
	}
	if cr.LengthTimer != nil {
		c.lengthTimer = time.Duration(*cr.LengthTimer) * time.Second
	}
}

// method is m, or def when m is empty.
func method(m, def string) string {
	if m == "" {
		return def
	}
	return strings.ToUpper(m)
}

// start plays the script from the create on.
func (c *call) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.stopped || c.s.closed.Load() {
		return
	}
	c.event("started", nil)
	if c.script.Outcome != Failed && c.script.Outcome != Rejected {
		c.status = "ringing"
		c.event("ringing", nil)
	}
	if ring := c.script.RingDelay; ring < 0 || ring > c.ringingTimer {
		c.after(c.ringingTimer, func() { c.end("timeout") })
		return
	}
	c.after(c.script.RingDelay, c.pickUp)
}

// after runs step (with mu held) after d: at once for 0.
func (c *call) after(d time.Duration, step func()) {
	if d <= 0 {
		step()
		return
	}
	c.step = time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.ended && !c.stopped {
			step()
		}
	})
}

// pickUp ends the ringing: answered, or the script's final status.
func (c *call) pickUp() {
	switch c.script.Outcome {
	case Human, Machine:
		c.answer()
	default:
		c.end(string(c.script.Outcome))
	}
}

func (c *call) answer() {
	c.status = "answered"
	c.answeredAt = time.Now()
	if c.answerURL != "" {
		c.enqueue(delivery{answer: true, fields: c.fields(), due: c.answeredAt})
	}
	c.event("answered", nil)
	if c.md != "" {
		verdict := c.script.Verdict
		if verdict == "" {
			verdict = "human"
			if c.script.Outcome == Machine {
				verdict = "machine"
			}
		}
		c.answeredBy = verdict
		c.event(verdict, nil)
		if verdict == "machine" && c.md == "hangup" {
			c.end("completed")
			return
		}
	}
	if talk := c.script.TalkDuration; talk < 0 || talk > c.lengthTimer {
		c.after(c.lengthTimer, func() { c.end("completed") })
		return
	}
	c.after(c.script.TalkDuration, func() { c.end("completed") })
}

// end gives the call its final status, once.
func (c *call) end(status string) {
	if c.ended {
		return
	}
	c.ended = true
	if c.step != nil {
		c.step.Stop()
	}
	c.status = status
	c.endedAt = time.Now()
	if !c.answeredAt.IsZero() {
		c.duration = c.script.Duration
		if c.duration == 0 {
			c.duration = int(math.Round(c.endedAt.Sub(c.answeredAt).Seconds()))
		}
	}
	if c.eventURL == "" || c.script.LoseFinal {
		c.leave()
	} else {
		c.event(status, c.summary())
	}
	// Out of order: what was held back follows the final, latest first.
	due := c.endedAt.Add(c.script.CallbackDelay)
	if c.q.LastDue().After(due) {
		due = c.q.LastDue()
	}
	for i := len(c.held) - 1; i >= 0; i-- {
		d := c.held[i]
		d.due = due
		c.enqueue(d)
		if c.script.Duplicate {
			c.enqueue(d)
		}
	}
	c.held = nil
	c.maybeFinish()
}

// summary is what the final event adds: duration, times, price.
func (c *call) summary() map[string]any {
	m := map[string]any{"duration": fmt.Sprint(c.duration), "end_time": c.endedAt.UTC().Format(vonageTime),
		"rate": "0.00450000", "price": fmt.Sprintf("%.8f", 0.0045*float64(c.duration)/60), "network": "US-FIXED"}
	if !c.answeredAt.IsZero() {
		m["start_time"] = c.answeredAt.UTC().Format(vonageTime)
	}
	return m
}

// hangUp applies a hang-up request: a ringing call ends "cancelled", an
// answered one "completed". It reports false when the call was over.
func (c *call) hangUp() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	if c.answeredAt.IsZero() {
		c.end("cancelled")
	} else {
		c.end("completed")
	}
	return true
}

// leave ends the call's time in flight.
func (c *call) leave() {
	if !c.inFlight {
		return
	}
	c.inFlight = false
	c.s.counters.Update(func(st *Stats) { st.InFlight-- })
}

// maybeFinish counts the call as final once it ended and has nothing left to
// send.
func (c *call) maybeFinish() {
	if c.ended && !c.final && !c.q.Busy() && len(c.held) == 0 {
		c.final = true
		c.s.counters.Update(func(st *Stats) { st.Final++ })
	}
}

// fields are the fields every webhook of the call carries.
func (c *call) fields() map[string]any {
	return map[string]any{"from": c.info.From, "to": c.info.To, "uuid": c.info.UUID,
		"conversation_uuid": c.info.ConversationUUID}
}

// event queues the event with status (and extra fields) when the call has
// an event_url. The human/machine event names the call call_uuid, as
// Vonage's does.
func (c *call) event(status string, extra map[string]any) {
	if c.eventURL == "" {
		return
	}
	now := time.Now()
	f := c.fields()
	if status == "human" || status == "machine" {
		f["call_uuid"] = f["uuid"]
		delete(f, "uuid")
	} else {
		f["direction"] = "outbound"
	}
	f["status"] = status
	f["timestamp"] = now.UTC().Format(vonageTime)
	for k, v := range extra {
		f[k] = v
	}
	final := extra != nil
	d := delivery{final: final, fields: f, due: now.Add(c.script.CallbackDelay)}
	if c.script.OutOfOrder && !final {
		c.held = append(c.held, d)
		return
	}
	c.enqueue(d)
	if c.script.Duplicate {
		c.enqueue(d)
	}
}

// enqueue queues d for delivery at its due time (after every item due no
// later).
func (c *call) enqueue(d delivery) {
	c.q.Push(d, d.due)
}

// stop ends the script and the deliveries for Close.
func (c *call) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.step != nil {
		c.step.Stop()
	}
	c.q.Stop()
}

// deliver sends one webhook, signed as Vonage signs it, and records the
// answer. An answer webhook that fails ends the call, as Vonage terminates
// a call whose NCCO it cannot get.
func (c *call) deliver(d delivery) {
	target, m := c.eventURL, c.eventMethod
	if d.answer {
		target, m = c.answerURL, c.answerMethod
	}
	var body, signed []byte
	if m == http.MethodGet {
		var query string
		query, signed = queryPayload(d.fields)
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + query
	} else {
		body, _ = json.Marshal(d.fields) // strings only: always encodes
		signed = body
	}
	cb := Callback{URL: target, Method: m, Body: body, Authorization: c.s.Authorization(signed)}
	status, ctype, answer, err := c.s.send(c.s.ctx, cb, d.answer)
	cb.Status = status
	if err != nil {
		cb.Err = err.Error()
	}
	failed := err != nil || status < 200 || status > 299
	c.mu.Lock()
	if d.answer {
		c.ncco, c.nccoType, c.answerStatus = answer, ctype, status
		if failed {
			c.end("completed")
		}
	} else {
		c.lastEvent = &cb
		if c.s.record {
			c.callbacks = append(c.callbacks, cb)
		}
	}
	c.mu.Unlock()
	c.s.counters.Update(func(st *Stats) {
		if d.answer {
			st.AnswerRequests++
			if failed {
				st.AnswerErrors++
			}
			return
		}
		st.Callbacks++
		if failed {
			st.CallbackErrors++
		}
	})
}
