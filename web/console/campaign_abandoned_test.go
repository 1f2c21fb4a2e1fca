package console_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
)

// newEnvDialer is newEnv with a dialer engine (not started: nothing
// dials) on the env's clock, so that the campaign page gets a diagnosis
// and its abandoned_rate_24h.
func newEnvDialer(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.srv.Close()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := dialer.New(dialer.Config{DB: e.db, Log: log, PublicURL: "http://127.0.0.1:1", TokenKey: key, Now: e.clock.now})
	e.srv = httptest.NewServer(web.New(web.Config{DB: e.db, Log: log, Version: "test", Dialer: eng, ConsoleNow: e.clock.now}))
	t.Cleanup(e.srv.Close)
	return e
}

// never is a wait of answeredCalls: the agent never reported first audio.
const never = -1

// answeredCalls places one call per wait to campaign id's contacts (it has
// at least len(waits)) through the store, each answered by a person an
// hour before now and ended a minute later: the agent's first audio came
// wait ms after the answer, or never. Under the default abandon_after_ms
// (2000) a wait above 2000 ms or never is an abandoned call.
func (e *env) answeredCalls(id int64, waits ...int64) {
	e.t.Helper()
	ctx := context.Background()
	c, err := e.db.GetCampaign(ctx, e.p.OrganizationID, id)
	if err != nil {
		e.t.Fatal(err)
	}
	l, ok, err := e.db.AcquireLease(ctx, id, "test-node", time.Hour)
	if err != nil || !ok {
		e.t.Fatalf("lease: %v %v", ok, err)
	}
	now := e.clock.now()
	list, err := e.db.ClaimAttempts(ctx, l, now, now.Add(time.Hour), c.Timezones, len(waits))
	if err != nil || len(list) != len(waits) {
		e.t.Fatalf("claim: %d of %d: %v", len(list), len(waits), err)
	}
	noRetry := func(store.RetryConfig, int64, string) (bool, time.Time) { return false, time.Time{} }
	for i, wait := range waits {
		at, aid := now.Add(-time.Hour), list[i].ID
		if _, err := e.db.ApplyStatus(ctx, aid, store.StatusUpdate{At: at, Raw: "in-progress", Sequence: 1, Answered: true,
			FromProvider: true}, nil); err != nil {
			e.t.Fatal(err)
		}
		if wait != never {
			if _, err := e.db.AgentEvent(ctx, aid, store.AgentFirstAudio, at.Add(time.Duration(wait)*time.Millisecond), nil); err != nil {
				e.t.Fatal(err)
			}
		}
		if _, err := e.db.ApplyStatus(ctx, aid, store.StatusUpdate{At: at.Add(time.Minute), Raw: "completed", Final: true,
			Outcome: "answered", Sequence: 2, FromProvider: true}, noRetry); err != nil {
			e.t.Fatal(err)
		}
	}
}

var (
	rateBlock   = regexp.MustCompile(`(?s)<div class="rate rate-(\w+)" data-scope="(\w+)" data-level="(\w+)">(.*?)</div>`)
	bucketItem  = regexp.MustCompile(`(?s)<li(?: class="late")? data-from="(-?\d+)">.*?data-field="bucket_count">(\d+)</span></li>`)
	meterValue  = regexp.MustCompile(`<meter [^>]*value="([^"]+)"[^>]*data-field="rate_meter"[^>]*?( hidden)?>`)
	rateShown   = regexp.MustCompile(`<strong data-field="rate">([^<]*)</strong>`)
	firstAudios = regexp.MustCompile(`data-field="first_audio">([^<]*)</td>`)
)

// abandonCard is what the page's card shows of one rate.
type abandonCard struct {
	level, text, meter string
	null               bool
}

// abandonRates reads the card's two rates by scope.
func abandonRates(t *testing.T, body string) map[string]abandonCard {
	t.Helper()
	out := map[string]abandonCard{}
	for _, m := range rateBlock.FindAllStringSubmatch(body, -1) {
		if m[1] != m[3] {
			t.Errorf("%s: class level %s, data-level %s", m[2], m[1], m[3])
		}
		c := abandonCard{level: m[1]}
		if mv := meterValue.FindStringSubmatch(m[4]); mv != nil {
			c.meter = mv[1]
			c.null = mv[2] != ""
		} else {
			t.Errorf("%s: no meter in %s", m[2], m[4])
		}
		if r := rateShown.FindStringSubmatch(m[4]); r != nil {
			c.text = r[1]
		}
		if strings.Contains(m[4], `data-field="rate_none">`) != c.null {
			t.Errorf("%s: the null sentence and the meter disagree: %s", m[2], m[4])
		}
		out[m[2]] = c
	}
	if len(out) != 2 {
		t.Fatalf("%d rates on the card, want campaign and organization", len(out))
	}
	return out
}

// The card shows each abandoned_rate_24h against the default limit of 3 %
// (the policy has no abandonment setting yet, or its default): "not
// enough calls yet" below 10 answered calls, else the rate, a meter on a
// scale of twice the limit that warns from 2 % and is high above 3 %, and
// the level as a class.
func TestCampaignAbandonedRates(t *testing.T) {
	cases := []struct {
		name  string
		waits []int64
		want  abandonCard
	}{
		{"below 10 answered", []int64{100, never, 3000}, abandonCard{level: "none", null: true, meter: "0"}},
		{"none abandoned", []int64{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 2000},
			abandonCard{level: "ok", text: "0 %", meter: "0"}},
		{"below the limit, warned", append(repeat(39, 800), never), abandonCard{level: "warn", text: "2.5 %", meter: "0.025"}},
		{"above the limit", append(repeat(10, 800), 2001, never), abandonCard{level: "over", text: "16.7 %", meter: "0.06"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvDialer(t)
			b := e.browser()
			b.signIn(e.key)
			id := e.campaign(e.p.OrganizationID, "rates", len(tc.waits))
			e.answeredCalls(id, tc.waits...)
			a := b.get(fmt.Sprintf("/console/campaigns/%d", id))
			wantStatus(t, "campaign page", a, http.StatusOK)
			if !strings.Contains(a.body, `<h2 id="h-abandon">Abandoned calls</h2>`) || !strings.Contains(a.body, `data-max-rate="0.03"`) {
				t.Fatal("no Abandoned calls card with the limit 0.03")
			}
			if !strings.Contains(a.body, `max="0.06" low="0.02" high="0.03" optimum="0"`) {
				t.Error("the meters' scale is not twice the limit, warning from two thirds of it")
			}
			rates := abandonRates(t, a.body)
			// One campaign: the organization's rate is the campaign's.
			for _, scope := range []string{"campaign", "organization"} {
				if got := rates[scope]; got != tc.want {
					t.Errorf("%s: %+v, want %+v", scope, got, tc.want)
				}
			}
			shown := strings.Count(a.body, `data-field="rate_none">not enough calls yet (below 10 answered by a person in 24 h)`)
			if want := map[bool]int{true: 2, false: 0}[tc.want.null]; shown != want {
				t.Errorf("the null sentence shown %d times, want %d", shown, want)
			}
			if !tc.want.null && !strings.Contains(a.body, tc.want.text+"</strong> of the calls answered by a person\n            — limit 3 %") {
				t.Errorf("no sentence %q against the limit", tc.want.text)
			}
		})
	}
}

func repeat(n int, wait int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = wait
	}
	return out
}

// The histogram counts the campaign's answered calls by their wait for the
// first audio, each bucket from its lower bound on (0.5 s is in 0.5–1 s),
// "never" apart; the buckets past 2 s are marked late; the calls table
// shows each call's wait and whether it was abandoned.
func TestCampaignFirstAudioHistogram(t *testing.T) {
	e := newEnvDialer(t)
	b := e.browser()
	b.signIn(e.key)
	waits := []int64{0, 499, 500, 999, 1000, 1999, 2000, 2999, 3000, 4999, 5000, 60_000, never, never}
	id := e.campaign(e.p.OrganizationID, "histogram", len(waits)+1) // one contact never called
	e.answeredCalls(id, waits...)
	a := b.get(fmt.Sprintf("/console/campaigns/%d", id))
	wantStatus(t, "campaign page", a, http.StatusOK)

	got := map[string]string{}
	for _, m := range bucketItem.FindAllStringSubmatch(a.body, -1) {
		got[m[1]] = m[2]
	}
	want := map[string]string{"0": "2", "500": "2", "1000": "2", "2000": "2", "3000": "2", "5000": "2", "-1": "2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("buckets (from ms: calls) %v, want %v", got, want)
	}
	for _, want := range []string{
		`<li class="late" data-from="2000">`, `<li class="late" data-from="-1">`, `<li data-from="1000">`,
		`<progress max="14" value="2" data-field="bucket_bar">2</progress>`,
		`<span data-field="first_audio_sample">14</span> calls answered by a person.`,
		`title="From the answer to the agent`,
	} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if m := regexp.MustCompile(`data-counted="([^"]*)"`).FindStringSubmatch(a.body); m == nil || len(strings.Split(m[1], ",")) != 14 {
		t.Errorf("data-counted does not list the 14 calls counted: %v", m)
	}
	var cells []string
	for _, m := range firstAudios.FindAllStringSubmatch(a.body, -1) {
		cells = append(cells, m[1])
	}
	wantCells := []string{"0.00 s", "0.50 s", "0.50 s", "1.00 s", "1.00 s", "2.00 s", "2.00 s", "3.00 s · abandoned",
		"3.00 s · abandoned", "5.00 s · abandoned", "5.00 s · abandoned", "60.00 s · abandoned", "never · abandoned",
		"never · abandoned", ""}
	if strings.Join(cells, "|") != strings.Join(wantCells, "|") {
		t.Errorf("first audio cells %q,\nwant %q", cells, wantCells)
	}
	if n := strings.Count(a.body, `<td class="num abandoned" data-field="first_audio">`); n != 7 {
		t.Errorf("%d cells marked abandoned, want 7", n)
	}
}

// Without calls the histogram says so; without a dialer (no diagnosis) both
// rates are null.
func TestCampaignAbandonedEmpty(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, "empty", 2)
	a := b.get(fmt.Sprintf("/console/campaigns/%d", id))
	wantStatus(t, "campaign page", a, http.StatusOK)
	for scope, c := range abandonRates(t, a.body) {
		if !c.null || c.level != "none" {
			t.Errorf("%s without a dialer: %+v, want null", scope, c)
		}
	}
	if !strings.Contains(a.body, "No call answered by a person has ended yet.") {
		t.Error("the empty histogram does not say so")
	}
}
