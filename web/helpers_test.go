package web_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
)

// Paths of the resources under test.
const (
	configsPath   = "/api/v1/organizations/telephony-configs"
	providersPath = "/api/v1/organizations/telephony-providers"
	healthPath    = "/api/v1/health"
	testVersion   = "v0.0.0-test"
)

func configPath(id int64) string { return fmt.Sprintf("%s/%d", configsPath, id) }
func numbersPath(configID int64) string {
	return fmt.Sprintf("%s/%d/phone-numbers", configsPath, configID)
}
func numberPath(configID, id int64) string {
	return fmt.Sprintf("%s/%d/phone-numbers/%d", configsPath, configID, id)
}

// testEnv is one Outdial server for a test: a real database
// (storetest.Location: a SQLite file in a temp dir, or a database on the
// PostgreSQL server of OUTDIAL_TEST_DATABASE_URL), opened with store.Open
// and a random server secret, served by the real
// router through httptest, with one API key for each of two organizations.
//
// Every response that goes through do is checked for two things the contract
// promises for every request: no 500 (unless allow500 is set) and no secret
// (any value registered with addSecret, which includes every secret of the
// provider fixtures) in the body or headers. Log output is checked for the
// same secrets, and for full phone numbers, when the test ends.
type testEnv struct {
	t      *testing.T
	dir    string
	dbPath string // the store's location: a SQLite file, or a PostgreSQL URL
	secret []byte
	db     *store.DB
	srv    *httptest.Server
	logs   *lockedBuffer

	// carriers are the provider options of the router: by default every
	// provider's API is a closed local port (no test reaches a real
	// provider); provisioning tests point them at simulators.
	carriers carrier.Options

	keyA, keyB string // API keys of organizations "org-a" and "org-b"
	orgA, orgB int64

	mu       sync.Mutex
	secrets  []string
	allow500 bool
}

// fullPhoneNumber matches an E.164 number in full, which no log line may
// hold.
var fullPhoneNumber = regexp.MustCompile(`\+\d{8,15}`)

// lockedBuffer is a bytes.Buffer safe for the server's concurrent logging.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	return newEnvOn(t, false)
}

// newEnvOn is newEnv, with the database in a SQLite file whatever the run's
// engine when sqlite is set (the tests that reach the database through
// SQLite itself).
func newEnvOn(t *testing.T, sqlite bool) *testEnv {
	t.Helper()
	e := &testEnv{t: t, dir: t.TempDir(), logs: &lockedBuffer{}, carriers: unreachableCarriers()}
	if sqlite {
		e.dbPath = filepath.Join(e.dir, "outdial.db")
	} else {
		e.dbPath = storetest.Location(t)
	}
	e.secret = make([]byte, store.KeySize)
	if _, err := rand.Read(e.secret); err != nil {
		t.Fatal(err)
	}
	e.start()
	t.Cleanup(func() {
		e.stop()
		logs := e.logs.String()
		for _, s := range e.knownSecrets() {
			if strings.Contains(logs, s) {
				t.Errorf("log output contains secret %q:\n%s", s, logs)
			}
		}
		// Nor a full phone number (API.md 13: all but the last 4 digits
		// masked); the test data's numbers are E.164.
		for _, line := range strings.Split(logs, "\n") {
			if m := fullPhoneNumber.FindString(line); m != "" {
				t.Errorf("log line holds the full phone number %s:\n%s", m, line)
			}
		}
	})
	ctx := context.Background()
	ka, secA, err := e.db.CreateAPIKey(ctx, "org-a", "test a", store.RoleAdmin)
	if err != nil {
		t.Fatalf("create key a: %v", err)
	}
	kb, secB, err := e.db.CreateAPIKey(ctx, "org-b", "test b", store.RoleAdmin)
	if err != nil {
		t.Fatalf("create key b: %v", err)
	}
	e.keyA, e.orgA = secA.Reveal(), ka.OrganizationID
	e.keyB, e.orgB = secB.Reveal(), kb.OrganizationID
	if e.orgA == e.orgB {
		t.Fatalf("both keys belong to organization %d", e.orgA)
	}
	return e
}

// start opens the database and serves a new router over it.
func (e *testEnv) start() {
	e.t.Helper()
	sealer, err := store.NewSealer(e.secret)
	if err != nil {
		e.t.Fatalf("sealer: %v", err)
	}
	db, err := store.Open(context.Background(), e.dbPath, sealer)
	if err != nil {
		e.t.Fatalf("open store: %v", err)
	}
	e.db = db
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.srv = httptest.NewServer(openAPIValidated(e.t, web.New(web.Config{DB: db, Log: log, Version: testVersion, Carriers: e.carriers})))
}

// stop closes the server, then the database.
func (e *testEnv) stop() {
	if e.srv != nil {
		e.srv.Close()
		e.srv = nil
	}
	if e.db != nil {
		if err := e.db.Close(); err != nil {
			e.t.Errorf("close db: %v", err)
		}
		e.db = nil
	}
}

// restart closes the server and the database and opens the same database
// again with the same key behind a new router.
func (e *testEnv) restart() {
	e.t.Helper()
	e.stop()
	e.start()
}

// addSecret registers values that must never appear in a response or log.
func (e *testEnv) addSecret(values ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.secrets = append(e.secrets, values...)
}

func (e *testEnv) knownSecrets() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append(append([]string(nil), fixtureSecrets()...), e.secrets...)
}

// response is one decoded answer of the server.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   any // decoded JSON (numbers as float64); nil for an empty body
}

// obj returns the body as a JSON object, failing the test when it is not.
func (r response) obj(t *testing.T) map[string]any {
	t.Helper()
	m, ok := r.Body.(map[string]any)
	if !ok {
		t.Fatalf("body is not a JSON object: %s", r.Raw)
	}
	return m
}

// rawBody is a request body sent exactly as given.
type rawBody string

// do sends a request with key (none when "") and body (nil: no body; rawBody:
// as is; anything else: JSON-encoded) and returns the decoded response.
func (e *testEnv) do(method, path, key string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case rawBody:
		rd = strings.NewReader(string(b))
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("encode request: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	r := response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			e.t.Fatalf("%s %s: body is not JSON (%v): %q", method, path, err, raw)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			e.t.Errorf("%s %s: Content-Type = %q, want application/json", method, path, ct)
		}
	}
	if r.Status == http.StatusInternalServerError && !e.allow500 {
		e.t.Errorf("%s %s: status 500: %s", method, path, raw)
	}
	e.checkNoSecret(method+" "+path, r)
	return r
}

func (e *testEnv) checkNoSecret(what string, r response) {
	e.t.Helper()
	var hdr strings.Builder
	for k, v := range r.Header {
		fmt.Fprintf(&hdr, "%s: %s\n", k, strings.Join(v, ","))
	}
	for _, s := range e.knownSecrets() {
		// JSON escapes '<', '>', '&' and control characters; look for the
		// escaped form too.
		esc, _ := json.Marshal(s)
		inner := string(esc[1 : len(esc)-1])
		if bytes.Contains(r.Raw, []byte(s)) || bytes.Contains(r.Raw, []byte(inner)) || strings.Contains(hdr.String(), s) {
			e.t.Errorf("%s: response contains secret %q: %s", what, short(s), short(string(r.Raw)))
			return
		}
	}
}

// short cuts s for a failure message.
func short(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// a and b send a request as organization A or B.
func (e *testEnv) a(method, path string, body any) response {
	e.t.Helper()
	return e.do(method, path, e.keyA, body)
}

func (e *testEnv) b(method, path string, body any) response {
	e.t.Helper()
	return e.do(method, path, e.keyB, body)
}

// wantStatus fails the test when r's status is not want.
func wantStatus(t *testing.T, r response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, want %d; body %s", r.Status, want, r.Raw)
	}
}

// wantDetail checks a non-422 error: status and {"detail": detail} exactly.
func wantDetail(t *testing.T, r response, status int, detail string) {
	t.Helper()
	wantStatus(t, r, status)
	m := r.obj(t)
	if len(m) != 1 {
		t.Errorf("error body has keys %v, want only detail: %s", keys(m), r.Raw)
	}
	if got, ok := m["detail"].(string); !ok || got != detail {
		t.Fatalf("detail = %#v, want %q", m["detail"], detail)
	}
}

// wantDetailContains checks a non-422 error whose detail contains part.
func wantDetailContains(t *testing.T, r response, status int, part string) string {
	t.Helper()
	wantStatus(t, r, status)
	m := r.obj(t)
	if len(m) != 1 {
		t.Errorf("error body has keys %v, want only detail: %s", keys(m), r.Raw)
	}
	got, ok := m["detail"].(string)
	if !ok || !strings.Contains(got, part) {
		t.Fatalf("detail = %#v, want a string containing %q", m["detail"], part)
	}
	return got
}

// problem is one entry of a 422 body.
type problem struct {
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Type  string         `json:"type"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx"`
	// Column is the CSV column a problem of an uploaded file is about.
	Column string `json:"column"`

	hasInput bool
}

func (p problem) loc() string { return locString(p.Loc...) }

// locString renders a loc for comparison: "body.config.auth_token".
func locString(parts ...any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ".")
}

// problems checks that r is a 422 in the contract's shape and returns its
// problems: detail is a non-empty list of objects with loc (starting with
// body/path/query/header), msg and type, input present, and no other keys
// than ctx.
func problems(t *testing.T, r response) []problem {
	t.Helper()
	wantStatus(t, r, http.StatusUnprocessableEntity)
	m := r.obj(t)
	if len(m) != 1 {
		t.Errorf("422 body has keys %v, want only detail", keys(m))
	}
	list, ok := m["detail"].([]any)
	if !ok || len(list) == 0 {
		t.Fatalf("422 detail is not a non-empty list: %s", r.Raw)
	}
	out := make([]problem, len(list))
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("detail[%d] is not an object: %s", i, r.Raw)
		}
		for k := range obj {
			switch k {
			case "loc", "msg", "type", "input", "ctx", "column":
			default:
				t.Errorf("detail[%d] has unexpected key %q", i, k)
			}
		}
		data, _ := json.Marshal(obj)
		if err := json.Unmarshal(data, &out[i]); err != nil {
			t.Fatalf("detail[%d]: %v", i, err)
		}
		_, out[i].hasInput = obj["input"]
		p := out[i]
		if len(p.Loc) == 0 || p.Msg == "" || p.Type == "" {
			t.Errorf("detail[%d] lacks loc, msg or type: %s", i, data)
		}
		if len(p.Loc) > 0 {
			switch p.Loc[0] {
			case "body", "path", "query", "header":
			default:
				t.Errorf("detail[%d].loc starts with %v", i, p.Loc[0])
			}
		}
		if !p.hasInput {
			t.Errorf("detail[%d] has no input: %s", i, data)
		}
	}
	return out
}

// wantProblems checks that r is a 422 listing exactly the given problems, as
// "loc type" strings, in any order.
func wantProblems(t *testing.T, r response, want ...string) []problem {
	t.Helper()
	ps := problems(t, r)
	got := make([]string, len(ps))
	for i, p := range ps {
		got[i] = p.loc() + " " + p.Type
	}
	if !sameSet(got, want) {
		t.Fatalf("problems = %q, want %q; body %s", got, want, r.Raw)
	}
	return ps
}

// findProblem returns the problem at loc.
func findProblem(t *testing.T, ps []problem, loc string) problem {
	t.Helper()
	for _, p := range ps {
		if p.loc() == loc {
			return p
		}
	}
	t.Fatalf("no problem at %s in %+v", loc, ps)
	return problem{}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// id returns the integer field name of a JSON object.
func id(t *testing.T, m map[string]any, name string) int64 {
	t.Helper()
	f, ok := m[name].(float64)
	if !ok || f != float64(int64(f)) {
		t.Fatalf("%s = %#v, want an integer", name, m[name])
	}
	return int64(f)
}

// ---- provider fixtures ----

// Secrets of the fixtures. Each is unique, longer than 4 characters, and
// never appears as a substring of a non-secret fixture value.
const (
	ariPassword     = "ari-pass-S3cr3t-0001"
	cloudonixToken  = "cx-bearer-S3cr3t-0002"
	plivoToken      = "plivo-token-S3cr3t-0003"
	telnyxKey       = "KEY0123-telnyx-S3cr3t-0004"
	twilioToken     = "twilio-token-S3cr3t-0005"
	vobizToken      = "vobiz-token-S3cr3t-0006"
	vonageSecret    = "vonage-api-S3cr3t-0007"
	vonageSignature = "vonage-sig-S3cr3t-0008"
)

// telnyxPublicKey is base64 of 32 bytes (not a secret).
var telnyxPublicKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// pemSecretLines returns the base64 lines of a PEM, each a secret fragment.
func pemSecretLines(p string) []string {
	var out []string
	for _, line := range strings.Split(p, "\n") {
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	return out
}

func fixtureSecrets() []string {
	s := []string{ariPassword, cloudonixToken, plivoToken, telnyxKey, twilioToken, vobizToken, vonageSecret, vonageSignature}
	s = append(s, pemSecretLines(rsaPEM)...)
	return append(s, pemSecretLines(rsaPKCS8PEM)...)
}

// providerNames are the seven providers, sorted.
var providerNames = []string{"ari", "cloudonix", "plivo", "telnyx", "twilio", "vobiz", "vonage"}

// validConfig returns a fresh valid `config` object for provider with every
// required field and, where the provider has one, a sensitive optional field.
func validConfig(provider string) map[string]any {
	var m map[string]any
	switch provider {
	case "ari":
		m = map[string]any{"ari_endpoint": "http://pbx.example:8088", "app_name": "outdial", "app_password": ariPassword}
	case "cloudonix":
		m = map[string]any{"bearer_token": cloudonixToken, "domain_id": "example.cloudonix.net", "application_name": "outdial-app"}
	case "plivo":
		m = map[string]any{"auth_id": "MAPLIVO000001", "auth_token": plivoToken, "application_id": "31415926535897"}
	case "telnyx":
		m = map[string]any{"api_key": telnyxKey, "webhook_public_key": telnyxPublicKey, "connection_id": "1684641123236054244"}
	case "twilio":
		m = map[string]any{"account_sid": "AC0000000000000001", "auth_token": twilioToken}
	case "vobiz":
		m = map[string]any{"auth_id": "MAVOBIZ000001", "auth_token": vobizToken, "application_id": "27182818284590"}
	case "vonage":
		m = map[string]any{"api_key": "vonage-key-1", "api_secret": vonageSecret, "application_id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
			"private_key": rsaPEM, "signature_secret": vonageSignature}
	default:
		panic("unknown provider " + provider)
	}
	m["provider"] = provider
	return m
}

// mask is the contract's masking (API.md 2.2), written independently of the
// server's: every character but the last 4 becomes '*', keeping the length;
// 4 characters or fewer are all '*'.
func mask(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return strings.Repeat("*", len(r))
	}
	return strings.Repeat("*", len(r)-4) + string(r[len(r)-4:])
}

// wantCredentials is the `credentials` object a configuration created from
// validConfig(provider) shows: every field, defaults filled in, sensitive
// values masked.
func wantCredentials(provider string) map[string]any {
	switch provider {
	case "ari":
		return map[string]any{"ari_endpoint": "http://pbx.example:8088", "app_name": "outdial", "app_password": mask(ariPassword),
			"ws_client_name": "", "dial_template": "PJSIP/{number}"}
	case "cloudonix":
		return map[string]any{"bearer_token": mask(cloudonixToken), "domain_id": "example.cloudonix.net", "application_name": "outdial-app"}
	case "plivo":
		return map[string]any{"auth_id": "MAPLIVO000001", "auth_token": mask(plivoToken), "application_id": "31415926535897", "machine_detection": false}
	case "telnyx":
		return map[string]any{"api_key": mask(telnyxKey), "connection_id": "1684641123236054244", "webhook_public_key": telnyxPublicKey, "machine_detection": false}
	case "twilio":
		return map[string]any{"account_sid": "AC0000000000000001", "auth_token": mask(twilioToken), "machine_detection": false}
	case "vobiz":
		return map[string]any{"auth_id": "MAVOBIZ000001", "auth_token": mask(vobizToken), "application_id": "27182818284590"}
	case "vonage":
		return map[string]any{"api_key": "vonage-key-1", "api_secret": mask(vonageSecret), "application_id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
			"private_key": mask(rsaPEM), "signature_secret": mask(vonageSignature), "machine_detection": false}
	}
	panic("unknown provider " + provider)
}

// unreachableCarriers points every provider's API at a local port nothing
// listens on.
func unreachableCarriers() carrier.Options {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close()
	base := map[string]string{}
	for _, p := range carrier.Names() {
		base[p] = addr
	}
	return carrier.Options{BaseURLs: base}
}

// configBody is a create body.
func configBody(name string, isDefault bool, config map[string]any) map[string]any {
	return map[string]any{"name": name, "is_default_outbound": isDefault, "config": config}
}

// createConfig creates a configuration as the holder of key and returns the
// detail form, failing the test unless the answer is 200.
func (e *testEnv) createConfig(key, name string, isDefault bool, config map[string]any) map[string]any {
	e.t.Helper()
	r := e.do(http.MethodPost, configsPath, key, configBody(name, isDefault, config))
	wantStatus(e.t, r, http.StatusOK)
	return r.obj(e.t)
}

// createNumber adds a phone number and returns the record, failing unless 200.
func (e *testEnv) createNumber(key string, configID int64, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do(http.MethodPost, numbersPath(configID), key, body)
	wantStatus(e.t, r, http.StatusOK)
	return r.obj(e.t)
}

// with returns a copy of m with the given key/value pairs set (a nil value
// sets JSON null) — use without to remove keys.
func with(m map[string]any, kv ...any) map[string]any {
	out := maps.Clone(m)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// without returns a copy of m without the given keys.
func without(m map[string]any, names ...string) map[string]any {
	out := maps.Clone(m)
	for _, n := range names {
		delete(out, n)
	}
	return out
}

// equalJSON compares two decoded JSON values.
func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
