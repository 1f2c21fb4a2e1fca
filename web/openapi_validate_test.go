package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/console"
)

// Every HTTP test of this package talks to a router wrapped by
// openAPIValidated (the harness installs it where it builds its servers:
// testEnv.start, newObjEnv and newCampEnv), so every answer the tests
// provoke, successes and every error path, is checked against
// web/openapi.json with kin-openapi's response validator, status included.
// A response the document does not describe fails the test that caused it.
// kin-openapi (v0.153) reads OpenAPI 3.1 and validates bodies with JSON
// Schema 2020-12.
//
// What is checked:
//   - a documented operation: the status is one of its responses, the
//     Content-Type is one the response lists and the body matches its schema
//     (JSON Schema 2020-12, as OpenAPI 3.1 has it), required headers are
//     present; a response documented without content has an empty body;
//   - a HEAD answer: its status and headers as above (HEAD is documented
//     beside every GET, with the GET's responses without bodies); its body
//     is not checked, net/http never sends it;
//   - a path the document does not have: 404 with the NotFound body, or a
//     redirect with a Location (the router's trailing-slash and case fixes);
//   - a method the path does not document: 405 with the MethodNotAllowed
//     body and an Allow header listing exactly the documented methods (plus
//     OPTIONS), or, for OPTIONS, 200 with that Allow header and no body;
//   - the bundled object store (paths under objstore.PathPrefix): only what
//     the document says of it (an S3 REST endpoint whose errors are S3 XML
//     with Content-Type application/xml);
//   - nothing of the console's paths ("/", "/console", "/console/..."),
//     which are HTML pages outside the API (web/console tests them).

// openAPIResponsesChecked counts the responses the validator has seen; a
// test uses it to prove that the harness's servers are wrapped.
var openAPIResponsesChecked atomic.Int64

// openAPIValidated wraps h, a router under test, so that every response
// it gives is checked against web/openapi.json; a response the document does
// not describe is reported with t.Errorf. The harness calls it where it
// builds its servers.
func openAPIValidated(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	v, err := loadOpenAPIValidator()
	if err != nil {
		t.Fatalf("load web/openapi.json for response validation: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A copy of the request as it arrived (method, URL, headers) for
		// the validator; the handler consumes the body, which is not checked.
		req := r.Clone(r.Context())
		rec := &openAPIRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		res := rec.result()
		if res.status == web.StatusClientClosedRequest && r.Context().Err() != nil {
			return // the client went away: nobody received an answer
		}
		openAPIResponsesChecked.Add(1)
		if err := v.check(req, res); err != nil {
			t.Errorf("%s %s answered %d (Content-Type %q), which web/openapi.json does not describe:\n%v\nbody: %s",
				req.Method, req.URL.RequestURI(), res.status, res.header.Get("Content-Type"), err, short(string(res.body)))
		}
	})
}

// openAPIResult is one recorded response.
type openAPIResult struct {
	status    int
	header    http.Header
	body      []byte
	truncated bool // body longer than openAPIMaxBody: not checked
}

// openAPIMaxBody bounds the recorded body of one response.
const openAPIMaxBody = 16 << 20

// openAPIRecorder passes a response through while recording its status,
// headers (as sent) and body.
type openAPIRecorder struct {
	http.ResponseWriter
	status    int
	header    http.Header
	body      bytes.Buffer
	truncated bool
}

func (w *openAPIRecorder) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code) // informational: the final status comes later
		return
	}
	if w.status == 0 {
		w.status = code
		w.header = w.ResponseWriter.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *openAPIRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.body.Len()+len(p) > openAPIMaxBody {
		w.truncated = true
	} else {
		w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps streaming responses streaming.
func (w *openAPIRecorder) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *openAPIRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// result returns the response as the client receives it: 200 when the
// handler wrote nothing, and the Content-Type net/http sniffs when the
// handler set none.
func (w *openAPIRecorder) result() openAPIResult {
	res := openAPIResult{status: w.status, header: w.header, body: w.body.Bytes(), truncated: w.truncated}
	if res.status == 0 {
		res.status = http.StatusOK
		res.header = w.ResponseWriter.Header().Clone()
	}
	if _, has := res.header["Content-Type"]; !has && len(res.body) > 0 && res.status != http.StatusNoContent {
		res.header.Set("Content-Type", http.DetectContentType(res.body))
	}
	return res
}

// openAPIValidator checks responses against the loaded document.
type openAPIValidator struct {
	doc    *openapi3.T
	router routers.Router
}

var loadOpenAPIValidator = sync.OnceValues(func() (*openAPIValidator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(web.OpenAPIDocument())
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	// text/xml answers (provider markup) are checked as text.
	openapi3filter.RegisterBodyDecoder("text/xml", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
	// The audit trail's JSON Lines export (its lines are checked by
	// TestAuditExportNDJSON).
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
	// JSON as RFC 8259 reads it: a saved draft workflow is echoed as sent,
	// duplicate member names included, which kin-openapi's decoder built
	// with Go 1.25+'s encoding/json v2 refuses.
	openapi3filter.RegisterBodyDecoder("application/json", func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		var v any
		dec := json.NewDecoder(body)
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
		}
		return v, nil
	})
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	return &openAPIValidator{doc: doc, router: router}, nil
})

// openAPIOptions are the validator's options: an undocumented status is an
// error, and every problem of a body is reported.
var openAPIOptions = &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}

// check returns why the document does not describe res, the answer to req,
// or nil.
func (v *openAPIValidator) check(req *http.Request, res openAPIResult) error {
	if console.Owns(req.URL.Path) {
		return nil // the console's pages: not the API, checked by web/console's tests
	}
	objects := strings.HasPrefix(req.URL.Path, objstore.PathPrefix) || req.URL.Path == strings.TrimSuffix(objstore.PathPrefix, "/")
	if objects && !strings.HasPrefix(res.header.Get("Content-Type"), "application/json") {
		return checkObjectStoreAnswer(req, res)
	}
	route, params, err := v.router.FindRoute(req)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return v.checkMethodNotAllowed(req, res)
	case errors.Is(err, routers.ErrPathNotFound):
		if res.status == http.StatusMovedPermanently || res.status == http.StatusTemporaryRedirect || res.status == http.StatusPermanentRedirect {
			if res.header.Get("Location") == "" {
				return errors.New("a redirect without a Location header")
			}
			return nil
		}
		return v.checkComponent(req, res, http.StatusNotFound, "NotFound")
	case err != nil:
		return fmt.Errorf("find the operation: %w", err)
	}
	return v.validate(req, res, route, params)
}

// validate runs kin-openapi's response validation for route and adds what
// it leaves out: a response documented without content has no body; a HEAD
// answer's status and headers are checked (kin-openapi skips HEAD
// entirely), its body is not (net/http sends none, whatever the handler
// wrote).
func (v *openAPIValidator) validate(req *http.Request, res openAPIResult, route *routers.Route, params map[string]string) error {
	vreq := req
	if req.Method == http.MethodHead {
		vreq = req.Clone(req.Context())
		vreq.Method = http.MethodGet
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: openAPIOptions},
		Status:                 res.status,
		Header:                 res.header,
		Body:                   io.NopCloser(bytes.NewReader(res.body)),
		Options:                openAPIOptions,
	}
	if res.truncated || req.Method == http.MethodHead {
		opts := *openAPIOptions
		opts.ExcludeResponseBody = true
		in.Options = &opts
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	ref := route.Operation.Responses.Status(res.status)
	if ref == nil {
		ref = route.Operation.Responses.Default()
	}
	if ref != nil && ref.Value != nil && len(ref.Value.Content) == 0 && len(res.body) > 0 && req.Method != http.MethodHead {
		return fmt.Errorf("response %d is documented without a body, but one was sent", res.status)
	}
	return nil
}

// checkComponent checks res against the shared response
// #/components/responses/<name>, expected with status want.
func (v *openAPIValidator) checkComponent(req *http.Request, res openAPIResult, want int, name string) error {
	if res.status != want {
		return fmt.Errorf("status %d, want %d (%s) for a request the document has no operation for", res.status, want, name)
	}
	ref := v.doc.Components.Responses[name]
	if ref == nil {
		return fmt.Errorf("the document has no #/components/responses/%s", name)
	}
	op := &openapi3.Operation{Responses: openapi3.NewResponses(openapi3.WithStatus(want, ref))}
	return v.validate(req, res, &routers.Route{Spec: v.doc, Path: req.URL.Path, Method: req.Method, Operation: op}, nil)
}

// documentedMethods returns the methods the document has for req's path.
func (v *openAPIValidator) documentedMethods(req *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodPost, http.MethodPut} {
		probe := req.Clone(req.Context())
		probe.Method = m
		if _, _, err := v.router.FindRoute(probe); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// checkMethodNotAllowed checks the router's answer to a method the path does
// not document: OPTIONS is 200 with Allow and no body, anything else 405
// with the MethodNotAllowed body; Allow lists the documented methods and
// OPTIONS.
func (v *openAPIValidator) checkMethodNotAllowed(req *http.Request, res openAPIResult) error {
	want := append(v.documentedMethods(req), http.MethodOptions)
	slices.Sort(want)
	var got []string
	for _, m := range strings.Split(res.header.Get("Allow"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			got = append(got, m)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("Allow = %q, want the documented methods %q", res.header.Get("Allow"), strings.Join(want, ", "))
	}
	if req.Method == http.MethodOptions {
		if res.status != http.StatusOK || len(res.body) > 0 {
			return fmt.Errorf("OPTIONS answered %d with %d body bytes, want 200 with none", res.status, len(res.body))
		}
		return nil
	}
	return v.checkComponent(req, res, http.StatusMethodNotAllowed, "MethodNotAllowed")
}

// checkObjectStoreAnswer checks an answer of the bundled object store as far
// as the document describes it: an upload PUT that succeeds has no body; an
// error is an S3 XML <Error> with a Code, sent as application/xml (a HEAD
// answer has no body).
func checkObjectStoreAnswer(req *http.Request, res openAPIResult) error {
	if req.Method == http.MethodPut && res.status < 300 && len(res.body) > 0 {
		return fmt.Errorf("a successful upload PUT answered %d body bytes, want none", len(res.body))
	}
	if res.status < 400 || req.Method == http.MethodHead {
		return nil
	}
	if ct := res.header.Get("Content-Type"); ct != "application/xml" {
		return fmt.Errorf("an object store error with Content-Type %q, want application/xml", ct)
	}
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
	}
	if err := xml.Unmarshal(res.body, &e); err != nil || e.Code == "" {
		return fmt.Errorf("an object store error that is not an S3 <Error> with a Code (%v)", err)
	}
	return nil
}

// TestOpenAPIDocumentLoadsForValidation checks that kin-openapi loads and
// validates the document as OpenAPI 3.1 and can route every operation.
func TestOpenAPIDocumentLoadsForValidation(t *testing.T) {
	v, err := loadOpenAPIValidator()
	if err != nil {
		t.Fatalf("web/openapi.json: %v", err)
	}
	if !v.doc.IsOpenAPI31OrLater() {
		t.Fatalf("kin-openapi does not read web/openapi.json as OpenAPI 3.1")
	}
	for path, item := range v.doc.Paths.Map() {
		for method := range item.Operations() {
			req := httptest.NewRequest(method, openAPIConcretePath(path, "1"), nil)
			route, _, err := v.router.FindRoute(req)
			if err != nil || route.Path != path {
				t.Errorf("%s %s: the validator's router finds %v (%v)", method, path, route, err)
			}
		}
	}
}

// TestOpenAPIValidatorRejectsUndescribedResponses checks the validator
// itself: what the document does not describe is an error, what it
// describes is not.
func TestOpenAPIValidatorRejectsUndescribedResponses(t *testing.T) {
	v, err := loadOpenAPIValidator()
	if err != nil {
		t.Fatalf("web/openapi.json: %v", err)
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		ok           bool
	}{
		{"documented health", http.MethodGet, healthPath, 200, jsonHeader, `{"status":"ok","version":"dev","node":"app-1:8080","database":"sqlite"}`, true},
		{"health without node and database", http.MethodGet, healthPath, 200, jsonHeader, `{"status":"ok","version":"dev"}`, false},
		{"undocumented status", http.MethodDelete, "/api/v1/workflow/1", http.StatusTeapot, jsonHeader, `{"detail":"x"}`, false},
		{"undocumented 409", http.MethodPut, "/api/v1/organizations/telephony-configs/1/phone-numbers/1", 409, jsonHeader, `{"detail":"x"}`, false},
		{"body against its schema", http.MethodGet, healthPath, 200, jsonHeader, `{"status":1,"version":"dev"}`, false},
		{"error body shape", http.MethodGet, "/api/v1/workflow/1", 404, jsonHeader, `{"error":"not found"}`, false},
		{"422 shape", http.MethodGet, "/api/v1/workflow/x", 422, jsonHeader, `{"detail":"bad"}`, false},
		{"content type", http.MethodGet, healthPath, 200, http.Header{"Content-Type": {"text/plain"}}, `{"status":"ok","version":"dev","node":"n","database":"sqlite"}`, false},
		{"no content documented", http.MethodDelete, "/api/v1/workflow/1", 204, http.Header{}, `{"detail":"x"}`, false},
		{"empty 204", http.MethodDelete, "/api/v1/workflow/1", 204, http.Header{}, ``, true},
		{"401 without WWW-Authenticate", http.MethodGet, "/api/v1/workflow", 401, jsonHeader, `{"detail":"Not authenticated"}`, false},
		{"401", http.MethodGet, "/api/v1/workflow", 401, http.Header{"Content-Type": {"application/json"}, "Www-Authenticate": {"Bearer"}}, `{"detail":"Not authenticated"}`, true},
		{"unknown path", http.MethodGet, "/api/v1/nope", 404, jsonHeader, `{"detail":"Not Found"}`, true},
		{"unknown path, 200", http.MethodGet, "/api/v1/nope", 200, jsonHeader, `{}`, false},
		{"405", http.MethodPatch, "/api/v1/workflow", 405, http.Header{"Content-Type": {"application/json"}, "Allow": {"GET, HEAD, OPTIONS, POST"}}, `{"detail":"Method Not Allowed"}`, true},
		{"405 without HEAD in Allow", http.MethodPatch, "/api/v1/workflow", 405, http.Header{"Content-Type": {"application/json"}, "Allow": {"GET, OPTIONS, POST"}}, `{"detail":"Method Not Allowed"}`, false},
		{"HEAD of a POST-only path", http.MethodHead, "/api/v1/campaign/1/start", 405, http.Header{"Content-Type": {"application/json"}, "Allow": {"OPTIONS, POST"}}, ``, true},
		{"HEAD", http.MethodHead, healthPath, 200, jsonHeader, ``, true},
		{"HEAD, undocumented status", http.MethodHead, healthPath, http.StatusTeapot, jsonHeader, ``, false},
		{"HEAD 401 without WWW-Authenticate", http.MethodHead, "/api/v1/workflow", 401, jsonHeader, ``, false},
		{"405 with a wrong Allow", http.MethodPatch, "/api/v1/workflow", 405, http.Header{"Content-Type": {"application/json"}, "Allow": {"GET, OPTIONS"}}, `{"detail":"Method Not Allowed"}`, false},
		{"405 without Allow", http.MethodPatch, "/api/v1/workflow", 405, jsonHeader, `{"detail":"Method Not Allowed"}`, false},
		{"OPTIONS", http.MethodOptions, "/api/v1/workflow", 200, http.Header{"Allow": {"GET, HEAD, OPTIONS, POST"}}, ``, true},
		{"object store error", http.MethodPut, objstore.PathPrefix + "campaigns/1/x.csv", 403, http.Header{"Content-Type": {"application/xml"}}, `<Error><Code>AccessDenied</Code></Error>`, true},
		{"object store upload", http.MethodPut, objstore.PathPrefix + "campaigns/1/x.csv", 200, http.Header{"Etag": {`"abc"`}}, ``, true},
		{"object store upload with a body", http.MethodPut, objstore.PathPrefix + "campaigns/1/x.csv", 200, http.Header{"Content-Type": {"text/plain"}}, `ok`, false},
		{"object store error, not XML", http.MethodPut, objstore.PathPrefix + "campaigns/1/x.csv", 403, http.Header{"Content-Type": {"text/plain"}}, `denied`, false},
		{"report CSV", http.MethodGet, "/api/v1/campaign/1/report", 200, http.Header{"Content-Type": {"text/csv; charset=utf-8"}, "Content-Disposition": {`attachment; filename="campaign-1-report.csv"`}}, "phone_number,outcome\n+14155550101,answered\n", true},
		{"Vonage NCCO", http.MethodPost, "/api/v1/telephony/vonage/answer/1", 200, jsonHeader, `[{"action":"talk","text":"Hi"}]`, true},
		{"answer JSON of another shape", http.MethodPost, "/api/v1/telephony/vonage/answer/1", 200, jsonHeader, `"talk"`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, nil)
			err := v.check(req, openAPIResult{status: c.status, header: c.header, body: []byte(c.body)})
			if got := err == nil; got != c.ok {
				t.Errorf("check = %v, want ok = %v", err, c.ok)
			}
		})
	}
}

// TestOpenAPIValidatorWrapsHarness checks that the servers of the HTTP test
// harness validate their responses: each of them counts one more checked
// response after a request.
func TestOpenAPIValidatorWrapsHarness(t *testing.T) {
	envs := map[string]func() *testEnv{
		"newEnv":     func() *testEnv { return newEnv(t) },
		"newObjEnv":  func() *testEnv { return newObjEnv(t, 1<<20).testEnv },
		"newCampEnv": func() *testEnv { return newCampEnv(t, campOpts{}).testEnv },
	}
	for name, build := range envs {
		e := build()
		before := openAPIResponsesChecked.Load()
		wantStatus(t, e.do(http.MethodGet, healthPath, "", nil), http.StatusOK)
		if openAPIResponsesChecked.Load() == before {
			t.Errorf("%s: the server's responses are not checked against web/openapi.json (wrap its handler with openAPIValidated)", name)
		}
	}
}

// TestOpenAPIRouterAndErrorAnswers provokes, on every documented path and
// operation, the answers no other test needs: the router's (OPTIONS, HEAD
// and other undocumented methods, a trailing slash, an unknown path), no
// key, ids that are not integers or name nothing, bodies that are not JSON
// or too large, and the application-level webhook URLs. The validating
// middleware checks every answer against the document.
func TestOpenAPIRouterAndErrorAnswers(t *testing.T) {
	e := newEnv(t)
	v, err := loadOpenAPIValidator()
	if err != nil {
		t.Fatalf("web/openapi.json: %v", err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path, key string, body io.Reader) int {
		t.Helper()
		req, err := http.NewRequest(method, e.srv.URL+path, body)
		if err != nil {
			t.Fatalf("new request: %v", err)
		}
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		io.Copy(io.Discard, res.Body) //nolint:errcheck // only the status matters
		res.Body.Close()
		return res.StatusCode
	}
	tooLarge := strings.Repeat(" ", 8<<20+1)

	for path, item := range v.doc.Paths.Map() {
		concrete := openAPIConcretePath(path, "1")
		ops := item.Operations()
		if got := send(http.MethodOptions, concrete, "", nil); got != http.StatusOK {
			t.Errorf("OPTIONS %s = %d, want 200", path, got)
		}
		if ops[http.MethodHead] == nil {
			// HEAD is answered wherever GET is, and only there.
			if got := send(http.MethodHead, concrete, "", nil); got != http.StatusMethodNotAllowed {
				t.Errorf("HEAD %s = %d, want 405", path, got)
			}
		}
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if ops[m] == nil {
				if got := send(m, concrete, e.keyA, nil); got != http.StatusMethodNotAllowed {
					t.Errorf("%s %s = %d, want 405", m, path, got)
				}
			}
		}
		for method, op := range ops {
			send(method, concrete+"/", e.keyA, nil)
			send(method, concrete, "", nil)
			send(method, concrete, e.keyA, strings.NewReader("{}"))
			send(method, concrete, e.keyA, strings.NewReader("[1,"))
			send(method, openAPIConcretePath(path, "abc"), e.keyA, strings.NewReader("{}"))
			send(method, openAPIConcretePath(path, "99999999999999999999"), e.keyA, nil)
			if op.RequestBody != nil {
				send(method, concrete, e.keyA, strings.NewReader(tooLarge))
			}
		}
	}
	send(http.MethodGet, "/api/v1/nope", e.keyA, nil)
	send(http.MethodGet, "/API/V1/HEALTH", "", nil)
	for _, p := range append(carrier.Names(), "nope") {
		send(http.MethodGet, "/api/v1/telephony/"+p+"/answer", "", nil)
		send(http.MethodPost, "/api/v1/telephony/"+p+"/answer", "", strings.NewReader("CallSid=CA1"))
		send(http.MethodPost, "/api/v1/telephony/"+p+"/status", "", strings.NewReader("CallSid=CA1"))
	}
}

// openAPIConcretePath fills a path template: {provider} with twilio, every
// other parameter with id.
func openAPIConcretePath(template, id string) string {
	return openAPIPathParam.ReplaceAllStringFunc(template, func(p string) string {
		if p == "{provider}" {
			return "twilio"
		}
		return id
	})
}

// TestOpenAPISchemasAreTyped checks that every schema says what type it is
// (code generators emit an untyped interface{} / any otherwise): a schema
// has a type, a $ref or a composition (oneOf, anyOf, allOf); an enum or a
// const always comes with a type. Only a subschema of a composition may add
// bare constraints (e.g. {"required": [...]}).
func TestOpenAPISchemasAreTyped(t *testing.T) {
	doc := openAPIDoc(t)
	var walkSchema func(where string, v any, inComposition bool)
	walkSchema = func(where string, v any, inComposition bool) {
		s, ok := v.(map[string]any)
		if !ok {
			return // a boolean schema
		}
		_, hasType := s["type"]
		_, hasRef := s["$ref"]
		composed := s["oneOf"] != nil || s["anyOf"] != nil || s["allOf"] != nil
		if (s["enum"] != nil || s["const"] != nil) && !hasType {
			t.Errorf("%s: enum or const without a type", where)
		}
		if !hasType && !hasRef && !composed && (!inComposition || s["properties"] != nil || s["items"] != nil) {
			t.Errorf("%s: schema without a type (keys %v)", where, openAPIKeys(s))
		}
		for _, k := range []string{"properties", "patternProperties", "$defs"} {
			m, _ := s[k].(map[string]any)
			for name, sub := range m {
				walkSchema(where+"/"+k+"/"+name, sub, false)
			}
		}
		for _, k := range []string{"items", "additionalProperties", "not", "contains", "propertyNames", "unevaluatedProperties"} {
			if sub, ok := s[k]; ok {
				walkSchema(where+"/"+k, sub, false)
			}
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf", "prefixItems"} {
			list, _ := s[k].([]any)
			for i, sub := range list {
				walkSchema(fmt.Sprintf("%s/%s/%d", where, k, i), sub, k != "prefixItems")
			}
		}
	}
	schemas, _ := openAPIDig(doc, "components", "schemas").(map[string]any)
	for name, s := range schemas {
		walkSchema("#/components/schemas/"+name, s, false)
	}
	// Every other schema sits under a "schema" key (parameters, headers,
	// media types), outside components/schemas.
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if k == "schema" {
					walkSchema(where+"/schema", c, false)
				} else if where != "#/components" || k != "schemas" {
					walk(where+"/"+k, c)
				}
			}
		case []any:
			for i, c := range x {
				walk(fmt.Sprintf("%s/%d", where, i), c)
			}
		}
	}
	walk("#/paths", doc["paths"])
	walk("#/components", doc["components"])
}
