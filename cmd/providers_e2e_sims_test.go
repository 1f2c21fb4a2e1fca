package cmd_test

// The simulators of TestProvidersEndToEnd, each behind one small adapter:
// how to script a contact's outcome, what the simulator saw of the calls,
// and how to forge a webhook for an attempt.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/arisim"
	"github.com/outdial/outdial/dialer/carrier/cloudonixsim"
	"github.com/outdial/outdial/dialer/carrier/plivosim"
	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
	"github.com/outdial/outdial/dialer/carrier/vonagesim"
)

// Outcomes a test contact is scripted to end with (the API's names).
const (
	e2eAnswered  = "answered"
	e2eVoicemail = "voicemail"
	e2eBusy      = "busy"
	e2eNoAnswer  = "no_answer"
	e2eFailed    = "failed"
)

const (
	e2eRing = 120 * time.Millisecond // ring time of every call
	e2eTalk = 150 * time.Millisecond // talk time of answered calls that end by themselves
)

// e2eSimCall is one call as a simulator saw it.
type e2eSimCall struct {
	to     string // digits, no "+"
	markup string // what the service answered (XML, NCCO, CXML, speak commands)
	hungUp bool   // hung up by the service (ARI, Telnyx)
}

// e2eProvider is one provider under test: its configuration and its
// simulator.
type e2eProvider struct {
	name     string
	config   map[string]any // the telephony configuration's config, provider included
	appField string         // the auto-created application field, "" when none
	callerID string         // "" when the provider needs none (ARI)
	outcomes []string       // the outcome scripted for each contact, in CSV order
	// script sets the simulator's script from outcome-by-number (digits).
	script func(want map[string]string)
	// checkApp checks the application the service created, given the
	// credentials the configuration answered.
	checkApp func(t *testing.T, creds map[string]any)
	// calls lists the calls the simulator saw; peak is its peak in flight;
	// final waits until n calls are over.
	calls func() []e2eSimCall
	peak  func() int
	final func(ctx context.Context, n int) error
	// forge posts a status webhook claiming busy for the call to number
	// (digits), forged (wrong signature or token) or genuinely signed, and
	// returns the HTTP status answered; nil when the provider has no
	// webhooks (ARI).
	forge func(t *testing.T, ctx context.Context, to string, forged bool) int
}

func e2eDigits(s string) string { return strings.TrimPrefix(s, "+") }

// e2eProviders starts every simulator (closed at the end of the test) and
// returns the providers and the service environment pointing at them.
func e2eProviders(t *testing.T) ([]*e2eProvider, []string) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var env []string
	var out []*e2eProvider

	// Plivo and Vobiz: one simulator each, in its dialect.
	for _, d := range []plivosim.Dialect{plivosim.Plivo, plivosim.Vobiz} {
		sim := plivosim.Start(plivosim.Config{Dialect: d, Client: client, RecordCallbacks: true})
		t.Cleanup(sim.Close)
		p := &e2eProvider{name: string(d), config: sim.Credentials(d == plivosim.Plivo), appField: "application_id",
			outcomes: []string{e2eAnswered, e2eBusy, e2eNoAnswer, e2eFailed, e2eAnswered, e2eBusy}}
		env = append(env, "OUTDIAL_"+strings.ToUpper(string(d))+"_API_URL="+sim.URL())
		if d == plivosim.Plivo {
			p.outcomes = []string{e2eAnswered, e2eBusy, e2eNoAnswer, e2eVoicemail, e2eFailed, e2eAnswered}
		}
		p.script = func(want map[string]string) {
			sim.SetScript(func(ci plivosim.CallInfo) plivosim.Script {
				o := map[string]plivosim.Outcome{e2eAnswered: plivosim.Human, e2eVoicemail: plivosim.Machine,
					e2eBusy: plivosim.Busy, e2eNoAnswer: plivosim.NoAnswer, e2eFailed: plivosim.Failed}[want[e2eDigits(ci.To)]]
				return plivosim.Script{Outcome: o, RingDelay: e2eRing, TalkDuration: e2eTalk}
			})
		}
		p.checkApp = func(t *testing.T, creds map[string]any) {
			apps := sim.Apps()
			if len(apps) != 1 || apps[0].AppID != creds["application_id"] {
				t.Errorf("simulator applications %+v, configuration application_id %v", apps, creds["application_id"])
			}
		}
		p.calls = func() (out []e2eSimCall) {
			for _, c := range sim.Calls() {
				out = append(out, e2eSimCall{to: e2eDigits(c.To), markup: c.XML})
			}
			return out
		}
		p.peak, p.final = sim.PeakInFlight, sim.WaitFinal
		p.forge = func(t *testing.T, ctx context.Context, to string, forged bool) int {
			for _, c := range sim.Calls() {
				if e2eDigits(c.To) != to {
					continue
				}
				for _, cb := range c.Callbacks {
					if cb.Kind == plivosim.KindHangup {
						params := url.Values{}
						for k, v := range cb.Params {
							params[k] = v
						}
						params.Set("CallStatus", "busy")
						token := sim.AuthToken()
						if forged {
							token = "forged-" + token
						}
						code, err := sim.PostSigned(ctx, cb.URL, params, token)
						if err != nil {
							t.Fatal(err)
						}
						return code
					}
				}
			}
			t.Fatalf("%s: no hangup callback recorded for %s", d, to)
			return 0
		}
		out = append(out, p)
	}

	// Telnyx, signed webhooks, machine detection on.
	tx := telnyxsim.Start(telnyxsim.Config{Client: client, RecordEvents: true})
	t.Cleanup(tx.Close)
	env = append(env, "OUTDIAL_TELNYX_API_URL="+tx.URL())
	txCfg := tx.Credentials("", true, true)
	delete(txCfg, "connection_id")
	out = append(out, &e2eProvider{name: "telnyx", config: txCfg, appField: "connection_id",
		outcomes: []string{e2eAnswered, e2eBusy, e2eNoAnswer, e2eVoicemail, e2eFailed, e2eAnswered},
		script: func(want map[string]string) {
			tx.SetScript(func(ci telnyxsim.CallInfo) telnyxsim.Script {
				w := want[e2eDigits(ci.To)]
				o := map[string]telnyxsim.Outcome{e2eAnswered: telnyxsim.Human, e2eVoicemail: telnyxsim.Machine,
					e2eBusy: telnyxsim.Busy, e2eNoAnswer: telnyxsim.NoAnswer, e2eFailed: telnyxsim.Failed}[w]
				s := telnyxsim.Script{Outcome: o, RingDelay: e2eRing, TalkDuration: e2eTalk, SpeakDuration: 20 * time.Millisecond}
				if w == e2eAnswered {
					s.TalkDuration = telnyxsim.Never // the service hangs up after the greeting
				}
				return s
			})
		},
		checkApp: func(t *testing.T, creds map[string]any) {
			apps := tx.Applications()
			if len(apps) != 2 || apps[1].ID != creds["connection_id"] || apps[1].WebhookEventURL == "" {
				t.Errorf("simulator applications %+v, configuration connection_id %v", apps, creds["connection_id"])
			}
		},
		calls: func() (out []e2eSimCall) {
			for _, c := range tx.Calls() {
				sc := e2eSimCall{to: e2eDigits(c.To)}
				for _, cmd := range c.Commands {
					if cmd.Name == telnyxsim.OpSpeak {
						sc.markup += string(cmd.Body)
					}
					if cmd.Name == telnyxsim.OpHangUp {
						sc.hungUp = true
					}
				}
				out = append(out, sc)
			}
			return out
		},
		peak: tx.PeakInFlight, final: tx.WaitFinal,
		forge: func(t *testing.T, ctx context.Context, to string, forged bool) int {
			for _, c := range tx.Calls() {
				if e2eDigits(c.To) == to && len(c.Events) > 0 {
					last := c.Events[len(c.Events)-1]
					ev := tx.SignedEvent(last.URL, bytes.Replace(last.Body, []byte(`"normal_clearing"`), []byte(`"user_busy"`), 1))
					if forged {
						ev = telnyxsim.Forged(ev)
					}
					code, err := tx.Deliver(ctx, ev)
					if err != nil {
						t.Fatal(err)
					}
					return code
				}
			}
			t.Fatalf("telnyx: no event recorded for %s", to)
			return 0
		},
	})

	// Vonage, signed webhooks, machine detection on.
	vo := vonagesim.Start(vonagesim.Config{Client: client, RecordCallbacks: true})
	t.Cleanup(vo.Close)
	env = append(env, "OUTDIAL_VONAGE_API_URL="+vo.URL())
	out = append(out, &e2eProvider{name: "vonage", config: vo.Credentials(true),
		outcomes: []string{e2eAnswered, e2eBusy, e2eNoAnswer, e2eVoicemail, e2eFailed, e2eAnswered},
		script: func(want map[string]string) {
			vo.SetScript(func(ci vonagesim.CallInfo) vonagesim.Script {
				o := map[string]vonagesim.Outcome{e2eAnswered: vonagesim.Human, e2eVoicemail: vonagesim.Machine,
					e2eBusy: vonagesim.Busy, e2eNoAnswer: vonagesim.Timeout, e2eFailed: vonagesim.Failed}[want[e2eDigits(ci.To)]]
				return vonagesim.Script{Outcome: o, RingDelay: e2eRing, TalkDuration: e2eTalk}
			})
		},
		calls: func() (out []e2eSimCall) {
			for _, c := range vo.Calls() {
				out = append(out, e2eSimCall{to: e2eDigits(c.To), markup: c.NCCO})
			}
			return out
		},
		peak: vo.PeakInFlight, final: vo.WaitFinal,
		forge: func(t *testing.T, ctx context.Context, to string, forged bool) int {
			for _, c := range vo.Calls() {
				if e2eDigits(c.To) != to || len(c.Callbacks) == 0 {
					continue
				}
				cb := c.Callbacks[len(c.Callbacks)-1]
				var f map[string]any
				if err := json.Unmarshal(cb.Body, &f); err != nil {
					t.Fatal(err)
				}
				f["status"] = "busy"
				body, _ := json.Marshal(f)
				cb.Body = body
				cb.Authorization = vo.Authorization(body)
				if forged {
					cb.Authorization = "Bearer " + vonagesim.Token("forged-"+vo.SignatureSecret(), vo.Claims(body))
				}
				code, err := vo.Send(ctx, cb)
				if err != nil {
					t.Fatal(err)
				}
				return code
			}
			t.Fatalf("vonage: no event recorded for %s", to)
			return 0
		},
	})

	// Cloudonix: no signatures, the per-attempt token is the only check.
	cx := cloudonixsim.Start(cloudonixsim.Config{Client: client})
	t.Cleanup(cx.Close)
	env = append(env, "OUTDIAL_CLOUDONIX_API_URL="+cx.URL())
	cxCfg := cx.Credentials("")
	delete(cxCfg, "application_name")
	out = append(out, &e2eProvider{name: "cloudonix", config: cxCfg, appField: "application_name",
		outcomes: []string{e2eAnswered, e2eBusy, e2eNoAnswer, e2eFailed, e2eAnswered, e2eNoAnswer},
		script: func(want map[string]string) {
			cx.SetScript(func(ci cloudonixsim.CallInfo) cloudonixsim.Script {
				o := map[string]cloudonixsim.Outcome{e2eAnswered: cloudonixsim.Human, e2eBusy: cloudonixsim.Busy,
					e2eNoAnswer: cloudonixsim.NoAnswer, e2eFailed: cloudonixsim.Failed}[want[e2eDigits(ci.To)]]
				return cloudonixsim.Script{Outcome: o, RingDelay: e2eRing, TalkDuration: e2eTalk}
			})
		},
		checkApp: func(t *testing.T, creds map[string]any) {
			name, _ := creds["application_name"].(string)
			app, ok := cx.Applications()[name]
			if !ok || cx.Stats().ApplicationsCreated != 1 || app.URL == "" {
				t.Errorf("simulator applications %+v (%d created), configuration application_name %q",
					cx.Applications(), cx.Stats().ApplicationsCreated, name)
			}
		},
		calls: func() (out []e2eSimCall) {
			for _, c := range cx.Calls() {
				out = append(out, e2eSimCall{to: e2eDigits(c.To), markup: c.CXML})
			}
			return out
		},
		peak: cx.PeakInFlight, final: cx.WaitFinal,
		forge: func(t *testing.T, ctx context.Context, to string, forged bool) int {
			for _, c := range cx.Calls() {
				if e2eDigits(c.To) != to || len(c.Callbacks) == 0 {
					continue
				}
				cb := c.Callbacks[len(c.Callbacks)-1]
				u, err := url.Parse(cb.URL)
				if err != nil {
					t.Fatal(err)
				}
				q := u.Query()
				if q.Get("t") == "" {
					t.Fatalf("cloudonix callback URL %s carries no token t", cb.URL)
				}
				if forged {
					q.Set("t", "forged"+q.Get("t"))
				}
				u.RawQuery = q.Encode()
				code, err := cx.Post(ctx, u.String(), []byte(strings.Replace(string(cb.Body), `"completed"`, `"busy"`, 1)))
				if err != nil {
					t.Fatal(err)
				}
				return code
			}
			t.Fatalf("cloudonix: no callback recorded for %s", to)
			return 0
		},
	})

	// ARI: the configuration names the simulator; no webhooks, no caller id.
	ari := arisim.Start(arisim.Config{})
	t.Cleanup(ari.Close)
	out = append(out, &e2eProvider{name: "ari", config: ari.Credentials(),
		outcomes: []string{e2eAnswered, e2eBusy, e2eNoAnswer, e2eFailed, e2eAnswered, e2eBusy},
		script: func(want map[string]string) {
			ari.SetScript(func(ci arisim.CallInfo) arisim.Script {
				w := want[e2eDigits(ci.Number)]
				o := map[string]arisim.Outcome{e2eAnswered: arisim.Answer, e2eBusy: arisim.Busy,
					e2eNoAnswer: arisim.NoAnswer, e2eFailed: arisim.Congestion}[w]
				s := arisim.Script{Outcome: o, RingDelay: e2eRing}
				if w == e2eAnswered {
					s.TalkDuration = arisim.Never // the service hangs up after the answer
				}
				return s
			})
		},
		calls: func() (out []e2eSimCall) {
			for _, c := range ari.Calls() {
				out = append(out, e2eSimCall{to: e2eDigits(c.Number), hungUp: c.Answered && c.HungUp})
			}
			return out
		},
		peak: func() int { return ari.Stats().PeakInFlight },
		final: func(ctx context.Context, n int) error {
			return ari.Wait(ctx, func(st arisim.Stats) bool { return st.Ended >= n })
		},
	})
	for i, p := range out {
		p.config["provider"] = p.name
		if p.name != "ari" {
			p.callerID = "+1415555010" + string(rune('1'+i))
		}
	}
	return out, env
}
