package web_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/outdial/outdial/store/objstore"
)

const presignPath = "/api/v1/s3/presigned-upload-url"

// testMaxUpload is the server's largest upload in these tests.
const testMaxUpload = 4096

// wantProblem is one expected entry of a 422 body; ctx nil means no ctx.
type wantProblem struct {
	loc, typ, msg string
	input         any
	ctx           map[string]any
}

// wantExactProblems checks that r is a 422 listing exactly want, in order,
// with loc, type, msg, input and ctx equal.
func wantExactProblems(t *testing.T, r response, want ...wantProblem) {
	t.Helper()
	ps := problems(t, r)
	if len(ps) != len(want) {
		t.Fatalf("%d problems, want %d: %s", len(ps), len(want), r.Raw)
	}
	for i, w := range want {
		p := ps[i]
		if p.loc() != w.loc || p.Type != w.typ || p.Msg != w.msg || !equalJSON(p.Input, w.input) || !equalJSON(p.Ctx, w.ctx) {
			t.Errorf("problem %d = %s %s %q input %v ctx %v,\nwant %s %s %q input %v ctx %v", i,
				p.loc(), p.Type, p.Msg, p.Input, p.Ctx, w.loc, w.typ, w.msg, w.input, w.ctx)
		}
	}
}

func TestUploadPresignAnswer(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	r := oe.a(http.MethodPost, presignPath, map[string]any{"file_name": "contacts.csv", "file_size": 1234})
	wantStatus(t, r, http.StatusOK)
	m := r.obj(t)
	if !sameSet(keys(m), []string{"upload_url", "file_key", "s3_key", "expires_in"}) {
		t.Fatalf("keys = %v, want upload_url, file_key, s3_key, expires_in", keys(m))
	}
	if !bytes.Contains(r.Raw, []byte(`"expires_in":900`)) {
		t.Errorf("expires_in is not the integer 900: %s", r.Raw)
	}
	key, _ := m["file_key"].(string)
	if m["s3_key"] != key {
		t.Errorf("s3_key = %v, want file_key %q", m["s3_key"], key)
	}
	keyRe := regexp.MustCompile(fmt.Sprintf(`^campaigns/%d/([0-9a-f-]{36})_contacts\.csv$`, oe.orgA))
	match := keyRe.FindStringSubmatch(key)
	if match == nil {
		t.Fatalf("file_key = %q, want campaigns/%d/<uuid>_contacts.csv", key, oe.orgA)
	}
	if u, err := uuid.Parse(match[1]); err != nil || u.Version() != 4 || u.String() != match[1] {
		t.Errorf("key uuid %q is not a canonical version 4 UUID (%v)", match[1], err)
	}
	if err := objstore.ValidateKey(key); err != nil {
		t.Errorf("key %q: %v", key, err)
	}

	raw, _ := m["upload_url"].(string)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("upload_url %q: %v", raw, err)
	}
	if u.Scheme != "http" || u.Host != oe.srv.Listener.Addr().String() || u.Path != "/outdial/"+key {
		t.Errorf("upload_url = %s, want http://%s/outdial/%s?...", raw, oe.srv.Listener.Addr(), key)
	}
	q := u.Query()
	for name, want := range map[string]string{
		"X-Amz-Algorithm":      "AWS4-HMAC-SHA256",
		"X-Amz-Expires":        "900",
		objstore.MaxSizeParam:  "1234",
		"X-Amz-SignedHeaders":  "content-type;host",
		"X-Amz-Security-Token": "",
	} {
		if got := q.Get(name); got != want {
			t.Errorf("upload_url %s = %q, want %q", name, got, want)
		}
	}
	if !strings.HasSuffix(q.Get("X-Amz-Credential"), "/us-east-1/s3/aws4_request") || len(q.Get("X-Amz-Signature")) != 64 {
		t.Errorf("upload_url credential %q / signature %q", q.Get("X-Amz-Credential"), q.Get("X-Amz-Signature"))
	}

	// Every answer names a new object.
	if again := oe.presign(oe.keyA, "contacts.csv", 1234); again.Key == key {
		t.Errorf("two presigns gave the same key %q", key)
	}
}

func TestUploadValidation(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	long := strings.Repeat("a", 252) + ".csv"        // 256 characters
	longUnicode := strings.Repeat("é", 252) + ".csv" // 256 characters, 508 bytes
	const strType, intType = "Input should be a valid string", "Input should be a valid integer"
	const intParsing = "Input should be a valid integer, unable to parse string as an integer"
	const notCSV, notTextCSV = "Value error, file_name must end in .csv", "Value error, content_type must be text/csv"
	ge1 := wantProblem{"body.file_size", "greater_than_equal", "Input should be greater than or equal to 1", nil, map[string]any{"ge": 1}}
	tests := []struct {
		name string
		body any
		want []wantProblem
	}{
		{"empty object", rawBody(`{}`), []wantProblem{
			{"body.file_name", "missing", "Field required", map[string]any{}, nil},
			{"body.file_size", "missing", "Field required", map[string]any{}, nil},
		}},
		{"file_name missing", rawBody(`{"file_size": 10}`), []wantProblem{
			{"body.file_name", "missing", "Field required", map[string]any{"file_size": 10}, nil}}},
		{"file_name null", rawBody(`{"file_name": null, "file_size": 10}`), []wantProblem{
			{"body.file_name", "string_type", strType, nil, nil}}},
		{"file_name number", rawBody(`{"file_name": 42, "file_size": 10}`), []wantProblem{
			{"body.file_name", "string_type", strType, 42, nil}}},
		{"file_name list", rawBody(`{"file_name": ["a.csv"], "file_size": 10}`), []wantProblem{
			{"body.file_name", "string_type", strType, []any{"a.csv"}, nil}}},
		{"file_name empty", rawBody(`{"file_name": "", "file_size": 10}`), []wantProblem{
			{"body.file_name", "string_too_short", "String should have at least 1 character", "", map[string]any{"min_length": 1}}}},
		{"file_name 256 characters", map[string]any{"file_name": long, "file_size": 10}, []wantProblem{
			{"body.file_name", "string_too_long", "String should have at most 255 characters", long, map[string]any{"max_length": 255}}}},
		{"file_name 256 unicode characters", map[string]any{"file_name": longUnicode, "file_size": 10}, []wantProblem{
			{"body.file_name", "string_too_long", "String should have at most 255 characters", longUnicode, map[string]any{"max_length": 255}}}},
		{"file_name txt", rawBody(`{"file_name": "contacts.txt", "file_size": 10}`), []wantProblem{
			{"body.file_name", "value_error", notCSV, "contacts.txt", nil}}},
		{"file_name without dot", rawBody(`{"file_name": "contacts_csv", "file_size": 10}`), []wantProblem{
			{"body.file_name", "value_error", notCSV, "contacts_csv", nil}}},
		{"file_name csv then txt", rawBody(`{"file_name": "contacts.csv.txt", "file_size": 10}`), []wantProblem{
			{"body.file_name", "value_error", notCSV, "contacts.csv.txt", nil}}},
		{"file_name trailing space", rawBody(`{"file_name": "contacts.csv ", "file_size": 10}`), []wantProblem{
			{"body.file_name", "value_error", notCSV, "contacts.csv ", nil}}},
		{"file_size missing", rawBody(`{"file_name": "a.csv"}`), []wantProblem{
			{"body.file_size", "missing", "Field required", map[string]any{"file_name": "a.csv"}, nil}}},
		{"file_size null", rawBody(`{"file_name": "a.csv", "file_size": null}`), []wantProblem{
			{"body.file_size", "int_type", intType, nil, nil}}},
		{"file_size bool", rawBody(`{"file_name": "a.csv", "file_size": true}`), []wantProblem{
			{"body.file_size", "int_type", intType, true, nil}}},
		{"file_size object", rawBody(`{"file_name": "a.csv", "file_size": {}}`), []wantProblem{
			{"body.file_size", "int_type", intType, map[string]any{}, nil}}},
		{"file_size word", rawBody(`{"file_name": "a.csv", "file_size": "ten"}`), []wantProblem{
			{"body.file_size", "int_parsing", intParsing, "ten", nil}}},
		{"file_size fractional string", rawBody(`{"file_name": "a.csv", "file_size": "1.5"}`), []wantProblem{
			{"body.file_size", "int_parsing", intParsing, "1.5", nil}}},
		{"file_size fractional", rawBody(`{"file_name": "a.csv", "file_size": 1.5}`), []wantProblem{
			{"body.file_size", "int_from_float", "Input should be a valid integer, got a number with a fractional part", 1.5, nil}}},
		{"file_size beyond float64", rawBody(`{"file_name": "a.csv", "file_size": 1e400}`), []wantProblem{
			{"body.file_size", "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", "1e400", nil}}},
		{"file_size zero", rawBody(`{"file_name": "a.csv", "file_size": 0}`), []wantProblem{withInput(ge1, 0)}},
		{"file_size negative", rawBody(`{"file_name": "a.csv", "file_size": -5}`), []wantProblem{withInput(ge1, -5)}},
		{"file_size over max", map[string]any{"file_name": "a.csv", "file_size": testMaxUpload + 1}, []wantProblem{
			{"body.file_size", "less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", testMaxUpload), testMaxUpload + 1,
				map[string]any{"le": testMaxUpload}}}},
		{"content_type other", rawBody(`{"file_name": "a.csv", "file_size": 10, "content_type": "text/plain"}`), []wantProblem{
			{"body.content_type", "value_error", notTextCSV, "text/plain", nil}}},
		{"content_type with parameter", rawBody(`{"file_name": "a.csv", "file_size": 10, "content_type": "text/csv; charset=utf-8"}`), []wantProblem{
			{"body.content_type", "value_error", notTextCSV, "text/csv; charset=utf-8", nil}}},
		{"content_type empty", rawBody(`{"file_name": "a.csv", "file_size": 10, "content_type": ""}`), []wantProblem{
			{"body.content_type", "value_error", notTextCSV, "", nil}}},
		{"content_type number", rawBody(`{"file_name": "a.csv", "file_size": 10, "content_type": 5}`), []wantProblem{
			{"body.content_type", "string_type", strType, 5, nil}}},
		{"every field wrong", rawBody(`{"file_name": "a.xlsx", "file_size": 0, "content_type": "application/json"}`), []wantProblem{
			{"body.file_name", "value_error", notCSV, "a.xlsx", nil},
			withInput(ge1, 0),
			{"body.content_type", "value_error", notTextCSV, "application/json", nil},
		}},
		{"every field of the wrong type", rawBody(`{"file_name": 1, "file_size": "x", "content_type": false}`), []wantProblem{
			{"body.file_name", "string_type", strType, 1, nil},
			{"body.file_size", "int_parsing", intParsing, "x", nil},
			{"body.content_type", "string_type", strType, false, nil},
		}},
		{"empty body", rawBody(``), []wantProblem{{"body", "missing", "Field required", nil, nil}}},
		{"not an object", rawBody(`["a.csv", 10]`), []wantProblem{
			{"body", "model_type", "Input should be a valid dictionary or object to extract fields from", []any{"a.csv", 10}, nil}}},
		{"invalid JSON", rawBody(`{"file_name": "a.csv",}`), []wantProblem{
			{"body.22", "json_invalid", "JSON decode error", map[string]any{},
				map[string]any{"error": "invalid character '}' looking for beginning of object key string"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := oe.do(http.MethodPost, presignPath, oe.keyA, tt.body)
			wantExactProblems(t, r, tt.want...)
		})
	}
	if fs := oe.files(); len(fs) != 0 {
		t.Errorf("refused requests left files %q", fs)
	}
}

// withInput returns p with input v.
func withInput(p wantProblem, v any) wantProblem {
	p.input = v
	return p
}

func TestUploadAcceptedInputs(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	name255 := strings.Repeat("b", 251) + ".csv"
	unicode255 := strings.Repeat("é", 251) + ".csv"
	tests := []struct {
		name     string
		body     string
		wantSafe string // the key's part after "<uuid>_"
		wantSize string
	}{
		{"upper-case extension", `{"file_name": "A.CSV", "file_size": 10}`, "A.CSV", "10"},
		{"mixed-case extension", `{"file_name": "x.Csv", "file_size": 10}`, "x.Csv", "10"},
		{"extension only", `{"file_name": ".csv", "file_size": 10}`, ".csv", "10"},
		{"255 characters", `{"file_name": "` + name255 + `", "file_size": 10}`, name255[len(name255)-100:], "10"},
		{"255 unicode characters", `{"file_name": "` + unicode255 + `", "file_size": 10}`, strings.Repeat("_", 96) + ".csv", "10"},
		{"smallest size", `{"file_name": "a.csv", "file_size": 1}`, "a.csv", "1"},
		{"largest size", fmt.Sprintf(`{"file_name": "a.csv", "file_size": %d}`, testMaxUpload), "a.csv", fmt.Sprint(testMaxUpload)},
		{"size as a string", `{"file_name": "a.csv", "file_size": " 42 "}`, "a.csv", "42"},
		{"size as a whole float", `{"file_name": "a.csv", "file_size": 42.0}`, "a.csv", "42"},
		{"size in exponent form", `{"file_name": "a.csv", "file_size": 1e3}`, "a.csv", "1000"},
		{"content_type null", `{"file_name": "a.csv", "file_size": 10, "content_type": null}`, "a.csv", "10"},
		{"content_type text/csv", `{"file_name": "a.csv", "file_size": 10, "content_type": "text/csv"}`, "a.csv", "10"},
		{"content_type upper case", `{"file_name": "a.csv", "file_size": 10, "content_type": "TEXT/CSV"}`, "a.csv", "10"},
		{"content_type with spaces", `{"file_name": "a.csv", "file_size": 10, "content_type": " text/csv "}`, "a.csv", "10"},
		{"unknown keys ignored", `{"file_name": "a.csv", "file_size": 10, "bucket": "other", "key": "../x"}`, "a.csv", "10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := oe.a(http.MethodPost, presignPath, rawBody(tt.body))
			wantStatus(t, r, http.StatusOK)
			m := r.obj(t)
			key, _ := m["file_key"].(string)
			prefix := fmt.Sprintf("campaigns/%d/", oe.orgA)
			if !strings.HasPrefix(key, prefix) || len(key) < len(prefix)+37 || key[len(prefix)+36] != '_' {
				t.Fatalf("file_key = %q", key)
			}
			if got := key[len(prefix)+37:]; got != tt.wantSafe {
				t.Errorf("safe name = %q, want %q", got, tt.wantSafe)
			}
			u, err := url.Parse(m["upload_url"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if got := u.Query().Get(objstore.MaxSizeParam); got != tt.wantSize {
				t.Errorf("signed max size = %q, want %q", got, tt.wantSize)
			}
		})
	}
}

func TestUploadAuth(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	bodies := []any{
		map[string]any{"file_name": "a.csv", "file_size": 10},
		rawBody(`{"file_name": 1}`), // authentication comes before validation
	}
	for _, body := range bodies {
		r := oe.do(http.MethodPost, presignPath, "", body)
		wantDetail(t, r, http.StatusUnauthorized, "Not authenticated")
		if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("WWW-Authenticate = %q, want Bearer", got)
		}
		r = oe.do(http.MethodPost, presignPath, "odk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", body)
		wantDetail(t, r, http.StatusUnauthorized, "Invalid API key")
		if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("WWW-Authenticate = %q, want Bearer", got)
		}
	}
	// Bearer works as well as X-API-Key.
	r := oe.do(http.MethodPost, presignPath, "", map[string]any{"file_name": "a.csv", "file_size": 10}, "Authorization", "Bearer "+oe.keyB)
	wantStatus(t, r, http.StatusOK)
	if key, _ := r.obj(t)["file_key"].(string); !strings.HasPrefix(key, fmt.Sprintf("campaigns/%d/", oe.orgB)) {
		t.Errorf("file_key = %q, want organization %d's prefix", key, oe.orgB)
	}
}

func TestUploadWithoutObjectStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // a server embedded without an object store
	r := e.a(http.MethodPost, presignPath, map[string]any{"file_name": "a.csv", "file_size": 10})
	wantDetail(t, r, http.StatusServiceUnavailable, "no object store is configured")
	// Validation still comes first.
	r = e.a(http.MethodPost, presignPath, map[string]any{"file_name": "a.txt", "file_size": 10})
	wantProblems(t, r, "body.file_name value_error")
}
