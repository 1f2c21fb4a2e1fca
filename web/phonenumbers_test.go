package web_test

import (
	"net/http"
	"strings"
	"testing"
)

var phoneRecordKeys = []string{"id", "telephony_configuration_id", "address", "address_normalized", "address_type",
	"country_code", "label", "is_active", "is_default_caller_id", "created_at", "updated_at"}

func TestAddPhoneNumberAddresses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	twilio := id(t, e.createConfig(e.keyA, "tw", false, validConfig("twilio")), "id")
	ari := id(t, e.createConfig(e.keyA, "ari", false, validConfig("ari")), "id")
	tests := []struct {
		name       string
		config     int64
		body       map[string]any
		normalized string
		kind       string
		country    any
	}{
		{"e164", twilio, map[string]any{"address": "+14155552671"}, "+14155552671", "pstn", nil},
		{"e164 with spaces", twilio, map[string]any{"address": "+44 20 7946 0958"}, "+442079460958", "pstn", nil},
		{"national with country", twilio, map[string]any{"address": "(415) 555-2672", "country_code": "US"}, "+14155552672", "pstn", "US"},
		{"national lower-case country", twilio, map[string]any{"address": "030 123456", "country_code": "de"}, "+4930123456", "pstn", "DE"},
		{"e164 with matching country", twilio, map[string]any{"address": "+33 1 23 45 67 89", "country_code": "FR"}, "+33123456789", "pstn", "FR"},
		{"sip uri", twilio, map[string]any{"address": "sip:100@PBX.Example"}, "sip:100@pbx.example", "sip_uri", nil},
		{"sip uri with port and case", twilio, map[string]any{"address": "SIP:alice@Example.com:5060"}, "sip:alice@example.com:5060", "sip_uri", nil},
		{"sips uri", twilio, map[string]any{"address": "sips:bob@secure.example"}, "sips:bob@secure.example", "sip_uri", nil},
		{"ari extension", ari, map[string]any{"address": "1001"}, "1001", "sip_extension", nil},
		{"ari extension with symbols", ari, map[string]any{"address": "*97#"}, "*97#", "sip_extension", nil},
		{"ari e164", ari, map[string]any{"address": "+14155552673"}, "+14155552673", "pstn", nil},
		{"ari national with country", ari, map[string]any{"address": "415-555-2674", "country_code": "US"}, "+14155552674", "pstn", "US"},
		{"ari sip uri", ari, map[string]any{"address": "sip:2001@pbx.local"}, "sip:2001@pbx.local", "sip_uri", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.createNumber(e.keyA, tt.config, tt.body)
			if !sameSet(keys(got), phoneRecordKeys) {
				t.Errorf("keys = %v, want %v", keys(got), phoneRecordKeys)
			}
			if got["address"] != tt.body["address"] || got["address_normalized"] != tt.normalized || got["address_type"] != tt.kind ||
				got["country_code"] != tt.country || got["label"] != nil || got["is_active"] != true || got["is_default_caller_id"] != false ||
				id(t, got, "telephony_configuration_id") != tt.config {
				t.Errorf("record = %v; want normalized %q type %q country %v", got, tt.normalized, tt.kind, tt.country)
			}
			for _, f := range []string{"created_at", "updated_at"} {
				if s, _ := got[f].(string); !timestampRe.MatchString(s) {
					t.Errorf("%s = %v", f, got[f])
				}
			}
		})
	}
	// The list holds them in id order, each exactly as created.
	r := e.a(http.MethodGet, numbersPath(twilio), nil)
	wantStatus(t, r, http.StatusOK)
	list := r.obj(t)["phone_numbers"].([]any)
	if len(list) != 8 {
		t.Fatalf("twilio numbers = %d, want 8", len(list))
	}
	var last int64
	for _, item := range list {
		n := id(t, item.(map[string]any), "id")
		if n <= last {
			t.Errorf("list not ordered by id: %v", list)
		}
		last = n
	}
}

func TestAddPhoneNumberValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	twilio := id(t, e.createConfig(e.keyA, "tw", false, validConfig("twilio")), "id")
	ari := id(t, e.createConfig(e.keyA, "ari", false, validConfig("ari")), "id")
	tests := []struct {
		name   string
		config int64
		body   any
		want   []string
	}{
		{"missing address", twilio, map[string]any{"label": "x"}, []string{"body.address missing"}},
		{"empty address", twilio, map[string]any{"address": ""}, []string{"body.address string_too_short"}},
		{"address number", twilio, map[string]any{"address": 14155552671}, []string{"body.address string_type"}},
		{"too short number", twilio, map[string]any{"address": "+1415"}, []string{"body.address phone_invalid"}},
		{"unassigned range", twilio, map[string]any{"address": "+10005550100"}, []string{"body.address phone_invalid"}},
		{"letters", twilio, map[string]any{"address": "hello"}, []string{"body.address phone_invalid"}},
		{"national without country", twilio, map[string]any{"address": "4155552671"}, []string{"body.address phone_invalid"}},
		{"extension for a non-ari provider", twilio, map[string]any{"address": "1001"}, []string{"body.address phone_invalid"}},
		{"bad extension", ari, map[string]any{"address": "10 01"}, []string{"body.address phone_invalid"}},
		{"bare sip", twilio, map[string]any{"address": "sip:"}, []string{"body.address phone_invalid"}},
		{"sip with space", twilio, map[string]any{"address": "sip:a b@host"}, []string{"body.address phone_invalid"}},
		{"unknown country", twilio, map[string]any{"address": "4155552671", "country_code": "XX"}, []string{"body.country_code value_error"}},
		{"alpha-3 country", twilio, map[string]any{"address": "4155552671", "country_code": "USA"}, []string{"body.country_code value_error"}},
		{"country number", twilio, map[string]any{"address": "4155552671", "country_code": 1}, []string{"body.country_code string_type"}},
		{"long label", twilio, map[string]any{"address": "+14155552671", "label": strings.Repeat("l", 65)}, []string{"body.label string_too_long"}},
		{"default not bool", twilio, map[string]any{"address": "+14155552671", "is_default_caller_id": "x"}, []string{"body.is_default_caller_id bool_parsing"}},
		{"several", twilio, map[string]any{"address": 5, "label": 5, "is_default_caller_id": []any{}},
			[]string{"body.address string_type", "body.label string_type", "body.is_default_caller_id bool_type"}},
		{"not an object", twilio, rawBody(`["+14155552671"]`), []string{"body model_type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := wantProblems(t, e.a(http.MethodPost, numbersPath(tt.config), tt.body), tt.want...)
			for _, p := range ps {
				if p.Type == "phone_invalid" {
					if !strings.HasPrefix(p.Msg, "Value error, ") {
						t.Errorf("msg = %q", p.Msg)
					}
					if p.Input != tt.body.(map[string]any)["address"] {
						t.Errorf("input = %v, want the address", p.Input)
					}
				}
			}
		})
	}
	for _, c := range []int64{twilio, ari} {
		if n := len(e.a(http.MethodGet, numbersPath(c), nil).obj(t)["phone_numbers"].([]any)); n != 0 {
			t.Fatalf("config %d has %d numbers after refused adds", c, n)
		}
	}
	t.Run("unknown configuration", func(t *testing.T) {
		wantDetail(t, e.a(http.MethodPost, numbersPath(999), map[string]any{"address": "+14155552671"}), http.StatusNotFound,
			"telephony configuration 999 not found")
		wantDetail(t, e.a(http.MethodGet, numbersPath(999), nil), http.StatusNotFound, "telephony configuration 999 not found")
	})
}

func TestPhoneNumberUniqueness(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c1 := id(t, e.createConfig(e.keyA, "one", false, validConfig("twilio")), "id")
	c2 := id(t, e.createConfig(e.keyA, "two", false, validConfig("ari")), "id")
	e.createNumber(e.keyA, c1, map[string]any{"address": "+14155552671"})
	e.createNumber(e.keyA, c1, map[string]any{"address": "sip:100@pbx.example"})
	dups := []struct {
		config int64
		body   map[string]any
	}{
		{c1, map[string]any{"address": "+14155552671"}},
		{c1, map[string]any{"address": "(415) 555-2671", "country_code": "US"}},
		{c1, map[string]any{"address": "+1 415-555-2671"}},
		{c2, map[string]any{"address": "+14155552671"}}, // another configuration of the same organization
		{c1, map[string]any{"address": "SIP:100@PBX.EXAMPLE"}},
	}
	for _, d := range dups {
		wantDetailContains(t, e.a(http.MethodPost, numbersPath(d.config), d.body), http.StatusConflict, "already exists")
	}
	// Another organization may use the same numbers.
	b := id(t, e.createConfig(e.keyB, "one", false, validConfig("twilio")), "id")
	e.createNumber(e.keyB, b, map[string]any{"address": "+14155552671"})
	e.createNumber(e.keyB, b, map[string]any{"address": "sip:100@pbx.example"})
}

// defaultCallerIDs returns the ids of configuration cid's default caller ids.
func (e *testEnv) defaultCallerIDs(cid int64) []int64 {
	e.t.Helper()
	r := e.a(http.MethodGet, numbersPath(cid), nil)
	wantStatus(e.t, r, http.StatusOK)
	var out []int64
	for _, item := range r.obj(e.t)["phone_numbers"].([]any) {
		it := item.(map[string]any)
		if it["is_default_caller_id"] == true {
			out = append(out, id(e.t, it, "id"))
		}
	}
	return out
}

func TestDefaultCallerID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c1 := id(t, e.createConfig(e.keyA, "one", false, validConfig("twilio")), "id")
	c2 := id(t, e.createConfig(e.keyA, "two", false, validConfig("twilio")), "id")
	n1 := id(t, e.createNumber(e.keyA, c1, map[string]any{"address": "+14155552671", "is_default_caller_id": true}), "id")
	other := id(t, e.createNumber(e.keyA, c2, map[string]any{"address": "+14155552679", "is_default_caller_id": true}), "id")
	n2 := id(t, e.createNumber(e.keyA, c1, map[string]any{"address": "+14155552672", "is_default_caller_id": true}), "id")
	n3 := id(t, e.createNumber(e.keyA, c1, map[string]any{"address": "+14155552673"}), "id")
	check := func(step string, want int64) {
		t.Helper()
		if got := e.defaultCallerIDs(c1); len(got) != 1 || got[0] != want {
			t.Fatalf("%s: defaults = %v, want [%d]", step, got, want)
		}
		if got := e.defaultCallerIDs(c2); len(got) != 1 || got[0] != other {
			t.Fatalf("%s: other configuration's defaults = %v, want [%d]", step, got, other)
		}
	}
	check("second default added", n2)
	r := e.a(http.MethodPut, numberPath(c1, n3), map[string]any{"is_default_caller_id": true})
	wantStatus(t, r, http.StatusOK)
	if r.obj(t)["is_default_caller_id"] != true {
		t.Errorf("answer = %s", r.Raw)
	}
	check("n3 made default", n3)
	wantStatus(t, e.a(http.MethodPut, numberPath(c1, n1), map[string]any{"is_default_caller_id": true}), http.StatusOK)
	check("n1 made default", n1)
	wantStatus(t, e.a(http.MethodPut, numberPath(c1, n1), map[string]any{"is_default_caller_id": false}), http.StatusOK)
	if got := e.defaultCallerIDs(c1); len(got) != 0 {
		t.Fatalf("defaults after unset = %v, want none", got)
	}
}

func TestUpdatePhoneNumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "one", false, validConfig("twilio")), "id")
	n := e.createNumber(e.keyA, cid, map[string]any{"address": "(415) 555-2671", "country_code": "US", "label": "sales"})
	nid := id(t, n, "id")
	if n["label"] != "sales" {
		t.Fatalf("label = %v", n["label"])
	}

	r := e.a(http.MethodPut, numberPath(cid, nid), map[string]any{"label": "support", "is_active": false})
	wantStatus(t, r, http.StatusOK)
	got := r.obj(t)
	if got["label"] != "support" || got["is_active"] != false {
		t.Fatalf("update answer = %v", got)
	}
	// Only label, is_active and is_default_caller_id change; the rest stays.
	for _, k := range []string{"id", "telephony_configuration_id", "address", "address_normalized", "address_type", "country_code", "created_at", "is_default_caller_id"} {
		if !equalJSON(got[k], n[k]) {
			t.Errorf("%s = %v, want %v", k, got[k], n[k])
		}
	}
	// Fields not sent keep their values; address can't be changed.
	r = e.a(http.MethodPut, numberPath(cid, nid), map[string]any{"address": "+14155559999"})
	wantStatus(t, r, http.StatusOK)
	if r.obj(t)["label"] != "support" || r.obj(t)["is_active"] != false || r.obj(t)["address_normalized"] != "+14155552671" {
		t.Errorf("after empty update = %s", r.Raw)
	}
	// null clears the label.
	r = e.a(http.MethodPut, numberPath(cid, nid), map[string]any{"label": nil})
	wantStatus(t, r, http.StatusOK)
	if v, has := r.obj(t)["label"]; !has || v != nil {
		t.Errorf("label after null = %v", v)
	}
	g := e.a(http.MethodGet, numbersPath(cid), nil).obj(t)["phone_numbers"].([]any)[0]
	if !equalJSON(g, r.Body) {
		t.Errorf("list = %v\nwant %v", g, r.Body)
	}

	tests := []struct {
		name string
		body any
		want []string
	}{
		{"long label", map[string]any{"label": strings.Repeat("x", 65)}, []string{"body.label string_too_long"}},
		{"active string", map[string]any{"is_active": "sometimes"}, []string{"body.is_active bool_parsing"}},
		{"default list", map[string]any{"is_default_caller_id": []any{1}}, []string{"body.is_default_caller_id bool_type"}},
		{"two at once", map[string]any{"label": 1, "is_active": "x"}, []string{"body.label string_type", "body.is_active bool_parsing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblems(t, e.a(http.MethodPut, numberPath(cid, nid), tt.body), tt.want...)
		})
	}
	wantDetail(t, e.a(http.MethodPut, numberPath(cid, 999), map[string]any{"label": "x"}), http.StatusNotFound, "phone number 999 not found")
	wantDetail(t, e.a(http.MethodPut, numberPath(999, nid), map[string]any{"label": "x"}), http.StatusNotFound, "phone number "+itoa(nid)+" not found")
}

func TestPhoneNumberCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "one", false, validConfig("twilio")), "id")
	other := id(t, e.createConfig(e.keyA, "two", false, validConfig("twilio")), "id")
	count := func(step string, want int) {
		t.Helper()
		d := e.a(http.MethodGet, configPath(cid), nil).obj(t)
		if d["phone_number_count"] != float64(want) {
			t.Fatalf("%s: detail phone_number_count = %v, want %d", step, d["phone_number_count"], want)
		}
		for _, item := range e.a(http.MethodGet, configsPath, nil).obj(t)["configurations"].([]any) {
			it := item.(map[string]any)
			wantN := want
			if id(t, it, "id") == other {
				wantN = 1
			}
			if it["phone_number_count"] != float64(wantN) {
				t.Fatalf("%s: list phone_number_count of %v = %v, want %d", step, it["id"], it["phone_number_count"], wantN)
			}
		}
	}
	e.createNumber(e.keyA, other, map[string]any{"address": "+14155552670"})
	count("none", 0)
	var ids []int64
	for _, a := range []string{"+14155552671", "+14155552672", "sip:1@pbx.example"} {
		ids = append(ids, id(t, e.createNumber(e.keyA, cid, map[string]any{"address": a}), "id"))
	}
	count("three", 3)
	wantStatus(t, e.a(http.MethodPut, numberPath(cid, ids[0]), map[string]any{"is_active": false}), http.StatusOK)
	count("one inactive", 2)
	wantStatus(t, e.a(http.MethodPut, numberPath(cid, ids[0]), map[string]any{"is_active": true}), http.StatusOK)
	count("active again", 3)
	wantStatus(t, e.a(http.MethodDelete, numberPath(cid, ids[1]), nil), http.StatusNoContent)
	count("one deleted", 2)
	// The update answer counts too.
	r := e.a(http.MethodPut, configPath(cid), map[string]any{"name": "uno"})
	if r.obj(t)["phone_number_count"] != float64(2) {
		t.Errorf("PUT phone_number_count = %v", r.obj(t)["phone_number_count"])
	}
}

func TestDeletePhoneNumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "one", false, validConfig("twilio")), "id")
	other := id(t, e.createConfig(e.keyA, "two", false, validConfig("twilio")), "id")
	nid := id(t, e.createNumber(e.keyA, cid, map[string]any{"address": "+14155552671"}), "id")
	keep := id(t, e.createNumber(e.keyA, cid, map[string]any{"address": "+14155552672"}), "id")
	// Through another configuration's path it does not exist.
	wantDetail(t, e.a(http.MethodDelete, numberPath(other, nid), nil), http.StatusNotFound, "phone number "+itoa(nid)+" not found")
	r := e.a(http.MethodDelete, numberPath(cid, nid), nil)
	wantStatus(t, r, http.StatusNoContent)
	if len(r.Raw) != 0 {
		t.Errorf("204 body = %q", r.Raw)
	}
	wantDetail(t, e.a(http.MethodDelete, numberPath(cid, nid), nil), http.StatusNotFound, "phone number "+itoa(nid)+" not found")
	list := e.a(http.MethodGet, numbersPath(cid), nil).obj(t)["phone_numbers"].([]any)
	if len(list) != 1 || id(t, list[0].(map[string]any), "id") != keep {
		t.Fatalf("list = %v", list)
	}
	// The address is free again.
	e.createNumber(e.keyA, other, map[string]any{"address": "+14155552671"})
}
