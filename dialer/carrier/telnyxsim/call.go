package telnyxsim

// One simulated call: its script's steps (time.AfterFunc) and the queue of
// events it sends (simkit.Queue).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// telnyxTime is the timestamp format of Telnyx events (RFC 3339, UTC,
// microseconds).
const telnyxTime = "2006-01-02T15:04:05.000000Z"

// delivery is one queued event.
type delivery struct {
	eventType string
	body      []byte // the JSON envelope, fixed when the event happened
	final     bool   // call.hangup
}

// call is one dialled call: its script, state, event queue and records.
// mu guards everything below it.
type call struct {
	s    *Server
	info CallInfo // immutable
	url  string   // where events go ("" when nowhere)

	mu                  sync.Mutex
	script              Script
	state               string // parked (ringing), answered, hangup
	answeredAt, endedAt time.Time
	hangupCause         string
	step, talkTimer     *time.Timer
	q                   simkit.Queue[delivery]
	held                []delivery // events held back (OutOfOrder)
	ended, inFlight     bool
	final, stopped      bool
	commands            []Command
	commandIDs          map[string]bool // command_ids of the commands received
	streamURL           string
	events              []Event
}

// configure sets the script (unknown outcomes become Failed).
func (c *call) configure(sc Script) {
	switch sc.Outcome {
	case "":
		sc.Outcome = Human
	case Human, Machine, Fax, Busy, NoAnswer, Rejected, NotFound, Failed, Canceled:
	default:
		sc.Outcome = Failed
	}
	c.mu.Lock()
	c.script = sc
	c.state = "parked"
	c.streamURL = c.info.Dial.StreamURL
	c.mu.Unlock()
}

// answers reports whether the script's outcome picks up.
func (sc Script) answers() bool {
	return sc.Outcome == Human || sc.Outcome == Machine || sc.Outcome == Fax
}

// start plays the script from the dial on.
func (c *call) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.stopped || c.s.closed.Load() {
		return
	}
	c.event("call.initiated", map[string]any{"direction": "outgoing", "state": "bridging"})
	ring := c.script.RingDelay
	if limit := time.Duration(c.info.Dial.TimeoutSecs) * time.Second; limit > 0 && c.script.answers() && (ring < 0 || ring > limit) {
		c.after(&c.step, limit, func() { c.end("timeout", "callee", "") })
		return
	}
	c.after(&c.step, ring, c.pickUp)
}

// after runs step (with mu held) after d: at once for 0, never for Never.
// The timer is kept in *t so the step can be stopped.
func (c *call) after(t **time.Timer, d time.Duration, step func()) {
	switch {
	case d < 0:
		return
	case d == 0:
		step()
		return
	}
	*t = time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.ended && !c.stopped {
			step()
		}
	})
}

// scriptedEnds are the hangup_cause and sip_hangup_cause of the outcomes
// that do not answer.
var scriptedEnds = map[Outcome][2]string{
	Busy:     {"user_busy", "486"},
	NoAnswer: {"timeout", "487"},
	Rejected: {"call_rejected", "603"},
	NotFound: {"not_found", "404"},
	Failed:   {"unspecified", "503"},
	Canceled: {"originator_cancel", "487"},
}

// pickUp ends the ringing: answered, or the script's hangup.
func (c *call) pickUp() {
	if c.script.answers() {
		c.answer()
		return
	}
	e := scriptedEnds[c.script.Outcome]
	c.scriptedEnd(e[0], "callee", e[1])
}

// scriptedEnd ends the call by the script, applying its cause overrides.
func (c *call) scriptedEnd(cause, source, sip string) {
	if c.script.HangupCause != "" {
		cause = c.script.HangupCause
	}
	if c.script.SIPHangupCause != "" {
		sip = c.script.SIPHangupCause
	}
	c.end(cause, source, sip)
}

// answer picks the call up: call.answered, streaming.started when the dial
// asked for a stream, the machine-detection events when it asked for them,
// and the callee's (or the time limit's) hang-up later.
func (c *call) answer() {
	c.state = "answered"
	c.answeredAt = c.s.now()
	c.event("call.answered", map[string]any{"direction": "outgoing", "state": "answered",
		"start_time": c.answeredAt.UTC().Format(telnyxTime)})
	if c.streamURL != "" {
		c.event("streaming.started", map[string]any{"stream_url": c.streamURL})
	}
	c.machineEvents()
	talk := c.script.TalkDuration
	if limit := time.Duration(c.info.Dial.TimeLimitSecs) * time.Second; limit > 0 && (talk < 0 || talk > limit) {
		c.after(&c.talkTimer, limit, func() { c.end("time_limit", "unknown", "") })
		return
	}
	c.after(&c.talkTimer, talk, func() { c.scriptedEnd("normal_clearing", "callee", "") })
}

// machineEvents sends the answering-machine-detection events the dial's
// answering_machine_detection asks for.
func (c *call) machineEvents() {
	mode := c.info.Dial.AnsweringMachineDetection
	if mode == "" || mode == "disabled" {
		return
	}
	machine := c.script.Outcome != Human
	if mode == "premium" {
		result := map[Outcome]string{Human: "human_residence", Machine: "machine", Fax: "fax_detected"}[c.script.Outcome]
		if c.script.AMDResult != "" {
			result = c.script.AMDResult
		}
		c.event("call.machine.premium.detection.ended", map[string]any{"result": result})
		if result == "machine" {
			c.event("call.machine.premium.greeting.ended", map[string]any{"result": "beep_detected"})
		}
		return
	}
	result := "human"
	if machine {
		result = "machine" // standard detection does not tell a fax apart
	}
	if c.script.AMDResult != "" {
		result = c.script.AMDResult
	}
	c.event("call.machine.detection.ended", map[string]any{"result": result})
	if result == "machine" && (mode == "greeting_end" || mode == "detect_words" || mode == "detect_beep") {
		c.event("call.machine.greeting.ended", map[string]any{"result": "beep_detected"})
	}
}

// speak plays a speak command: call.speak.started now, call.speak.ended
// SpeakDuration later (unless the call ends first).
func (c *call) speak() {
	c.event("call.speak.started", nil)
	var t *time.Timer
	c.after(&t, c.script.SpeakDuration, func() {
		c.event("call.speak.ended", map[string]any{"status": "completed"})
	})
}

// hangUp applies the hangup command: an answered call ends normal_clearing,
// one still ringing originator_cancel, both from the caller (us).
func (c *call) hangUp() {
	if c.state == "answered" {
		c.end("normal_clearing", "caller", "")
		return
	}
	c.end("originator_cancel", "caller", "487")
}

// end gives the call its call.hangup, once.
func (c *call) end(cause, source, sip string) {
	if c.ended {
		return
	}
	c.ended = true
	for _, t := range []*time.Timer{c.step, c.talkTimer} {
		if t != nil {
			t.Stop()
		}
	}
	c.state = "hangup"
	c.hangupCause = cause
	c.endedAt = c.s.now()
	start := c.info.Created
	if !c.answeredAt.IsZero() {
		start = c.answeredAt
	}
	p := map[string]any{"state": "hangup", "hangup_cause": cause, "hangup_source": source,
		"start_time": start.UTC().Format(telnyxTime), "end_time": c.endedAt.UTC().Format(telnyxTime)}
	if sip != "" {
		p["sip_hangup_cause"] = sip
	}
	if c.url == "" || c.script.LoseFinal {
		c.leave()
	} else {
		c.event("call.hangup", p)
	}
	// Out of order: what was held back follows the final, latest first.
	due := time.Now().Add(c.script.EventDelay)
	if c.q.Len() > 0 && c.q.LastDue().After(due) {
		due = c.q.LastDue()
	}
	for i := len(c.held) - 1; i >= 0; i-- {
		d := c.held[i]
		c.push(d, due)
		if c.script.Duplicate {
			c.push(d, due)
		}
	}
	c.held = nil
	c.maybeFinish()
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

// event queues the event eventType with the call's common payload fields
// plus extra.
func (c *call) event(eventType string, extra map[string]any) {
	if c.url == "" {
		return
	}
	now := c.s.now()
	p := map[string]any{
		"call_control_id": c.info.CallControlID, "call_leg_id": c.info.CallLegID,
		"call_session_id": c.info.CallSessionID, "connection_id": c.info.Dial.ConnectionID,
		"from": c.info.From, "to": c.info.To,
	}
	if c.info.Dial.ClientState != "" {
		p["client_state"] = c.info.Dial.ClientState
	}
	for k, v := range extra {
		p[k] = v
	}
	env := map[string]any{"data": map[string]any{"record_type": "event", "event_type": eventType, "id": newUUID(),
		"occurred_at": now.UTC().Format(telnyxTime), "payload": p}, "meta": map[string]any{"attempt": 1, "delivered_to": c.url}}
	body, _ := json.Marshal(env) // maps of strings always encode
	final := eventType == "call.hangup"
	d := delivery{eventType: eventType, body: body, final: final}
	if c.script.OutOfOrder && !final && !c.ended {
		c.held = append(c.held, d)
		return
	}
	due := time.Now().Add(c.script.EventDelay)
	c.push(d, due)
	if c.script.Duplicate {
		c.push(d, due)
	}
}

// push queues d, due at due (mu held).
func (c *call) push(d delivery, due time.Time) {
	c.q.Push(d, due)
}

// take sees d leave the queue (mu held): the call is no longer in flight
// once its call.hangup starts going out.
func (c *call) take(d delivery) {
	if d.final {
		c.leave()
	}
}

// stop ends the script and the deliveries for Close.
func (c *call) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	for _, t := range []*time.Timer{c.step, c.talkTimer} {
		if t != nil {
			t.Stop()
		}
	}
	c.q.Stop()
}

// deliver signs and posts one event and records the answer.
func (c *call) deliver(d delivery) {
	ev := c.s.signed(c.url, d.eventType, d.body)
	status, err := c.s.post(c.s.ctx, ev)
	ev.Status = status
	if err != nil {
		ev.Err = err.Error()
	}
	if c.s.record {
		c.mu.Lock()
		c.events = append(c.events, ev)
		c.mu.Unlock()
	}
	failed := err != nil || status < 200 || status > 299
	c.s.update(func(st *Stats) {
		st.Events++
		if failed {
			st.EventErrors++
		}
	})
}

// post sends ev exactly (URL, body, signature headers) and returns the HTTP
// status answered.
func (s *Server) post(ctx context.Context, ev Event) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ev.URL, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "telnyx-webhooks")
	req.Header.Set(SignatureHeader, ev.Signature)
	req.Header.Set(TimestampHeader, ev.Timestamp)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// resource is the call's JSON, as GET /v2/calls/{id} answers it.
func (c *call) resource() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := map[string]any{"call_control_id": c.info.CallControlID, "call_leg_id": c.info.CallLegID,
		"call_session_id": c.info.CallSessionID, "is_alive": !c.ended, "record_type": "call",
		"start_time": c.info.Created.UTC().Format(telnyxTime)}
	if c.info.Dial.ClientState != "" {
		r["client_state"] = c.info.Dial.ClientState
	}
	end := c.s.now()
	if c.ended {
		end = c.endedAt
		r["end_time"] = c.endedAt.UTC().Format(telnyxTime)
	}
	r["call_duration"] = int(math.Round(end.Sub(c.info.Created).Seconds()))
	return r
}

// command records a command the call got.
func (c *call) command(name string, body []byte) {
	c.commands = append(c.commands, Command{Name: name, Body: append([]byte(nil), body...), At: time.Now()})
}

// dialAnswer is the data of the dial's 200 answer.
func (c *call) dialAnswer() map[string]any {
	return map[string]any{"call_control_id": c.info.CallControlID, "call_leg_id": c.info.CallLegID,
		"call_session_id": c.info.CallSessionID, "is_alive": false, "record_type": "call",
		"client_state": c.info.Dial.ClientState, "call_duration": 0, "start_time": c.info.Created.UTC().Format(telnyxTime)}
}
