package dialer_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
)

// clock is real time moved by an offset the test sets, so pacing still
// advances while a test jumps over retry delays and calling windows.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Set makes Now return t from here on (advancing with real time).
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.offset = time.Until(t)
	c.mu.Unlock()
}

// harness is a real store, the real web router (for webhooks), a running
// engine and a Twilio simulator.
type harness struct {
	t      *testing.T
	db     *store.DB
	dbPath string // the store's location: a SQLite file, or a PostgreSQL URL
	eng    *dialer.Engine
	sim    *twiliosim.Server // the Twilio simulator of newHarness, else nil
	prov   providerSim
	srv    *httptest.Server
	clock  *clock
	opts   harnessOptions
	org    int64
	cfgID  int64
	wfID   int64

	public  string
	handler atomic.Pointer[http.Handler] // what srv serves; swapped by restart
	cancel  context.CancelFunc           // ends the current engine's context
}

// harnessOptions are the knobs a test may turn on newHarness.
type harnessOptions struct {
	machineDetection bool
	maxCallSeconds   int
	client           *http.Client
	newCarrier       func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error)
	metrics          *metrics.Metrics
	sqlite           bool
	leaseTTL         time.Duration
	mono             func() time.Time
	agentURL         string
}

// harnessOption changes harnessOptions.
type harnessOption func(*harnessOptions)

// withMachineDetection stores the Twilio configuration with
// machine_detection on (answered machines end as voicemail).
func withMachineDetection() harnessOption {
	return func(o *harnessOptions) { o.machineDetection = true }
}

// withMaxCallSeconds sets dialer.Config.MaxCallSeconds: an attempt without a
// final status RingTimeout + n seconds after it was placed is reconciled.
func withMaxCallSeconds(n int) harnessOption {
	return func(o *harnessOptions) { o.maxCallSeconds = n }
}

// withNewCarrier makes the engine build its carriers with f.
func withNewCarrier(f func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error)) harnessOption {
	return func(o *harnessOptions) { o.newCarrier = f }
}

// withMetrics makes the engine record into m.
func withMetrics(m *metrics.Metrics) harnessOption {
	return func(o *harnessOptions) { o.metrics = m }
}

// onSQLite keeps the harness's database in a SQLite file whatever the
// run's engine (storetest.Location), for the tests that inject faults
// through SQLite itself (rawExec's triggers, a second connection to the
// file).
func onSQLite() harnessOption {
	return func(o *harnessOptions) { o.sqlite = true }
}

// withAgentURL sets dialer.Config.AgentURL: answers stream to a voice
// agent (which reports nothing unless the test posts its events) instead
// of speaking the greeting.
func withAgentURL(u string) harnessOption {
	return func(o *harnessOptions) { o.agentURL = u }
}

// withProviderClient makes the engine send its provider requests with c.
func withProviderClient(c *http.Client) harnessOption {
	return func(o *harnessOptions) { o.client = c }
}

const greetingWorkflow = `{"nodes":[
 {"id":"s","type":"startCall","data":{"name":"Start","prompt":"Greet {{first_name}}","greeting":"Hello {{first_name | default there}}"}},
 {"id":"e","type":"endCall","data":{"name":"End","prompt":"Say goodbye"}}],
 "edges":[{"id":"e1","source":"s","target":"e","data":{"label":"done","condition":"the call is over"}}]}`

// providerSim is a provider simulator the harness's campaigns dial through.
type providerSim interface {
	// Provider is the carrier name (carrier.Plivo, ...).
	Provider() string
	// BaseURL is the API base URL the engine's carrier.Options get for
	// Provider ("" when the credentials carry it, as ARI's ari_endpoint).
	BaseURL() string
	// Credentials are the telephony configuration's stored credentials.
	Credentials() map[string]any
	Close()
}

// twilioSim adapts twiliosim to providerSim.
type twilioSim struct {
	*twiliosim.Server
	machineDetection bool
}

func (s twilioSim) Provider() string            { return carrier.Twilio }
func (s twilioSim) BaseURL() string             { return s.URL() }
func (s twilioSim) Credentials() map[string]any { return s.Server.Credentials(s.machineDetection) }

// newHarness is a harness dialing through a Twilio simulator started with
// simCfg.
func newHarness(t *testing.T, simCfg twiliosim.Config, opts ...harnessOption) *harness {
	t.Helper()
	var o harnessOptions
	for _, f := range opts {
		f(&o)
	}
	sim := twiliosim.Start(simCfg)
	h := newProviderHarness(t, twilioSim{Server: sim, machineDetection: o.machineDetection}, opts...)
	h.sim = sim
	return h
}

// newProviderHarness is a harness dialing through p, which it closes at the
// end of the test. The configuration has caller id +14155550100.
func newProviderHarness(t *testing.T, p providerSim, opts ...harnessOption) *harness {
	t.Helper()
	ctx := context.Background()
	sealer, err := store.NewSealer(make([]byte, store.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, prov: p, clock: &clock{}}
	for _, o := range opts {
		o(&h.opts)
	}
	if h.opts.sqlite {
		h.dbPath = filepath.Join(t.TempDir(), "outdial.db")
	} else {
		h.dbPath = storetest.Location(t)
	}
	db, err := store.Open(ctx, h.dbPath, sealer)
	if err != nil {
		t.Fatal(err)
	}
	h.db = db
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.public = "http://" + ln.Addr().String()
	h.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*h.handler.Load()).ServeHTTP(w, r)
	})}}
	h.startEngine()
	h.srv.Start()
	t.Cleanup(func() {
		h.cancel()
		h.eng.Stop()
		h.srv.Close()
		p.Close()
		db.Close()
	})
	k, _, err := db.CreateAPIKey(ctx, "acme", "test", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	h.org = k.OrganizationID
	// Real-time campaigns dial whatever the time is where the test number
	// lives: calling hours are the tests' own business (guard_test.go).
	h.setPolicy(func(p *store.Policy) { p.CallingHours.Enabled = false })
	cfg, err := db.CreateTelephonyConfig(ctx, h.org, store.TelephonyConfig{Name: p.Provider(), Provider: p.Provider(),
		IsDefaultOutbound: true, Credentials: p.Credentials()})
	if err != nil {
		t.Fatal(err)
	}
	h.cfgID = cfg.ID
	if _, err := db.AddPhoneNumber(ctx, h.org, cfg.ID, store.PhoneNumber{Address: "+14155550100",
		AddressNormalized: "+14155550100", AddressType: store.AddressPSTN, IsActive: true, IsDefaultCallerID: true}); err != nil {
		t.Fatal(err)
	}
	wf, err := db.CreateWorkflow(ctx, h.org, "greeting", []byte(greetingWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	h.wfID = wf.ID
	return h
}

// startEngine builds a new engine on the harness's database, points the web
// router at it and starts it (reconciling what a previous engine left).
func (h *harness) startEngine() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.eng = dialer.New(dialer.Config{DB: h.db, PublicURL: h.public, TokenKey: []byte("test-token-key"),
		MaxCallSeconds: h.opts.maxCallSeconds, NewCarrier: h.opts.newCarrier,
		Carriers: carrier.Options{BaseURLs: map[string]string{h.prov.Provider(): h.prov.BaseURL()}, HTTPClient: h.opts.client},
		Now:      h.clock.Now, Metrics: h.opts.metrics, Node: "node-a", LeaseTTL: h.opts.leaseTTL, Mono: h.opts.mono,
		AgentURL: h.opts.agentURL})
	var api http.Handler = web.New(web.Config{DB: h.db, Dialer: h.eng, PublicURL: h.public})
	h.handler.Store(&api)
	if err := h.eng.Start(ctx); err != nil {
		h.t.Fatal(err)
	}
}

// crash stops the engine as a killed process would (see stopEngine) while
// the service answers every request 503 (see down).
func (h *harness) crash() {
	h.t.Helper()
	h.down()
	h.stopEngine()
}

// stopEngine ends the engine's context first, so provider requests under
// way are abandoned (their attempts stay dialing), then stops its runners.
// The web router keeps serving webhooks with the stopped engine.
func (h *harness) stopEngine() {
	h.cancel()
	h.eng.Stop()
}

// down makes the service answer every request 503, as when it is not
// running: the simulator's webhooks are lost.
func (h *harness) down() {
	var down http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	h.handler.Store(&down)
}

// campaign creates a draft campaign of n contacts (+1415555xxxx style
// numbers, number(0) to number(n-1)) with settings s.
func (h *harness) campaign(n int, s store.Settings, tz func(i int) string) *store.Campaign {
	h.t.Helper()
	return h.campaignFrom(0, n, s, tz)
}

// campaignFrom is campaign with the contacts numbered number(first) to
// number(first+n-1), so several campaigns of a test call distinct numbers.
// Its contacts have no zones recorded, like those imported before the
// guard rails (campaignOf records them as the campaign endpoint does).
func (h *harness) campaignFrom(first, n int, s store.Settings, tz func(i int) string) *store.Campaign {
	h.t.Helper()
	if s.Name == "" {
		s.Name = "c"
	}
	if s.MaxConcurrency == 0 {
		s.MaxConcurrency = 10
	}
	if s.RateLimitPerSecond == 0 {
		s.RateLimitPerSecond = 1000
	}
	c, err := h.db.CreateCampaign(context.Background(), h.org, store.NewCampaign{Settings: s, WorkflowID: h.wfID,
		WorkflowName: "greeting", WorkflowDefinition: []byte(greetingWorkflow), TelephonyConfigurationID: h.cfgID, SourceID: "test"},
		func(add func(store.ContactInput) error) ([]string, error) {
			for i := 0; i < n; i++ {
				zone := ""
				if tz != nil {
					zone = tz(i)
				}
				if err := add(store.ContactInput{Row: i + 2, PhoneNumber: number(first + i),
					Timezone: zone, Context: map[string]string{"first_name": fmt.Sprintf("P%d", i)}}); err != nil {
					return nil, err
				}
			}
			return []string{"phone_number", "first_name"}, nil
		})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *harness) do(id int64, op string) {
	h.t.Helper()
	if _, err := h.db.TransitionCampaign(context.Background(), h.org, id, op); err != nil {
		h.t.Fatalf("%s: %v", op, err)
	}
	switch op {
	case store.OpStart, store.OpResume:
		h.eng.Wake(id)
	default:
		h.eng.Halt(context.Background(), id)
	}
}

// waitState polls (every few ms, up to 20 s) until campaign id is in state.
func (h *harness) waitState(id int64, state string) *store.Campaign {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := h.db.GetCampaign(context.Background(), h.org, id)
		if err != nil {
			h.t.Fatal(err)
		}
		if c.State == state {
			return c
		}
		if time.Now().After(deadline) {
			list, _ := h.db.ListAttempts(context.Background(), id, store.AttemptFilter{Limit: 1000})
			for _, a := range list {
				h.t.Logf("attempt %d contact_row %d #%d state %s outcome %v due %v", a.ID, a.ContactRow, a.Attempt, a.State, deref(a.Outcome), a.DueAt.Sub(h.clock.Now()))
			}
			if h.sim != nil {
				h.t.Logf("sim stats %+v", h.sim.Stats())
			}
			h.t.Fatalf("campaign %d is %s (processed %d/%d), want %s", id, c.State, c.ProcessedRows, c.TotalRows, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
