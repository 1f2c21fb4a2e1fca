package cmd

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The agent's plans are fixed per contact and attempt and follow the
// announced mix; the demo's own answered calls include abandoned ones
// (so its console shows the card at work) and mostly timely audio.
func TestDemoAgentPlans(t *testing.T) {
	if a, b := demoAgentPlanOf(17, 1), demoAgentPlanOf(17, 1); a != b {
		t.Fatalf("the plan of one contact and attempt changes: %+v, then %+v", a, b)
	}
	n := map[string]int{}
	const draws = 20_000
	for row := range draws / 2 {
		for attempt := 1; attempt <= 2; attempt++ {
			p := demoAgentPlanOf(row, attempt)
			switch {
			case p.Event == "failed":
				n["failed"]++
			case p.Event == "":
				n["never"]++
			case p.Delay > 2*time.Second:
				n["late"]++
				if p.Delay < 2500*time.Millisecond || p.Delay >= 5*time.Second {
					t.Fatalf("late delay %s outside 2.5-5 s", p.Delay)
				}
			default:
				n["timely"]++
				if p.Delay < 300*time.Millisecond || p.Delay >= 1500*time.Millisecond {
					t.Fatalf("timely delay %s outside 0.3-1.5 s", p.Delay)
				}
			}
		}
	}
	for kind, share := range map[string]float64{"failed": 0.005, "never": 0.015, "late": 0.03, "timely": 0.95} {
		if got := float64(n[kind]) / draws; got < share*0.7 || got > share*1.3 {
			t.Errorf("%s: %.4f of the plans, want about %.3f", kind, got, share)
		}
	}

	rows, err := demoRows(demoContacts)
	if err != nil {
		t.Fatal(err)
	}
	answered, abandoned, kinds := 0, 0, map[string]int{}
	for _, row := range rows {
		if outcome, attempts := demoFinal(demoStoryOf(row)); outcome == "answered" {
			answered++
			p := demoAgentPlanOf(row, attempts)
			if p.Abandoned() {
				abandoned++
				kinds[p.Event+" "+strconv.FormatBool(p.Delay > 2*time.Second)]++
			}
		}
	}
	if abandoned == 0 || abandoned*4 > answered {
		t.Errorf("%d of the demo's %d answered calls have an abandoning agent, want some, under a quarter", abandoned, answered)
	}
	// The seed gives the demo a late first audio, a silent agent and a
	// failed one: every kind the console's card tells apart.
	for _, kind := range []string{"first_audio true", " false", "failed false"} {
		if kinds[kind] == 0 {
			t.Errorf("no answered call of the demo plans %q: %v", kind, kinds)
		}
	}
	t.Logf("%d of %d answered calls planned abandoned: %v", abandoned, answered, kinds)
}

// The transport passes the simulator's webhooks on untouched and starts
// the agent of a call whose TwiML answer carries agent_events_url, which
// then posts connected and its plan's event there.
func TestDemoAgentTransport(t *testing.T) {
	var mu sync.Mutex
	var got []string
	posted := make(chan struct{}, 4)
	events := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 100)
		n, _ := r.Body.Read(b)
		mu.Lock()
		got = append(got, r.URL.Query().Get("t")+" "+string(b[:n]))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		posted <- struct{}{}
	}))
	defer events.Close()
	eventsURL := events.URL + "/api/v1/telephony/agent/7?t=tok"
	twiml := `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://agent.demo.invalid/media">` +
		`<Parameter name="attempt_id" value="7"/><Parameter name="agent_events_url" value="` +
		strings.ReplaceAll(eventsURL, "&", "&amp;") + `"/></Stream></Connect></Response>`
	answer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(twiml))
	}))
	defer answer.Close()

	a := newDemoAgent(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer a.stop()
	a.expect("CA1", demoAgentPlan{Event: "first_audio", Delay: 20 * time.Millisecond})
	res, err := a.simClient().PostForm(answer.URL, url.Values{"CallSid": {"CA1"}, "CallStatus": {"in-progress"}})
	if err != nil {
		t.Fatal(err)
	}
	body := new(strings.Builder)
	_, _ = io.Copy(body, res.Body)
	res.Body.Close()
	if body.String() != twiml {
		t.Fatalf("the simulator got %q, want the answer as sent", body.String())
	}
	for range 2 {
		select {
		case <-posted:
		case <-time.After(5 * time.Second):
			t.Fatalf("the agent posted %v, want connected and first_audio", got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != `tok {"event":"connected"}|tok {"event":"first_audio"}` {
		t.Errorf("posted %q", got)
	}
}
