package web_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
)

// Paths of the campaign API.
const campaignsPath = "/api/v1/campaign"

func campaignPath(id int64) string { return fmt.Sprintf("%s/%d", campaignsPath, id) }

// campaignOp is the path of a campaign operation or sub-resource: start,
// pause, resume, cancel, redial, calls, logs, report.
func campaignOp(id int64, op string) string { return fmt.Sprintf("%s/%d/%s", campaignsPath, id, op) }

// campDefinition is a valid workflow whose templates need the column
// first_name (prompt) and use plan with a default; the greeting is spoken by
// the built-in fallback.
const campDefinition = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}} about {{ plan | default our plan }}.","greeting":"Hi {{first_name}}, about {{ plan | default our plan }}!"}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Thank {{first_name}} and hang up."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The message was delivered"}}]}`

// campAgentDefinition is campDefinition handing calls to a voice agent.
var campAgentDefinition = strings.TrimSuffix(campDefinition, "}") + `,"agent_url":"wss://agent.example/ws?x=1&y=2"}`

// campInvalidDefinition saves (drafts may be invalid) but fails validation:
// it has no startCall.
const campInvalidDefinition = `{"nodes":[{"id":"a","type":"agentNode","data":{"name":"A","prompt":"p"}}],"edges":[]}`

// campCallerID is the caller id numbers get in these tests.
const campCallerID = "+14155550100"

// campEnv is an objEnv (real SQLite, real bundled object store, real
// router) that can also run the dialer engine against the Twilio simulator:
// web.Config{Dialer, PublicURL} as cmd/serve wires it, PublicURL = the test
// server's URL, carrier base URL = the simulator's. clock is the engine's
// and the database's clock (real time plus an offset tests move forward to
// reach retries); the object store keeps its own real clock, since minio-go
// presigns with time.Now.
type campEnv struct {
	*objEnv
	engine *dialer.Engine     // nil without campOpts.engine
	sim    *twiliosim.Server  // nil without campOpts.engine
	clock  *offsetClock       // engine and database clock
	cancel context.CancelFunc // stops the engine's context
}

// campOpts chooses what newCampEnv builds.
type campOpts struct {
	// engine starts a dialer engine and a Twilio simulator.
	engine bool
	// script is the simulator's script function (nil: DefaultScript).
	script func(twiliosim.CallInfo) twiliosim.Script
	// agentURL is serve --agent-url.
	agentURL string
	// limits are the server's limits (zero: the defaults).
	limits web.Limits
	// metrics, when set, is the engine's metrics (dialer.Config.Metrics).
	metrics *metrics.Metrics
	// wrap, when set, wraps the server's handler (the router behind the
	// OpenAPI validator): a test's view of the requests as they are served.
	wrap func(http.Handler) http.Handler
	// sqlite keeps the database in a SQLite file whatever the run's engine
	// (the tests that reach it through SQLite itself).
	sqlite bool
	// node names the node (dialer.Config.Node and web.Config.Node, as
	// serve --node-name sets both); "": their default.
	node string
}

// newCampEnv returns a campEnv serving on a fresh database.
func newCampEnv(t *testing.T, opts campOpts) *campEnv {
	t.Helper()
	e := newEnvOn(t, opts.sqlite)
	e.srv.Close() // replaced: the object store and the engine need the listener's address first
	srv := httptest.NewUnstartedServer(nil)
	public := "http://" + srv.Listener.Addr().String()
	sealer, err := store.NewSealer(e.secret)
	if err != nil {
		t.Fatalf("sealer: %v", err)
	}
	secretKey := base64.RawURLEncoding.EncodeToString(sealer.Derive("s3-secret-key"))
	e.addSecret(secretKey)
	ce := &campEnv{
		objEnv: &objEnv{testEnv: e, objDir: filepath.Join(e.dir, "objects"), clock: &offsetClock{}, maxUpload: 1 << 20},
		clock:  &offsetClock{},
	}
	e.db.Now = ce.clock.now
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, h, err := objstore.NewBundled(objstore.BundledConfig{
		Dir: ce.objDir, Endpoint: srv.Listener.Addr().String(), Insecure: true,
		AccessKey: "outdial-" + hex.EncodeToString(sealer.Derive("s3-access-key")[:8]), SecretKey: secretKey,
		MaxObjectSize: ce.maxUpload, Now: ce.objEnv.clock.now, Logger: log,
	})
	if err != nil {
		t.Fatalf("NewBundled: %v", err)
	}
	ce.objects = st
	cfg := web.Config{DB: e.db, Log: log, Version: testVersion, MaxUploadBytes: ce.maxUpload,
		Uploads: st, Objects: h, ObjectsPrefix: objstore.PathPrefix, PublicURL: public, Limits: opts.limits, Node: opts.node}
	if opts.engine {
		ce.sim = twiliosim.Start(twiliosim.Config{Script: opts.script, RecordCallbacks: true})
		e.addSecret(ce.sim.AuthToken())
		tokenKey := make([]byte, 32)
		if _, err := rand.Read(tokenKey); err != nil {
			t.Fatal(err)
		}
		ce.engine = dialer.New(dialer.Config{DB: e.db, Log: log, PublicURL: public, TokenKey: tokenKey,
			AgentURL: opts.agentURL, Now: ce.clock.now, Metrics: opts.metrics, Node: opts.node,
			Carriers: carrier.Options{BaseURLs: map[string]string{carrier.Twilio: ce.sim.URL()}}})
		cfg.Dialer = ce.engine
	}
	srv.Config.Handler = openAPIValidated(t, web.New(cfg))
	if opts.wrap != nil {
		srv.Config.Handler = opts.wrap(srv.Config.Handler)
	}
	srv.Start()
	e.srv = srv
	if opts.engine {
		// These tests dial test numbers at any hour: the organizations'
		// calling hours (08:00-21:00 callee-local by default) are off.
		// Tests of the calling hours turn them on through the API.
		for _, org := range []int64{e.orgA, e.orgB} {
			if _, err := e.db.UpdateCompliancePolicy(context.Background(), org, 0, func(p *store.Policy) error {
				p.CallingHours.Enabled = false
				return nil
			}); err != nil {
				t.Fatalf("calling hours off: %v", err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		ce.cancel = cancel
		if err := ce.engine.Start(ctx); err != nil {
			t.Fatalf("engine start: %v", err)
		}
		// Runs before newEnv's cleanup (LIFO): engine, then simulator, then
		// server and database.
		t.Cleanup(func() {
			cancel()
			ce.engine.Stop()
			ce.sim.Close()
		})
	}
	return ce
}

// twilioConfig creates a Twilio configuration as the holder of key (the
// simulator's account when there is one) and returns its id.
func (ce *campEnv) twilioConfig(key, name string, isDefault, machineDetection bool) int64 {
	ce.t.Helper()
	cfg := validConfig("twilio")
	if ce.sim != nil {
		cfg["account_sid"], cfg["auth_token"] = ce.sim.AccountSID(), ce.sim.AuthToken()
	}
	cfg["machine_detection"] = machineDetection
	return id(ce.t, ce.createConfig(key, name, isDefault, cfg), "id")
}

// callerID adds an active number to configuration configID.
func (ce *campEnv) callerID(key string, configID int64, address string) int64 {
	ce.t.Helper()
	return id(ce.t, ce.createNumber(key, configID, map[string]any{"address": address}), "id")
}

// workflow saves a workflow as the holder of key and returns its id.
func (ce *campEnv) workflow(key, name, def string) int64 {
	ce.t.Helper()
	n := fmt.Sprintf("%q", name)
	r := ce.do(http.MethodPost, "/api/v1/workflow", key, rawBody(`{"name":`+n+`,"workflow_definition":`+def+`}`))
	wantStatus(ce.t, r, http.StatusOK)
	return id(ce.t, r.obj(ce.t), "id")
}

// upload stores a CSV through a presigned URL, as a client does, and
// returns its file_key.
func (ce *campEnv) upload(key, csv string) string {
	ce.t.Helper()
	p := ce.presign(key, "contacts.csv", len(csv))
	if status, body := put(ce.t, p.URL, "text/csv", bytes.NewReader([]byte(csv))); status != http.StatusOK {
		ce.t.Fatalf("upload: status = %d, want %d: %s", status, http.StatusOK, body)
	}
	return p.Key
}

// campSetup is an organization ready to create campaigns: a default
// Twilio configuration with a caller id and a valid workflow.
type campSetup struct {
	configID, workflowID int64
}

// setup prepares organization A (key keyA).
func (ce *campEnv) setup(machineDetection bool) campSetup {
	ce.t.Helper()
	cfg := ce.twilioConfig(ce.keyA, "main", true, machineDetection)
	ce.callerID(ce.keyA, cfg, campCallerID)
	return campSetup{configID: cfg, workflowID: ce.workflow(ce.keyA, "reminder", campDefinition)}
}

// campCSV is a valid contacts file of n rows: phone numbers
// +1415555020N, first_name Name<N>, plan p<N>.
func campCSV(n int) string {
	var b strings.Builder
	b.WriteString("phone_number,first_name,plan\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "+1415555%04d,Name%d,p%d\n", 200+i, i, i)
	}
	return b.String()
}

// campPhone is the phone number of row i (1-based data row) of campCSV.
func campPhone(i int) string { return fmt.Sprintf("+1415555%04d", 200+i) }

// campBody is a create body with the given extra key/value pairs.
func campBody(name string, workflowID int64, source string, kv ...any) map[string]any {
	return with(map[string]any{"name": name, "workflow_id": workflowID, "source_id": source}, kv...)
}

// createCampaign creates a campaign as the holder of key, failing the test
// unless the answer is 200, and returns it.
func (ce *campEnv) createCampaign(key string, body map[string]any) map[string]any {
	ce.t.Helper()
	r := ce.do(http.MethodPost, campaignsPath, key, body)
	wantStatus(ce.t, r, http.StatusOK)
	return r.obj(ce.t)
}

// newCampaign uploads campCSV(n) and creates a campaign from it as
// organization A with the given extra fields; it returns the campaign id.
func (ce *campEnv) newCampaign(s campSetup, n int, kv ...any) int64 {
	ce.t.Helper()
	key := ce.upload(ce.keyA, campCSV(n))
	return id(ce.t, ce.createCampaign(ce.keyA, campBody("c", s.workflowID, key, kv...)), "id")
}

// campaign GETs campaign id as organization A.
func (ce *campEnv) campaign(id int64) map[string]any {
	ce.t.Helper()
	r := ce.a(http.MethodGet, campaignPath(id), nil)
	wantStatus(ce.t, r, http.StatusOK)
	return r.obj(ce.t)
}

// waitCampaign polls campaign id every few milliseconds until cond holds,
// failing the test after 10 s; it returns the campaign.
func (ce *campEnv) waitCampaign(id int64, what string, cond func(map[string]any) bool) map[string]any {
	ce.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := ce.campaign(id)
		if cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			ce.t.Fatalf("campaign %d: still not %s after 10 s: %v", id, what, c)
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// waitState waits until campaign id is in state.
func (ce *campEnv) waitState(id int64, state string) map[string]any {
	ce.t.Helper()
	return ce.waitCampaign(id, state, func(c map[string]any) bool { return c["state"] == state })
}

// calls lists campaign id's call attempts (query appended as is).
func (ce *campEnv) calls(id int64, query string) []map[string]any {
	ce.t.Helper()
	r := ce.a(http.MethodGet, campaignOp(id, "calls")+query, nil)
	wantStatus(ce.t, r, http.StatusOK)
	return objects(ce.t, r.obj(ce.t)["calls"])
}

// waitCalls polls the calls endpoint until cond holds for the list.
func (ce *campEnv) waitCalls(id int64, what string, cond func([]map[string]any) bool) []map[string]any {
	ce.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list := ce.calls(id, "")
		if cond(list) {
			return list
		}
		if time.Now().After(deadline) {
			ce.t.Fatalf("campaign %d: calls still not %s after 10 s: %v", id, what, list)
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// logEvents returns the events of a list of log entries (decoded JSON or
// objects).
func logEvents(t *testing.T, logs any) []string {
	t.Helper()
	list, ok := logs.([]map[string]any)
	if !ok {
		list = objects(t, logs)
	}
	var out []string
	for _, l := range list {
		out = append(out, fmt.Sprint(l["event"]))
	}
	return out
}

// objects returns a JSON array of objects.
func objects(t *testing.T, v any) []map[string]any {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("%v is not a JSON array", v)
	}
	out := make([]map[string]any, len(list))
	for i, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			t.Fatalf("element %d (%v) is not an object", i, x)
		}
		out[i] = m
	}
	return out
}

// campaignIDs lists organization key's campaign ids, newest first.
func (ce *campEnv) campaignIDs(key string) []int64 {
	ce.t.Helper()
	r := ce.do(http.MethodGet, campaignsPath+"?limit=200", key, nil)
	wantStatus(ce.t, r, http.StatusOK)
	var out []int64
	for _, c := range objects(ce.t, r.obj(ce.t)["campaigns"]) {
		out = append(out, id(ce.t, c, "id"))
	}
	return out
}

// rowCounts counts the rows of the campaign tables straight from the
// database, to prove a rejected create stored nothing.
func (ce *campEnv) rowCounts() map[string]int {
	ce.t.Helper()
	db := storetest.Raw(ce.t, ce.dbPath)
	defer db.Close()
	out := map[string]int{}
	for _, table := range []string{"campaigns", "contacts", "call_attempts", "campaign_logs"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			ce.t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// token is the webhook token of attempt id.
func (ce *campEnv) token(attemptID int64) string { return ce.engine.Token(attemptID) }

// hookURL is the callback URL of kind (answer, status) the engine gives
// provider for an attempt, with token tok.
func (ce *campEnv) hookURL(provider, kind string, attemptID int64, tok string) string {
	return fmt.Sprintf("%s/api/v1/telephony/%s/%s/%d?t=%s", ce.srv.URL, provider, kind, attemptID, url.QueryEscape(tok))
}

// postHook posts a form to a webhook URL with the given X-Twilio-Signature
// ("" sends none) and returns the status and body.
func (ce *campEnv) postHook(rawURL string, form url.Values, signature string) (int, string, http.Header) {
	ce.t.Helper()
	req, err := http.NewRequest(http.MethodPost, rawURL, strings.NewReader(form.Encode()))
	if err != nil {
		ce.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if signature != "" {
		req.Header.Set("X-Twilio-Signature", signature)
	}
	return ce.hookDo(req)
}

func (ce *campEnv) hookDo(req *http.Request) (int, string, http.Header) {
	ce.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		ce.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(res.Body); err != nil {
		ce.t.Fatalf("read body: %v", err)
	}
	if res.StatusCode == http.StatusInternalServerError {
		ce.t.Errorf("%s %s: status 500: %s", req.Method, req.URL, b.String())
	}
	ce.checkNoSecret(req.Method+" "+req.URL.Path, response{Status: res.StatusCode, Header: res.Header, Raw: b.Bytes()})
	return res.StatusCode, b.String(), res.Header
}

// signed posts form to rawURL signed with the simulator's auth token.
func (ce *campEnv) signed(rawURL string, form url.Values) (int, string, http.Header) {
	ce.t.Helper()
	return ce.postHook(rawURL, form, twiliosim.Signature(ce.sim.AuthToken(), rawURL, form))
}

// num reads a JSON number field as float64.
func num(t *testing.T, m map[string]any, name string) float64 {
	t.Helper()
	f, ok := m[name].(float64)
	if !ok {
		t.Fatalf("%s = %#v, want a number", name, m[name])
	}
	return f
}

// wantCounters checks a campaign's counters.
func wantCounters(t *testing.T, c map[string]any, total, processed, failed, executed, queued int) {
	t.Helper()
	got := []int{int(num(t, c, "total_rows")), int(num(t, c, "processed_rows")), int(num(t, c, "failed_rows")),
		int(num(t, c, "executed_count")), int(num(t, c, "total_queued_count"))}
	want := []int{total, processed, failed, executed, queued}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counters total/processed/failed/executed/queued = %v, want %v", got, want)
	}
}

// getRaw GETs path as the holder of key and returns the answer without
// decoding it (the CSV report).
func (ce *campEnv) getRaw(key, path string) (int, http.Header, string) {
	ce.t.Helper()
	req, err := http.NewRequest(http.MethodGet, ce.srv.URL+path, nil)
	if err != nil {
		ce.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("X-API-Key", key)
	status, body, hdr := ce.hookDo(req)
	return status, hdr, body
}

// waitCounters waits until campaign id's counters are the given ones (a
// call's executed_count can land just after its final status: the
// provider may call back before its answer to the create request
// arrives) and returns the campaign.
func (ce *campEnv) waitCounters(id int64, total, processed, failed, executed, queued int) map[string]any {
	ce.t.Helper()
	want := fmt.Sprint([]int{total, processed, failed, executed, queued})
	return ce.waitCampaign(id, "counted "+want, func(c map[string]any) bool {
		got := []int{}
		for _, k := range []string{"total_rows", "processed_rows", "failed_rows", "executed_count", "total_queued_count"} {
			f, _ := c[k].(float64)
			got = append(got, int(f))
		}
		return fmt.Sprint(got) == want
	})
}
