package carrier

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestTelnyxProvision(t *testing.T) {
	target := Target{Name: "outdial main", AnswerURL: "https://svc.example/api/v1/telephony/telnyx/answer",
		StatusURL: "https://svc.example/api/v1/telephony/telnyx/status"}
	t.Run("created", func(t *testing.T) {
		srv := newTelnyxServer(t, func(telnyxReq) (int, string) {
			return http.StatusCreated, `{"data":{"id":"1293384261075731499","record_type":"call_control_application","application_name":"outdial main"}}`
		})
		field, id, err := Provision(context.Background(), Telnyx, map[string]any{"api_key": telnyxTestKey},
			target, Options{BaseURLs: map[string]string{Telnyx: srv.URL}})
		if err != nil || field != "connection_id" || id != "1293384261075731499" {
			t.Fatalf("Provision = %q, %q, %v", field, id, err)
		}
		reqs := srv.requests()
		if len(reqs) != 1 {
			t.Fatalf("requests = %d, want 1", len(reqs))
		}
		r := reqs[0]
		if r.Method != http.MethodPost || r.Path != "/v2/call_control_applications" || r.Auth != "Bearer "+telnyxTestKey {
			t.Fatalf("request = %s %s (%s)", r.Method, r.Path, r.Auth)
		}
		want := map[string]any{"application_name": "outdial main", "webhook_event_url": target.StatusURL,
			"webhook_api_version": "2", "active": true}
		for k, v := range want {
			if r.Body[k] != v {
				t.Errorf("%s = %#v, want %#v", k, r.Body[k], v)
			}
		}
	})
	t.Run("already has a connection", func(t *testing.T) {
		field, id, err := Provision(context.Background(), Telnyx, map[string]any{"api_key": "k", "connection_id": "9"}, target, Options{})
		if field != "" || id != "" || err != nil {
			t.Fatalf("Provision = %q, %q, %v; want nothing done", field, id, err)
		}
	})
	tests := []struct {
		name   string
		status int
		body   string
		want   int // the API's status
		typ    string
		field  string
	}{
		{"unauthorized", 401, `{"errors":[{"code":"10009","title":"Authentication failed","detail":"Could not understand the provided credentials."}]}`, 422, ProvisionAuthFailed, "api_key"},
		{"forbidden", 403, `{"errors":[{"code":"10010","title":"Authorization failed"}]}`, 422, ProvisionAuthFailed, "api_key"},
		{"not found", 404, `{"errors":[{"code":"10005","title":"Resource not found"}]}`, 404, "", ""},
		{"invalid", 422, `{"errors":[{"code":"10015","title":"Invalid value","detail":"webhook_event_url must be https"}]}`, 422, ProvisionRejected, "connection_id"},
		{"rate limited", 429, `{"errors":[{"code":"10011"}]}`, 502, "", ""},
		{"server error", 500, `{"errors":[{"code":"10007","title":"Unexpected error"}]}`, 502, "", ""},
		{"created without id", 201, `{"data":{}}`, 502, "", ""},
		{"created, not json", 201, `<html>`, 502, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return tc.status, tc.body })
			_, _, err := Provision(context.Background(), Telnyx, map[string]any{"api_key": telnyxTestKey}, target,
				Options{BaseURLs: map[string]string{Telnyx: srv.URL}})
			var pe *ProvisionError
			if !errors.As(err, &pe) {
				t.Fatalf("Provision err = %v, want a *ProvisionError", err)
			}
			if pe.Status != tc.want || pe.Type != tc.typ || pe.Field != tc.field {
				t.Fatalf("ProvisionError = %+v, want status %d type %q field %q", pe, tc.want, tc.typ, tc.field)
			}
			if strings.Contains(pe.Error(), telnyxTestKey) {
				t.Fatalf("error leaks the API key: %v", pe)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return 200, "" })
		srv.Close()
		_, _, err := Provision(context.Background(), Telnyx, map[string]any{"api_key": telnyxTestKey}, target,
			Options{BaseURLs: map[string]string{Telnyx: srv.URL}})
		var pe *ProvisionError
		if !errors.As(err, &pe) || pe.Status != http.StatusBadGateway {
			t.Fatalf("Provision err = %v, want 502", err)
		}
	})
}
