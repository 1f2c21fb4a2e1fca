package twiliosim

// One simulated call: its script's steps (time.AfterFunc) and the queue of
// webhooks it sends, delivered in order by at most one goroutine at a time.

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

// maxTwiML bounds how much of an answer webhook's answer is kept.
const maxTwiML = 64 << 10

// delivery is one queued webhook.
type delivery struct {
	answer bool // the answer webhook (else a status callback)
	final  bool // the final status callback
	params url.Values
	due    time.Time
}

type call struct {
	s    *Server
	info CallInfo // immutable

	mu sync.Mutex
	// Set by configure, then read-only.
	script                  Script
	answerURL, answerMethod string
	twimlInline             string
	cbURL, cbMethod         string
	events                  map[string]bool // nil: only "completed"
	amd                     string          // MachineDetection asked for, or ""

	status              string
	answeredBy          string
	answeredAt, endedAt time.Time
	duration            int
	seq                 int
	step                *time.Timer // the pending script step
	q                   simkit.Queue[delivery]
	held                []delivery // OutOfOrder callbacks held back
	ended, inFlight     bool
	final, stopped      bool
	twiml, twimlType    string
	answerStatus        int
	callbacks           []Callback
}

// makeCall returns a call of s, its queue wired to it.
func makeCall(s *Server) *call {
	c := &call{s: s}
	c.q = simkit.Queue[delivery]{
		Lock:   &c.mu,
		Pumps:  &s.pumps,
		Closed: s.closed.Load,
		Take: func(d delivery) {
			if d.final {
				c.leave()
			}
		},
		Idle:    c.maybeFinish,
		Deliver: c.deliver,
	}
	return c
}

// configure reads the create form and sets the script.
func (c *call) configure(sc Script) {
	switch sc.Outcome {
	case "":
		sc.Outcome = Human
	case Human, Machine, Busy, NoAnswer, Failed, Canceled:
	default:
		sc.Outcome = Failed
	}
	f := c.info.Form
	c.mu.Lock()
	defer c.mu.Unlock()
	c.script = sc
	c.status = "queued"
	c.answerURL = f.Get("Url")
	c.answerMethod = method(f.Get("Method"))
	c.twimlInline = f.Get("Twiml")
	c.cbURL = f.Get("StatusCallback")
	c.cbMethod = method(f.Get("StatusCallbackMethod"))
	for _, v := range f["StatusCallbackEvent"] {
		for _, e := range strings.Fields(v) {
			if c.events == nil {
				c.events = map[string]bool{}
			}
			c.events[e] = true
		}
	}
	if md := f.Get("MachineDetection"); md == "Enable" || md == "DetectMessageEnd" {
		c.amd = md
	}
}

func method(m string) string {
	if strings.EqualFold(m, http.MethodGet) {
		return http.MethodGet
	}
	return http.MethodPost
}

// wants reports whether the call asked for the status callback event e.
func (c *call) wants(e string) bool {
	if c.events == nil {
		return e == "completed"
	}
	return c.events[e]
}

// start plays the script from the create on.
func (c *call) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.stopped || c.s.closed.Load() {
		return
	}
	c.event("initiated", "initiated")
	if c.script.Outcome != Failed {
		c.status = "ringing"
		c.event("ringing", "ringing")
	}
	c.after(c.script.RingDelay, c.pickUp)
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
	c.status = "in-progress"
	c.answeredAt = time.Now()
	if c.amd != "" {
		switch {
		case c.script.AnsweredBy != "":
			c.answeredBy = c.script.AnsweredBy
		case c.script.Outcome == Machine && c.amd == "DetectMessageEnd":
			c.answeredBy = "machine_end_beep"
		case c.script.Outcome == Machine:
			c.answeredBy = "machine_start"
		default:
			c.answeredBy = "human"
		}
	}
	switch {
	case c.answerURL != "":
		c.enqueue(delivery{answer: true, params: c.params("in-progress"), due: c.answeredAt})
	case c.twimlInline != "":
		c.twiml, c.twimlType = c.twimlInline, "text/xml"
	}
	c.event("answered", "in-progress")
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
		c.duration = c.script.CallDuration
		if c.duration == 0 {
			c.duration = int(math.Round(c.endedAt.Sub(c.answeredAt).Seconds()))
		}
	}
	if c.cbURL == "" || !c.wants("completed") || c.script.LoseFinal {
		c.leave()
	} else {
		c.event("completed", status)
	}
	// Out of order: what was held back follows the final, latest first.
	// (Anything queued earlier and already sent was due before now.)
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

// hangUp applies an update request's Status.
func (c *call) hangUp(status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	switch {
	case c.answeredAt.IsZero():
		c.end("canceled")
	case status == "completed":
		c.end("completed")
	}
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

// params are the parameters Twilio sends with every webhook of the call.
func (c *call) params(callStatus string) url.Values {
	p := url.Values{
		"AccountSid": {c.s.accountSID},
		"ApiVersion": {"2010-04-01"},
		"CallSid":    {c.info.SID},
		"CallStatus": {callStatus},
		"Called":     {c.info.To},
		"Caller":     {c.info.From},
		"Direction":  {"outbound-api"},
		"From":       {c.info.From},
		"To":         {c.info.To},
	}
	if c.answeredBy != "" {
		p.Set("AnsweredBy", c.answeredBy)
	}
	return p
}

// event queues the status callback of event e (when asked for) with
// CallStatus callStatus.
func (c *call) event(e, callStatus string) {
	if c.cbURL == "" || !c.wants(e) {
		return
	}
	now := time.Now()
	p := c.params(callStatus)
	p.Set("SequenceNumber", strconv.Itoa(c.seq))
	c.seq++
	p.Set("Timestamp", now.UTC().Format(twilioTime))
	p.Set("CallbackSource", "call-progress-events")
	final := e == "completed"
	if final {
		p.Set("CallDuration", strconv.Itoa(c.duration))
		p.Set("Duration", strconv.Itoa((c.duration+59)/60))
	}
	d := delivery{final: final, params: p, due: now.Add(c.script.CallbackDelay)}
	if c.script.OutOfOrder && !final {
		c.held = append(c.held, d)
		return
	}
	c.enqueue(d)
	if c.script.Duplicate {
		c.enqueue(d)
	}
}

// enqueue queues d for delivery at d.due (after every item due no later).
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

// deliver sends one webhook, signed as Twilio signs it, and records the
// answer.
func (c *call) deliver(d delivery) {
	target, m := c.cbURL, c.cbMethod
	if d.answer {
		target, m = c.answerURL, c.answerMethod
	}
	var req *http.Request
	var err error
	sig := ""
	if m == http.MethodGet {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + d.params.Encode()
		req, err = http.NewRequestWithContext(c.s.ctx, http.MethodGet, target, nil)
		sig = Signature(c.s.authToken, target, nil)
	} else {
		req, err = http.NewRequestWithContext(c.s.ctx, http.MethodPost, target, strings.NewReader(d.params.Encode()))
		sig = Signature(c.s.authToken, target, d.params)
	}
	status, body, ctype := 0, "", ""
	if err == nil {
		req.Header.Set("X-Twilio-Signature", sig)
		req.Header.Set("User-Agent", "TwilioProxy/1.1")
		req.Header.Set("I-Twilio-Idempotency-Token", c.info.SID+"-"+d.params.Get("SequenceNumber"))
		if m == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		var resp *http.Response
		resp, err = c.s.client.Do(req)
		if err == nil {
			status, ctype = resp.StatusCode, resp.Header.Get("Content-Type")
			if d.answer {
				b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxTwiML))
				body, err = string(b), rerr
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
		}
	}
	failed := err != nil || status < 200 || status > 299
	c.mu.Lock()
	if d.answer {
		c.twiml, c.twimlType, c.answerStatus = body, ctype, status
	} else if c.s.record {
		cb := Callback{Params: d.params, Status: status}
		if err != nil {
			cb.Err = err.Error()
		}
		c.callbacks = append(c.callbacks, cb)
	}
	c.mu.Unlock()
	c.s.counters.Update(func(st *Stats) {
		if d.answer {
			st.AnswerRequests++
			return
		}
		st.Callbacks++
		if failed {
			st.CallbackErrors++
		}
	})
}

// resource is the call's JSON Call resource.
func (c *call) resource() resourceJSON {
	c.mu.Lock()
	defer c.mu.Unlock()
	acct, sid := c.s.accountSID, c.info.SID
	base := "/2010-04-01/Accounts/" + acct + "/Calls/" + sid
	r := resourceJSON{
		Sid: sid, AccountSid: acct, To: c.info.To, ToFormatted: c.info.To, From: c.info.From, FromFormatted: c.info.From,
		Status: c.status, Direction: "outbound-api",
		DateCreated: c.info.Created.UTC().Format(twilioTime), DateUpdated: c.info.Created.UTC().Format(twilioTime),
		APIVersion: "2010-04-01", QueueTime: "0", PriceUnit: "USD", URI: base + ".json",
		SubresourceURIs: map[string]string{
			"events":        base + "/Events.json",
			"notifications": base + "/Notifications.json",
			"recordings":    base + "/Recordings.json",
		},
	}
	if c.answeredBy != "" {
		r.AnsweredBy = strPtr(c.answeredBy)
	}
	if !c.answeredAt.IsZero() {
		r.StartTime = strPtr(c.answeredAt.UTC().Format(twilioTime))
	}
	if c.ended {
		r.EndTime = strPtr(c.endedAt.UTC().Format(twilioTime))
		r.Duration = strPtr(strconv.Itoa(c.duration))
		r.DateUpdated = c.endedAt.UTC().Format(twilioTime)
	}
	return r
}
