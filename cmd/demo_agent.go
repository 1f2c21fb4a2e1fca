package cmd

// The demo's voice agent (API.md 19): nothing takes the media stream, but
// the agent's reports are real. The Twilio simulator fetches each answered
// call's TwiML from the service through demoAgent's transport, which reads
// the <Stream>'s <Parameter name="agent_events_url"> and, as an agent
// runtime would, posts "connected" and then "first_audio" (or "failed")
// to it after the delay the call's plan says, so the console's abandoned
// calls card has figures to show.

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// demoAgentURL is the agent the demo's answered calls connect to: a name
// that resolves nowhere (.invalid), since the simulated carrier never
// opens the stream; it makes the service hand out the stream parameters
// instead of speaking the workflow's greeting.
const demoAgentURL = "wss://agent.demo.invalid/media"

// demoAgentSeed seeds every call's plan: a run of the demo, and its test,
// see the same agent for the same contact and attempt. Under this seed the
// sample campaign's 90 answered calls have one failed agent, one late
// first audio and one never (3.3 %: the rate crosses the 3 % limit late
// in the run), and every histogram kind shows up.
const demoAgentSeed = 48

// demoAgentPlan is what the simulated agent does once a call is answered.
type demoAgentPlan struct {
	// Event is the report after Delay: "first_audio", "failed", or ""
	// (never: the person hears silence).
	Event string
	Delay time.Duration
}

// Abandoned reports whether the plan makes the call abandoned under the
// default abandon_after_ms (2000): a failure, no audio, or audio after 2 s.
func (p demoAgentPlan) Abandoned() bool {
	return p.Event != "first_audio" || p.Delay > 2*time.Second
}

// demoAgentPlanOf returns the plan of attempt attempt to the contact on
// data row row, drawn from a source seeded by demoAgentSeed, the row and
// the attempt: 95 % of the answers get their first audio within 300 to
// 1500 ms, 3 % late (2.5 to 5 s), 1.5 % never, 0.5 % a failed agent.
func demoAgentPlanOf(row, attempt int) demoAgentPlan {
	r := rand.New(rand.NewPCG(demoAgentSeed, uint64(row)<<8|uint64(attempt&0xff)))
	between := func(from, to time.Duration) time.Duration { return from + time.Duration(r.Int64N(int64(to-from))) }
	switch x := r.Float64(); {
	case x < 0.005:
		return demoAgentPlan{Event: "failed", Delay: between(300*time.Millisecond, 800*time.Millisecond)}
	case x < 0.02:
		return demoAgentPlan{}
	case x < 0.05:
		return demoAgentPlan{Event: "first_audio", Delay: between(2500*time.Millisecond, 5*time.Second)}
	}
	return demoAgentPlan{Event: "first_audio", Delay: between(300*time.Millisecond, 1500*time.Millisecond)}
}

// demoAgent is the simulated agent: plans by call SID, and the reports it
// has scheduled.
type demoAgent struct {
	log    *slog.Logger
	client *http.Client // posts the reports
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	plans map[string]demoAgentPlan
}

func newDemoAgent(log *slog.Logger) *demoAgent {
	a := &demoAgent{log: log, plans: map[string]demoAgentPlan{},
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a
}

// expect records the plan of the call sid, before it is answered.
func (a *demoAgent) expect(sid string, p demoAgentPlan) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.plans[sid] = p
}

// answered starts the agent of call sid, which posts to eventsURL.
func (a *demoAgent) answered(sid, eventsURL string) {
	a.mu.Lock()
	p, ok := a.plans[sid]
	delete(a.plans, sid)
	a.mu.Unlock()
	if !ok {
		p = demoAgentPlan{Event: "first_audio", Delay: 700 * time.Millisecond}
	}
	if p.Event != "failed" {
		a.after(min(150*time.Millisecond, p.Delay/2), eventsURL, "connected")
	}
	if p.Event != "" {
		a.after(p.Delay, eventsURL, p.Event)
	}
}

// after posts event to eventsURL after d, unless the agent stops first.
func (a *demoAgent) after(d time.Duration, eventsURL, event string) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-a.ctx.Done():
			return
		case <-t.C:
		}
		if err := a.post(eventsURL, event); err != nil && a.ctx.Err() == nil {
			a.log.Warn("demo agent", slog.String("event", event), slog.String("error", err.Error()))
		}
	}()
}

// post sends one report as an agent runtime does.
func (a *demoAgent) post(eventsURL, event string) error {
	req, err := http.NewRequestWithContext(a.ctx, http.MethodPost, eventsURL,
		strings.NewReader(`{"event":"`+event+`"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	if res.StatusCode != http.StatusNoContent {
		return errors.New("agent events: status " + res.Status)
	}
	return nil
}

// stop drops the reports not sent yet and waits for those under way.
func (a *demoAgent) stop() {
	a.cancel()
	a.wg.Wait()
	a.client.CloseIdleConnections()
}

// simClient is the HTTP client the Twilio simulator sends its webhooks
// with: the answers it fetches start the call's agent.
func (a *demoAgent) simClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &demoAgentTransport{
		base: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}, agent: a}}
}

// demoAgentTransport passes the simulator's requests on and reads the
// TwiML answers.
type demoAgentTransport struct {
	base  http.RoundTripper
	agent *demoAgent
}

// maxDemoTwiML bounds how much of an answer is read for its parameters.
const maxDemoTwiML = 64 << 10

func (t *demoAgentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	sid := callSIDOf(req)
	res, err := t.base.RoundTrip(req)
	if err != nil || sid == "" || !strings.Contains(res.Header.Get("Content-Type"), "xml") {
		return res, err
	}
	head, err := io.ReadAll(io.LimitReader(res.Body, maxDemoTwiML))
	if err != nil {
		res.Body.Close()
		return nil, err
	}
	res.Body = readCloser{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
	if u := streamParameter(head, "agent_events_url"); u != "" {
		t.agent.answered(sid, u)
	}
	return res, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// callSIDOf returns the CallSid of a webhook request (its form or, for a
// GET, its query), "" when it has none.
func callSIDOf(req *http.Request) string {
	if req.Method == http.MethodGet {
		return req.URL.Query().Get("CallSid")
	}
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return ""
	}
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return ""
	}
	return form.Get("CallSid")
}

// streamParameter returns the value of TwiML's <Parameter name="name">
// (inside <Stream>), "" when there is none.
func streamParameter(twiml []byte, name string) string {
	d := xml.NewDecoder(bytes.NewReader(twiml))
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "Parameter" {
			continue
		}
		var n, v string
		for _, at := range el.Attr {
			switch at.Name.Local {
			case "name":
				n = at.Value
			case "value":
				v = at.Value
			}
		}
		if n == name {
			return v
		}
	}
}
