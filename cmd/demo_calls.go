package cmd

// The demo's carrier: the bundled Twilio simulator (dialer/carrier/twiliosim)
// on a loopback port, playing a scripted story for every contact.

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/phone"
)

// demoStory is what the calls to one contact do: attempt n plays outcome
// n-1; an attempt beyond the story (a redial from the console) is answered.
type demoStory []twiliosim.Outcome

// demoStories is the mix of one block of 20 contacts: 9 answered (2 of
// them on the retry), 5 voicemail (1 on the retry), 3 no answer, 1 busy
// and 2 failed in the end, with 7 contacts retried (busy or no answer on
// the first call). With the demo's retry_config (one retry, not on
// voicemail) every outcome of the charts shows up, retries too.
var demoStories = [20]demoStory{
	{twiliosim.Human}, {twiliosim.Human}, {twiliosim.Human}, {twiliosim.Human},
	{twiliosim.Human}, {twiliosim.Human}, {twiliosim.Human},
	{twiliosim.Machine}, {twiliosim.Machine}, {twiliosim.Machine}, {twiliosim.Machine},
	{twiliosim.Busy, twiliosim.Human},
	{twiliosim.Busy, twiliosim.Busy},
	{twiliosim.Busy, twiliosim.NoAnswer},
	{twiliosim.NoAnswer, twiliosim.Human},
	{twiliosim.NoAnswer, twiliosim.NoAnswer},
	{twiliosim.NoAnswer, twiliosim.NoAnswer},
	{twiliosim.NoAnswer, twiliosim.Machine},
	{twiliosim.Failed},
	{twiliosim.Failed},
}

// demoStoryOf returns the story of the contact on data row row (0-based,
// header excluded): a permutation of demoStories within every block of 20
// rows (7 is prime to 20), so each block has the whole mix and neighbouring
// rows differ.
func demoStoryOf(row int) demoStory {
	return demoStories[(7*row+3)%len(demoStories)]
}

// demoScript returns the simulator's script function for the contacts of
// rows (E.164 number → data row): each call plays its contact's story,
// with ring and talk times of a fraction of a second to a few seconds that
// vary by row and attempt. A number not in rows (a CSV uploaded in the
// console) gets the story and times of a row taken from its hash.
func demoScript(rows map[string]int) func(twiliosim.CallInfo) twiliosim.Script {
	return func(c twiliosim.CallInfo) twiliosim.Script {
		row := demoRowOf(rows, c.To)
		story := demoStoryOf(row)
		outcome := twiliosim.Human
		if c.Attempt <= len(story) {
			outcome = story[c.Attempt-1]
		}
		// Two spreads in [0, 1], fixed per row and attempt.
		a := float64((row*37+c.Attempt*11)%16) / 15
		b := float64((row*53+c.Attempt*7)%16) / 15
		span := func(from, width time.Duration, x float64) time.Duration {
			return from + time.Duration(x*float64(width))
		}
		sc := twiliosim.Script{Outcome: outcome}
		switch outcome {
		case twiliosim.Human:
			// Long enough for the agent's first audio (demo_agent.go) to
			// come before the callee hangs up, unless it is late.
			sc.RingDelay, sc.TalkDuration = span(400*time.Millisecond, 1500*time.Millisecond, a), span(2500*time.Millisecond, 3*time.Second, b)
		case twiliosim.Machine:
			sc.RingDelay, sc.TalkDuration = span(1200*time.Millisecond, 1500*time.Millisecond, a), span(1500*time.Millisecond, time.Second, b)
		case twiliosim.Busy:
			sc.RingDelay = span(200*time.Millisecond, 500*time.Millisecond, a)
		case twiliosim.NoAnswer:
			sc.RingDelay = span(2500*time.Millisecond, 1500*time.Millisecond, a)
		default:
			sc.RingDelay = span(100*time.Millisecond, 300*time.Millisecond, a)
		}
		return sc
	}
}

// demoRowOf returns the data row of number to among rows; a number not in
// rows (a CSV uploaded in the console) gets a row taken from its hash.
func demoRowOf(rows map[string]int, to string) int {
	if row, ok := rows[to]; ok {
		return row
	}
	h := fnv.New32a()
	io.WriteString(h, to)
	return int(h.Sum32() % (1 << 16))
}

// demoRows returns the data row (0-based) of every number of the contacts
// CSV, normalised as the campaign normalises them.
func demoRows(contacts []byte) (map[string]int, error) {
	recs, err := csv.NewReader(bytes.NewReader(contacts)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("demo contacts: %w", err)
	}
	if len(recs) < 2 || len(recs[0]) == 0 || recs[0][0] != "phone_number" {
		return nil, errors.New("demo contacts: want a phone_number column first and at least one row")
	}
	rows := make(map[string]int, len(recs)-1)
	for i, rec := range recs[1:] {
		e164, err := phone.Normalize(rec[0], "")
		if err != nil {
			return nil, fmt.Errorf("demo contacts, row %d: %w", i+2, err)
		}
		rows[e164] = i
	}
	return rows, nil
}

// demoCarrier is the running simulator.
type demoCarrier struct {
	sim *twiliosim.Server
	srv *http.Server
	url string
}

// startDemoCarrier serves a simulated Twilio account (the simulator's
// default credentials) on a free loopback port, its calls scripted by
// script, its webhooks sent with client.
func startDemoCarrier(script func(twiliosim.CallInfo) twiliosim.Script, client *http.Client, log *slog.Logger) (*demoCarrier, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("twilio simulator: %w", err)
	}
	sim := twiliosim.New(twiliosim.Config{Script: script, Client: client})
	d := &demoCarrier{sim: sim, url: "http://" + ln.Addr().String(), srv: &http.Server{
		Handler:           sim,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
	go func() {
		if err := d.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("twilio simulator", slog.String("error", err.Error()))
		}
	}()
	return d, nil
}

// stop stops serving and ends every simulated call (pending webhooks are
// dropped).
func (d *demoCarrier) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
	d.sim.Close()
}
