package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/console"
)

// These tests keep web/openapi.json true to the server: every registered
// route is documented and nothing else is; the document is tidy, well-formed
// OpenAPI 3.1 whose references resolve; public and authenticated operations
// and their error responses match what the server does; the provider schemas
// match the carrier catalogue; the served bytes are the embedded ones. Run
// with -update to rewrite testdata/openapi.routes.golden.

var openAPIUpdate = openAPIBoolFlag("update", "rewrite golden files under testdata/")

// openAPIBoolFlag registers a bool flag unless another test file of the
// package already did (registering one name twice panics).
func openAPIBoolFlag(name, usage string) func() bool {
	if f := flag.Lookup(name); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool(name, false, usage)
	return func() bool { return *b }
}

const openAPIGolden = "testdata/openapi.routes.golden"

var (
	openAPIMethods    = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}
	openAPIWildcard   = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)
	openAPIPathParam  = regexp.MustCompile(`\{([^}]+)\}`)
	openAPIStatusCode = regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]XX|default)$`)
)

// openAPIServer returns a server on a fresh throwaway database
// (storetest.Location).
func openAPIServer(t *testing.T) *web.Server {
	t.Helper()
	sealer, err := store.NewSealer(make([]byte, 32))
	if err != nil {
		t.Fatalf("new sealer: %v", err)
	}
	db, err := store.Open(context.Background(), storetest.Location(t), sealer)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return web.New(web.Config{DB: db})
}

// openAPIDoc returns the embedded document decoded.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(web.OpenAPIDocument(), &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	return doc
}

// openAPIOperation is one operation of the document.
type openAPIOperation struct {
	Method, Path string // upper-case method
	Op, Item     map[string]any
}

func (o openAPIOperation) key() string { return o.Method + " " + o.Path }

func (o openAPIOperation) public() bool {
	sec, ok := o.Op["security"].([]any)
	return ok && len(sec) == 0
}

func (o openAPIOperation) responses() map[string]any {
	m, _ := o.Op["responses"].(map[string]any)
	return m
}

// openAPIOperations lists the document's operations sorted by path, then
// method.
func openAPIOperations(t *testing.T, doc map[string]any) []openAPIOperation {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatalf("document has no paths object")
	}
	var ops []openAPIOperation
	for path, v := range paths {
		item, _ := v.(map[string]any)
		for _, m := range openAPIMethods {
			if op, ok := item[m].(map[string]any); ok {
				ops = append(ops, openAPIOperation{Method: strings.ToUpper(m), Path: path, Op: op, Item: item})
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	return ops
}

func TestOpenAPICoversRoutes(t *testing.T) {
	routes := map[string]bool{}
	for _, r := range openAPIServer(t).Routes() {
		routes[r.Method+" "+openAPIWildcard.ReplaceAllString(r.Path, "{$1}")] = true
	}
	if len(routes) == 0 {
		t.Fatalf("server registered no routes")
	}
	documented := map[string]bool{}
	for _, o := range openAPIOperations(t, openAPIDoc(t)) {
		documented[o.key()] = true
	}
	for _, k := range openAPIKeys(routes) {
		if !documented[k] {
			t.Errorf("route %s is registered but missing from web/openapi.json", k)
		}
	}
	for _, k := range openAPIKeys(documented) {
		if !routes[k] {
			t.Errorf("web/openapi.json documents %s, which the server does not register", k)
		}
	}
}

func TestOpenAPIDocumentWellFormed(t *testing.T) {
	raw := web.OpenAPIDocument()
	if err := openAPINoDuplicateKeys(raw); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	var compact, tidy bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	json.Indent(&tidy, compact.Bytes(), "", "  ") //nolint:errcheck // compacted above
	tidy.WriteByte('\n')
	if !bytes.Equal(tidy.Bytes(), raw) {
		t.Errorf("openapi.json is not tidy: indent it with 2 spaces, one value per line, ending in a newline")
	}

	doc := openAPIDoc(t)
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}
	if openAPIDig(doc, "info", "title") == nil || openAPIDig(doc, "info", "version") == nil {
		t.Errorf("info needs title and version")
	}
	ids := map[string]string{}
	for _, o := range openAPIOperations(t, doc) {
		id, _ := o.Op["operationId"].(string)
		if prev, dup := ids[id]; id == "" || dup {
			t.Errorf("%s: operationId %q is missing or also used by %s", o.key(), id, prev)
		}
		ids[id] = o.key()
		if len(o.responses()) == 0 {
			t.Errorf("%s has no responses", o.key())
		}
		for code := range o.responses() {
			if !openAPIStatusCode.MatchString(code) {
				t.Errorf("%s: response code %q is not valid", o.key(), code)
			}
		}
		// Path parameters: exactly those of the template, required integers,
		// except the webhooks' {provider}, a provider name (ProviderName).
		want, got := map[string]bool{}, map[string]bool{}
		for _, m := range openAPIPathParam.FindAllStringSubmatch(o.Path, -1) {
			want[m[1]] = true
		}
		for _, src := range []any{o.Item["parameters"], o.Op["parameters"]} {
			list, _ := src.([]any)
			for _, p := range list {
				pm, _ := openAPIResolve(t, doc, p).(map[string]any)
				if pm["in"] != "path" {
					continue
				}
				got[fmt.Sprint(pm["name"])] = true
				if pm["name"] == "provider" {
					if pm["required"] != true || openAPIDig(pm["schema"], "$ref") != "#/components/schemas/ProviderName" {
						t.Errorf("%s: path parameter provider must be a required ProviderName", o.key())
					}
					continue
				}
				if pm["required"] != true || openAPIDig(openAPIResolve(t, doc, pm["schema"]), "type") != "integer" {
					t.Errorf("%s: path parameter %v must be a required integer", o.key(), pm["name"])
				}
			}
		}
		if !maps.Equal(want, got) {
			t.Errorf("%s: path parameters %v, want %v", o.key(), openAPIKeys(got), openAPIKeys(want))
		}
	}

	refs := 0
	openAPIWalk(doc, func(m map[string]any) {
		if ref, ok := m["$ref"].(string); ok {
			refs++
			if _, err := openAPIPointer(doc, ref); err != nil {
				t.Errorf("$ref %q does not resolve: %v", ref, err)
			}
		}
	})
	if refs == 0 {
		t.Errorf("document has no $ref at all; expected shared components")
	}
}

func TestOpenAPISecurityMatchesServer(t *testing.T) {
	s := openAPIServer(t)
	doc := openAPIDoc(t)
	schemes, _ := openAPIDig(doc, "components", "securitySchemes").(map[string]any)
	var want []string
	for name, v := range schemes {
		if v := v.(map[string]any); (v["type"] == "apiKey" && v["in"] == "header" && v["name"] == "X-API-Key") ||
			(v["type"] == "http" && strings.EqualFold(fmt.Sprint(v["scheme"]), "bearer")) ||
			(v["type"] == "apiKey" && v["in"] == "cookie" && v["name"] == console.SessionCookie) {
			want = append(want, name)
		}
	}
	var global []string
	reqs, _ := doc["security"].([]any)
	for _, req := range reqs {
		m, _ := req.(map[string]any)
		global = append(global, openAPIKeys(m)...)
	}
	if sort.Strings(want); len(want) != 3 || !slices.Equal(openAPISorted(global), want) {
		t.Errorf("global security = %v, want any of an X-API-Key header key, http bearer and the console's session cookie (found schemes %v)", global, want)
	}

	// An unauthenticated request tells whether the server needs a key.
	for _, o := range openAPIOperations(t, doc) {
		var body io.Reader
		if o.Method == http.MethodPost || o.Method == http.MethodPut {
			body = strings.NewReader("{}")
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(o.Method, openAPIPathParam.ReplaceAllString(o.Path, "1"), body))
		if needsKey := rec.Code == http.StatusUnauthorized; needsKey == o.public() {
			t.Errorf("%s answers %d without a key, but the document says public = %v (security: [] marks a public operation)",
				o.key(), rec.Code, o.public())
		}
	}
}

// TestOpenAPIErrorResponses checks that each operation documents the errors
// its shape can produce, with the contract's bodies.
func TestOpenAPIErrorResponses(t *testing.T) {
	doc := openAPIDoc(t)
	for _, o := range openAPIOperations(t, doc) {
		resp := o.responses()
		if _, has := resp["401"]; has == o.public() {
			t.Errorf("%s: a 401 response must be documented exactly when the operation needs a key", o.key())
		}
		var need []string
		if !o.public() {
			need = append(need, "401", "500")
		}
		if strings.Contains(o.Path, "{") {
			need = append(need, "404")
		}
		if strings.Contains(o.Path, "_id}") {
			need = append(need, "422") // an id that is not an integer
		}
		if o.Op["requestBody"] != nil {
			need = append(need, "413", "422")
		}
		for _, code := range need {
			if resp[code] == nil {
				t.Errorf("%s does not document its %s response", o.key(), code)
			}
		}
		for code, r := range resp {
			want := "#/components/schemas/HTTPError"
			switch {
			case o.Method == http.MethodHead:
				continue // no bodies: TestOpenAPIHeadMirrorsGet
			case code < "400" || (o.Path == "/api/v1/health" && code == "503"):
				continue
			case code == "422":
				want = "#/components/schemas/HTTPValidationError"
			}
			if got := openAPIDig(openAPIResolve(t, doc, r), "content", "application/json", "schema", "$ref"); got != want {
				t.Errorf("%s %s: body schema %v, want %s", o.key(), code, got, want)
			}
		}
	}
}

// TestOpenAPIHeadMirrorsGet checks that every GET operation has a HEAD
// twin (API.md 13) and that only GETs have one: the same parameters and
// security, the same response codes with the same headers, and no content
// in any response.
func TestOpenAPIHeadMirrorsGet(t *testing.T) {
	doc := openAPIDoc(t)
	ops := map[string]openAPIOperation{}
	for _, o := range openAPIOperations(t, doc) {
		ops[o.key()] = o
	}
	for _, o := range ops {
		if o.Method != http.MethodHead {
			continue
		}
		if _, ok := ops["GET "+o.Path]; !ok {
			t.Errorf("%s has no GET to mirror", o.key())
		}
	}
	for _, get := range ops {
		if get.Method != http.MethodGet {
			continue
		}
		head, ok := ops["HEAD "+get.Path]
		if !ok {
			t.Errorf("%s has no HEAD operation", get.key())
			continue
		}
		for _, k := range []string{"parameters", "security", "tags"} {
			if g, h := fmt.Sprint(get.Op[k]), fmt.Sprint(head.Op[k]); g != h {
				t.Errorf("%s: %s = %s, want GET's %s", head.key(), k, h, g)
			}
		}
		if g, h := openAPIKeys(get.responses()), openAPIKeys(head.responses()); !slices.Equal(g, h) {
			t.Errorf("%s: responses %v, want GET's %v", head.key(), h, g)
		}
		for code, r := range head.responses() {
			hr, _ := openAPIResolve(t, doc, r).(map[string]any)
			gr, _ := openAPIResolve(t, doc, get.responses()[code]).(map[string]any)
			if hr["content"] != nil {
				t.Errorf("%s %s: has content, want none", head.key(), code)
			}
			if g, h := fmt.Sprint(gr["headers"]), fmt.Sprint(hr["headers"]); g != h {
				t.Errorf("%s %s: headers %s, want GET's %s", head.key(), code, h, g)
			}
		}
	}
}

// TestOpenAPIProviderSchemas checks the `config` union, the partial update
// config and the credentials against the carrier catalogue.
func TestOpenAPIProviderSchemas(t *testing.T) {
	doc := openAPIDoc(t)
	schema := func(ref string) map[string]any {
		v, err := openAPIPointer(doc, ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		m, _ := v.(map[string]any)
		return m
	}
	// variants returns the schemas of a union, keyed by provider const (or
	// by their sorted property names when they have no provider).
	variants := func(name, keyword string) map[string]map[string]any {
		out := map[string]map[string]any{}
		list, _ := schema("#/components/schemas/" + name)[keyword].([]any)
		for _, v := range list {
			s := schema(fmt.Sprint(openAPIDig(v, "$ref")))
			k := fmt.Sprint(openAPIDig(s, "properties", "provider", "const"))
			if openAPIDig(s, "properties", "provider") == nil {
				k = strings.Join(openAPIKeys(s["properties"].(map[string]any)), ",")
			}
			out[k] = s
		}
		if len(list) != len(carrier.Specs()) || len(out) != len(list) {
			t.Errorf("%s has %d %s variants (%d distinct), want one per provider (%d)", name, len(list), keyword, len(out), len(carrier.Specs()))
		}
		return out
	}

	var enum []string
	for _, v := range schema("#/components/schemas/ProviderName")["enum"].([]any) {
		enum = append(enum, fmt.Sprint(v))
	}
	if !slices.Equal(enum, carrier.Names()) {
		t.Errorf("ProviderName enum = %v, want %v", enum, carrier.Names())
	}
	create := schema("#/components/schemas/TelephonyConfigCreateConfig")
	if openAPIDig(create, "discriminator", "propertyName") != "provider" {
		t.Errorf("the config union is not discriminated by provider")
	}
	mapping, _ := openAPIDig(create, "discriminator", "mapping").(map[string]any)
	creates := variants("TelephonyConfigCreateConfig", "oneOf")
	updates := variants("TelephonyConfigUpdateConfig", "anyOf")
	creds := variants("Credentials", "anyOf")

	for _, spec := range carrier.Specs() {
		p := spec.Provider
		var names, required []string
		for _, f := range spec.Fields {
			names = append(names, f.Name)
			if f.Required {
				required = append(required, f.Name)
			}
		}
		if r := fmt.Sprint(mapping[p]); fmt.Sprint(openAPIDig(schema(r), "properties", "provider", "const")) != p {
			t.Errorf("discriminator mapping for %s = %q, want the %s schema", p, r, p)
		}
		if c := creds[strings.Join(openAPISorted(names), ",")]; c == nil {
			t.Errorf("no credentials schema has exactly the %s fields %v", p, openAPISorted(names))
		} else if got := openAPISorted(openAPIStrings(c["required"])); !slices.Equal(got, openAPISorted(names)) {
			t.Errorf("%s credentials: required = %v, want every field (always present)", p, got)
		}
		for kind, s := range map[string]map[string]any{"create": creates[p], "update": updates[p]} {
			if s == nil {
				t.Errorf("%s: no %s config schema with provider const %q", p, kind, p)
				continue
			}
			props, _ := s["properties"].(map[string]any)
			if got, want := openAPIKeys(props), openAPISorted(append([]string{"provider", "from_numbers"}, names...)); !slices.Equal(got, want) {
				t.Errorf("%s %s config properties = %v, want %v", p, kind, got, want)
			}
			wantReq := []string{}
			if kind == "create" {
				wantReq = openAPISorted(append([]string{"provider"}, required...))
			}
			if got := openAPISorted(openAPIStrings(s["required"])); !slices.Equal(got, wantReq) {
				t.Errorf("%s %s config required = %v, want %v", p, kind, got, wantReq)
			}
			for _, f := range spec.Fields {
				fs, _ := props[f.Name].(map[string]any)
				if got := fs["writeOnly"] == true; got != f.Sensitive {
					t.Errorf("%s %s config %s: writeOnly = %v, want %v (sensitive)", p, kind, f.Name, got, f.Sensitive)
				}
				types := append(openAPIStrings(fs["type"]), fmt.Sprint(fs["type"]))
				if want := map[string]string{carrier.TypeBool: "boolean", carrier.TypeString: "string"}[f.Type]; !slices.Contains(types, want) {
					t.Errorf("%s %s config %s: type %v, want %s", p, kind, f.Name, fs["type"], want)
				}
			}
		}
	}
}

func TestOpenAPIServedAndGolden(t *testing.T) {
	rec := httptest.NewRecorder()
	openAPIServer(t).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want %d", rec.Code, http.StatusOK)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if !bytes.Equal(rec.Body.Bytes(), web.OpenAPIDocument()) {
		t.Errorf("served document differs from the embedded web/openapi.json (%d vs %d bytes)", rec.Body.Len(), len(web.OpenAPIDocument()))
	}

	var b strings.Builder
	for _, o := range openAPIOperations(t, openAPIDoc(t)) {
		fmt.Fprintf(&b, "%s %s %s\n", o.Method, o.Path, o.Op["operationId"])
	}
	got := b.String()
	if openAPIUpdate() {
		if err := os.MkdirAll(filepath.Dir(openAPIGolden), 0o755); err != nil {
			t.Fatalf("mkdir testdata: %v", err)
		}
		if err := os.WriteFile(openAPIGolden, []byte(got), 0o644); err != nil {
			t.Fatalf("write golden: %v", err)
		}
	}
	want, err := os.ReadFile(openAPIGolden)
	if err != nil {
		t.Fatalf("read golden (go test ./web -run OpenAPI -update creates it): %v", err)
	}
	if got != string(want) {
		t.Errorf("operations of web/openapi.json changed; if intended, run go test ./web -run OpenAPI -update\n--- got\n%s--- want\n%s", got, want)
	}
}

// openAPIResolve follows v's $ref, if any.
func openAPIResolve(t *testing.T, doc map[string]any, v any) any {
	t.Helper()
	ref, ok := openAPIDig(v, "$ref").(string)
	if !ok {
		return v
	}
	target, err := openAPIPointer(doc, ref)
	if err != nil {
		t.Fatalf("$ref %q: %v", ref, err)
	}
	return target
}

// openAPIPointer resolves a local reference ("#/a/b~1c").
func openAPIPointer(doc map[string]any, ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, errors.New("only local references (#/...) are allowed")
	}
	var cur any = doc
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is not inside an object", tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("no %q", tok)
		}
	}
	return cur, nil
}

// openAPIDig walks nested objects by key; nil when a step is missing.
func openAPIDig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// openAPIWalk calls fn on every object in v.
func openAPIWalk(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, c := range x {
			openAPIWalk(c, fn)
		}
	case []any:
		for _, c := range x {
			openAPIWalk(c, fn)
		}
	}
}

// openAPINoDuplicateKeys fails on an object with the same key twice, which
// encoding/json would silently accept (the last one wins).
func openAPINoDuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []map[string]bool // one per open container; nil for an array
	expectKey := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if s, isStr := tok.(string); isStr && expectKey {
			if stack[len(stack)-1][s] {
				return fmt.Errorf("duplicate key %q", s)
			}
			stack[len(stack)-1][s], expectKey = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack, expectKey = append(stack, map[string]bool{}), true
			continue
		case json.Delim('['):
			stack, expectKey = append(stack, nil), false
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: inside an object, a key comes next.
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}

func openAPIStrings(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func openAPIKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func openAPISorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
