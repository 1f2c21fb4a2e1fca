package plivosim

// One simulated call: its script's steps (time.AfterFunc) and the queue of
// webhooks it sends (simkit.Queue), delivered in order by at most one
// goroutine at a time.

import (
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// maxXML bounds how much of an answer URL's answer is kept.
const maxXML = 64 << 10

// cdrTime is the date format of call records ("2022-10-12 21:57:47+05:30").
const cdrTime = "2006-01-02 15:04:05-07:00"

// Kinds of callback.
const (
	KindRing             = "ring"
	KindAnswer           = "answer"
	KindMachineDetection = "machine_detection"
	KindHangup           = "hangup"
)

// hangup causes of the simulated outcomes: code, name, source. The 1000,
// 2000 and 4000 codes are Plivo's documented ones; the 3000s (the callee's
// side) are illustrative.
var causes = map[string]struct {
	code         int
	name, source string
}{
	"completed": {4000, "Normal Hangup", "Call recipient"},
	"busy":      {3000, "Busy Line", "Carrier"},
	"no-answer": {3010, "No Answer", "Carrier"},
	"timeout":   {3020, "Ring Timeout Reached", "Plivo"},
	"cancel":    {1000, "Canceled", "API Request"},
	"failed":    {2000, "Invalid Destination Address", "Carrier"},
}

// delivery is one queued webhook.
type delivery struct {
	kind   string
	params url.Values
	due    time.Time
}

// call is one simulated call; mu guards its mutable state.
type call struct {
	s    *Server
	info CallInfo // immutable

	mu sync.Mutex
	// Set by configure, then read-only.
	script                         Script
	answerURL, ringURL, hangupURL  string
	answerM, ringM, hangupM, mdM   string
	mdURL, amd                     string // amd: "true", "hangup" or ""
	status                         string
	dialled, ended, final, stopped bool
	inFlight                       bool
	answeredAt, endedAt            time.Time
	machine                        string // "true", "false" or ""
	duration                       int
	source                         string // hangup source override
	step                           *time.Timer
	q                              simkit.Queue[delivery]
	held                           []delivery
	xml, xmlType                   string
	answerStatus                   int
	callbacks                      []Callback
}

// newCallOf returns a call of s with its webhook queue wired.
func newCallOf(s *Server) *call {
	c := &call{s: s}
	c.q = simkit.Queue[delivery]{
		Lock:   &c.mu,
		Pumps:  &s.pumps,
		Closed: s.closed.Load,
		Take: func(d delivery) {
			if d.kind == KindHangup {
				c.leave()
			}
		},
		Idle:    c.maybeFinish,
		Deliver: c.deliver,
	}
	return c
}

// configure reads the create body and sets the script.
func (c *call) configure(sc Script) {
	switch sc.Outcome {
	case "":
		sc.Outcome = Human
	case Human, Machine, Busy, NoAnswer, Timeout, Failed, Canceled:
	default:
		sc.Outcome = Failed
	}
	b := c.info.Body
	c.mu.Lock()
	defer c.mu.Unlock()
	c.script = sc
	c.status = "queued"
	c.answerURL, c.answerM = b["answer_url"], method(b["answer_method"])
	c.ringURL, c.ringM = b["ring_url"], method(b["ring_method"])
	c.hangupURL, c.hangupM = b["hangup_url"], method(b["hangup_method"])
	if c.hangupURL == "" { // Plivo: hangup_url defaults to answer_url
		c.hangupURL, c.hangupM = c.answerURL, c.answerM
	}
	if md := b["machine_detection"]; md == "true" || md == "hangup" {
		c.amd, c.mdURL, c.mdM = md, b["machine_detection_url"], method(b["machine_detection_method"])
	}
}

// method normalises an HTTP method parameter: GET, else POST.
func method(m string) string {
	if strings.EqualFold(m, http.MethodGet) {
		return http.MethodGet
	}
	return http.MethodPost
}

// start plays the script from the create on.
func (c *call) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.stopped || c.s.closed.Load() {
		return
	}
	c.after(c.script.QueueDelay, c.dial)
}

// after runs step (with mu held) after d: at once for 0, never for Never.
func (c *call) after(d time.Duration, step func()) {
	switch {
	case d < 0:
		return
	case d == 0:
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

// dial ends the queueing: the call rings (a failed call fails at once).
func (c *call) dial() {
	c.dialled = true
	if c.script.Outcome == Failed {
		c.end("failed")
		return
	}
	c.status = "ringing"
	if c.ringURL != "" {
		c.callback(KindRing, c.params("ringing", "Ring"))
	}
	c.after(c.script.RingDelay, c.pickUp)
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

// answer picks the call up: the answer URL is asked, machine detection
// reported, and the hangup comes after the talk time.
func (c *call) answer() {
	c.status = "in-progress"
	c.answeredAt = time.Now()
	c.enqueue(delivery{kind: KindAnswer, params: c.params("in-progress", "StartApp"), due: c.answeredAt})
	if c.amd != "" {
		c.machine = "false"
		if c.script.Outcome == Machine {
			c.machine = "true"
		}
		p := c.params("in-progress", "MachineDetection")
		p.Set("Machine", c.machine)
		p.Set("IfMachine", map[string]string{"true": "continue", "hangup": "hangup"}[c.amd])
		c.callback(KindMachineDetection, p)
		if c.amd == "hangup" && c.machine == "true" {
			c.source = "Plivo"
			c.end("completed")
			return
		}
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
	if c.hangupURL == "" || c.script.LoseFinal {
		c.leave()
	} else {
		p := c.params(status, "Hangup")
		cause := causes[status]
		src := cause.source
		if c.source != "" {
			src = c.source
		}
		p.Set("Duration", strconv.Itoa(c.duration))
		p.Set("BillDuration", strconv.Itoa(c.duration))
		p.Set("HangupCause", cause.name)
		p.Set("HangupCauseName", cause.name)
		p.Set("HangupCauseCode", strconv.Itoa(cause.code))
		p.Set("HangupSource", src)
		p.Set("StartTime", c.info.Created.UTC().Format(cdrTime))
		if !c.answeredAt.IsZero() {
			p.Set("AnswerTime", c.answeredAt.UTC().Format(cdrTime))
		}
		p.Set("EndTime", c.endedAt.UTC().Format(cdrTime))
		c.callback(KindHangup, p)
	}
	// Out of order: what was held back follows the hangup, latest first.
	due := c.endedAt.Add(c.script.CallbackDelay)
	// (Items already sent were due before endedAt: only queued ones count.)
	if c.q.Len() > 0 && c.q.LastDue().After(due) {
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

// hangUp applies an API hang up (OpHangUp, a dialled live call) or cancel
// (OpCancel, a call not answered yet); it reports whether it applied.
func (c *call) hangUp(op string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ended, op == OpHangUp && !c.dialled, op == OpCancel && !c.answeredAt.IsZero():
		return false
	case !c.answeredAt.IsZero():
		c.source = "API Request"
		c.end("completed")
	default:
		c.end("cancel")
	}
	return true
}

// leave ends the call's time in flight.
func (c *call) leave() {
	if !c.inFlight {
		return
	}
	c.inFlight = false
	c.s.update(func(st *Stats) { st.InFlight-- })
}

// maybeFinish counts the call as final once it ended and has nothing left
// to send.
func (c *call) maybeFinish() {
	if c.ended && !c.final && !c.q.Busy() && len(c.held) == 0 {
		c.final = true
		c.s.update(func(st *Stats) { st.Final++ })
	}
}

// params are the parameters sent with every webhook of the call.
func (c *call) params(callStatus, event string) url.Values {
	return url.Values{
		"CallUUID":        {c.info.CallUUID},
		"RequestUUID":     {c.info.RequestUUID},
		"ALegUUID":        {c.info.CallUUID},
		"ALegRequestUUID": {c.info.RequestUUID},
		"CallStatus":      {callStatus},
		"Direction":       {"outbound"},
		"Event":           {event},
		"From":            {c.info.From},
		"To":              {c.info.To},
	}
}

// callback queues a status callback (ring, machine detection, hangup),
// holding the non-final ones back for OutOfOrder.
func (c *call) callback(kind string, p url.Values) {
	d := delivery{kind: kind, params: p, due: time.Now().Add(c.script.CallbackDelay)}
	if c.script.OutOfOrder && kind != KindHangup {
		c.held = append(c.held, d)
		return
	}
	c.enqueue(d)
	if c.script.Duplicate {
		c.enqueue(d)
	}
}

// enqueue queues d for delivery at d.due, after every webhook due no
// later.
func (c *call) enqueue(d delivery) {
	c.q.Push(d, d.due)
}

// target is the URL and method of a kind of webhook.
func (c *call) target(kind string) (string, string) {
	switch kind {
	case KindRing:
		return c.ringURL, c.ringM
	case KindAnswer:
		return c.answerURL, c.answerM
	case KindMachineDetection:
		return c.mdURL, c.mdM
	}
	return c.hangupURL, c.hangupM
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

// deliver sends one webhook, signed as the dialect signs it, and records
// the answer.
func (c *call) deliver(d delivery) {
	c.mu.Lock()
	target, m := c.target(d.kind)
	c.mu.Unlock()
	req, err := c.s.signedRequest(c.s.ctx, c.s.authToken, target, m, d.params)
	status, body, ctype := 0, "", ""
	if err == nil {
		var resp *http.Response
		resp, err = c.s.client.Do(req)
		if err == nil {
			status, ctype = resp.StatusCode, resp.Header.Get("Content-Type")
			if d.kind == KindAnswer {
				b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxXML))
				body, err = string(b), rerr
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
		}
	}
	failed := err != nil || status < 200 || status > 299
	c.mu.Lock()
	if d.kind == KindAnswer {
		c.xml, c.xmlType, c.answerStatus = body, ctype, status
	}
	if c.s.record && req != nil {
		cb := Callback{Kind: d.kind, URL: req.URL.String(), Method: req.Method, Header: req.Header.Clone(),
			Params: d.params, Status: status}
		if err != nil {
			cb.Err = err.Error()
		}
		c.callbacks = append(c.callbacks, cb)
	}
	c.mu.Unlock()
	c.s.update(func(st *Stats) {
		if d.kind == KindAnswer {
			st.AnswerRequests++
			return
		}
		st.Callbacks++
		if failed {
			st.CallbackErrors++
		}
	})
}

// liveJSON is the live call resource, nil unless the call is dialled and
// not over.
func (c *call) liveJSON() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dialled || c.ended {
		return nil
	}
	return map[string]any{"api_id": newUUID(), "call_status": c.status, "call_uuid": c.info.CallUUID,
		"request_uuid": c.info.RequestUUID, "direction": "outbound", "from": c.info.From, "to": c.info.To,
		"caller_name": "", "session_start": c.info.Created.UTC().Format("2006-01-02 15:04:05.000000"),
		"stir_attestation": "Not Applicable", "stir_verification": "Not Applicable"}
}

// queuedJSON is the queued call resource, nil once the call was dialled.
func (c *call) queuedJSON() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dialled || c.ended {
		return nil
	}
	return map[string]any{"api_id": newUUID(), "call_status": "queued", "call_uuid": c.info.RequestUUID,
		"request_uuid": c.info.RequestUUID, "direction": "outbound", "from": c.info.From, "to": c.info.To,
		"caller_name": ""}
}

// cdrJSON is the call detail record, nil until the call ended.
func (c *call) cdrJSON(s *Server) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		return nil
	}
	cause := causes[c.status]
	src := cause.source
	if c.source != "" {
		src = c.source
	}
	r := map[string]any{"api_id": newUUID(), "answer_time": nil, "bill_duration": c.duration,
		"billed_duration": c.duration, "call_direction": "outbound", "call_duration": c.duration,
		"call_state": nil, "call_uuid": c.info.CallUUID, "conference_uuid": nil,
		"end_time": c.endedAt.UTC().Format(cdrTime), "from_number": c.info.From, "to_number": c.info.To,
		"hangup_cause_code": cause.code, "hangup_cause_name": cause.name, "hangup_source": src,
		"initiation_time": c.info.Created.UTC().Format(cdrTime), "parent_call_uuid": nil,
		"resource_uri": s.prefix + "/Account/" + s.authID + "/Call/" + c.info.CallUUID + "/",
		"total_amount": "0.00000", "total_rate": "0.00000"}
	if !c.answeredAt.IsZero() {
		r["answer_time"] = c.answeredAt.UTC().Format(cdrTime)
		r["call_state"] = "ANSWER"
	}
	return r
}
