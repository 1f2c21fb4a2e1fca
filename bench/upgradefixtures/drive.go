package main

// The set-up and the reads, as any client of the API does them: HTTP with
// the organization's API key, contacts through a presigned upload.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// contactsCSV is the campaign's contacts; scriptByNumber decides each call.
const contactsCSV = `phone_number,first_name,appointment
+14155550100,Ada,Monday 8:30
+13125550100,Barbara,Tuesday 9:00
+12125550100,Carl,Wednesday 10:15
+13035550100,Dora,Thursday 2:30
+14155550101,Ed,Friday 11:00
+13125550101,Fay,Monday 4:45
+12125550101,Gus,Tuesday 1:00
+13035550101,Hal,Wednesday 3:30
`

// suppressed is the contact on the suppression list (versions that have
// one): its attempt ends suppressed, never placed.
const suppressed = "+12125550101"

// scriptByNumber: answered by a person, by a machine, busy, no answer,
// failed, by the callee's number.
func scriptByNumber(ci twiliosim.CallInfo) twiliosim.Script {
	talk := 200 * time.Millisecond
	switch ci.To {
	case "+13125550100":
		return twiliosim.Script{Outcome: twiliosim.Machine, TalkDuration: talk, CallDuration: 17}
	case "+12125550100", "+13035550101":
		return twiliosim.Script{Outcome: twiliosim.Busy, RingDelay: 50 * time.Millisecond}
	case "+13035550100":
		return twiliosim.Script{Outcome: twiliosim.NoAnswer, RingDelay: 50 * time.Millisecond}
	case "+14155550101":
		return twiliosim.Script{Outcome: twiliosim.Failed}
	}
	return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: talk, CallDuration: 42}
}

const workflowJSON = `{"nodes":[
 {"id":"greeting","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting",
  "prompt":"Remind {{first_name}} of the appointment on {{appointment}}.","greeting":"Hi {{first_name}}, a reminder of {{appointment}}."}},
 {"id":"bye","type":"endCall","position":{"x":300,"y":0},"data":{"name":"Goodbye","prompt":"Say goodbye."}}],
 "edges":[{"id":"e1","source":"greeting","target":"bye","data":{"label":"Done","condition":"The callee heard the reminder"}}]}`

// client calls one service's API.
type client struct {
	base string
	http *http.Client
}

// do sends body (JSON; nil: none) with key and decodes a 200 answer into
// out (nil: discarded).
func (c *client) do(ctx context.Context, key, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %s", method, path, res.StatusCode, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

type idOnly struct {
	ID int64 `json:"id"`
}

// has reports whether the version serves path (its OpenAPI document lists
// it).
func (c *client) has(ctx context.Context, key, path string) (bool, error) {
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := c.do(ctx, key, http.MethodGet, "/api/v1/openapi.json", nil, &doc); err != nil {
		return false, err
	}
	_, ok := doc.Paths[path]
	return ok, nil
}

// setUp creates everything the fixture holds (see the package comment).
func (c *client) setUp(ctx context.Context, fx *Fixture, sim *twiliosim.Server) error {
	acme, globex := fx.Keys["acme"], fx.Keys["globex"]
	compliance, err := c.has(ctx, acme, "/api/v1/suppressions")
	if err != nil {
		return err
	}
	if compliance {
		if err := c.do(ctx, acme, http.MethodPut, "/api/v1/organizations/compliance", map[string]any{
			"calling_hours": map[string]any{"enabled": false, "start": "09:00", "end": "20:00"},
			"attempt_cap":   map[string]any{"enabled": true, "max_attempts": 5, "window_hours": 48},
		}, nil); err != nil {
			return err
		}
		if err := c.do(ctx, acme, http.MethodPost, "/api/v1/suppressions", map[string]any{
			"numbers": []string{suppressed, "+16175550100"}, "reason": "asked not to be called",
		}, nil); err != nil {
			return err
		}
	}
	fx.Secrets["acme"] = map[string]map[string]string{
		"Twilio main":  {"auth_token": sim.AuthToken()},
		"Plivo backup": {"auth_token": "plivo-fixture-token-0123456789"},
	}
	fx.Secrets["globex"] = map[string]map[string]string{
		"PBX":    {"app_password": "ari-fixture-password"},
		"Telnyx": {"api_key": "KEY0123456789FIXTURE_abcdefghij"},
	}
	twilio := sim.Credentials(true)
	twilio["provider"] = "twilio"
	var cfg idOnly
	if err := c.do(ctx, acme, http.MethodPost, "/api/v1/organizations/telephony-configs",
		map[string]any{"name": "Twilio main", "is_default_outbound": true, "config": twilio}, &cfg); err != nil {
		return err
	}
	for _, n := range []map[string]any{
		{"address": "+16505550100", "label": "main caller id", "is_default_caller_id": true},
		{"address": "+16505550101", "label": "spare"},
	} {
		if err := c.do(ctx, acme, http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", cfg.ID), n, nil); err != nil {
			return err
		}
	}
	configs := []struct {
		key  string
		body map[string]any
	}{
		{acme, map[string]any{"name": "Plivo backup", "config": map[string]any{"provider": "plivo",
			"auth_id": "MAFIXTURE0123456789", "auth_token": "plivo-fixture-token-0123456789", "application_id": "1234567890"}}},
		{globex, map[string]any{"name": "PBX", "is_default_outbound": true, "config": map[string]any{"provider": "ari",
			"ari_endpoint": "http://pbx.example:8088", "app_name": "outdial", "app_password": "ari-fixture-password",
			"dial_template": "PJSIP/{number}@trunk"}}},
		{globex, map[string]any{"name": "Telnyx", "config": map[string]any{"provider": "telnyx",
			"api_key": "KEY0123456789FIXTURE_abcdefghij", "connection_id": "1234567890123456789",
			"webhook_public_key": "Q2QYqzJxY8m6n1nTqkHIXnGgmF3V3tGK5q9sZmJ0cS0="}}},
	}
	for _, cf := range configs {
		if err := c.do(ctx, cf.key, http.MethodPost, "/api/v1/organizations/telephony-configs", cf.body, &idOnly{}); err != nil {
			return err
		}
	}
	var wf, wf2 idOnly
	if err := c.do(ctx, acme, http.MethodPost, "/api/v1/workflow",
		map[string]any{"name": "Appointment reminder", "workflow_definition": json.RawMessage(workflowJSON)}, &wf); err != nil {
		return err
	}
	if err := c.do(ctx, globex, http.MethodPost, "/api/v1/workflow",
		map[string]any{"name": "Survey draft", "workflow_definition": map[string]any{"nodes": []any{}, "edges": []any{}, "note": "1.50"}}, &wf2); err != nil {
		return err
	}
	return c.campaign(ctx, acme, cfg.ID, wf.ID)
}

// campaign uploads the contacts, creates and starts the campaign, waits
// for it to complete and redials it (a draft child).
func (c *client) campaign(ctx context.Context, key string, configID, workflowID int64) error {
	var up struct {
		UploadURL string `json:"upload_url"`
		FileKey   string `json:"file_key"`
	}
	if err := c.do(ctx, key, http.MethodPost, "/api/v1/s3/presigned-upload-url",
		map[string]any{"file_name": "contacts.csv", "file_size": len(contactsCSV), "content_type": "text/csv"}, &up); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, up.UploadURL, strings.NewReader(contactsCSV))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/csv")
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("upload: status %d", res.StatusCode)
	}
	slots := []map[string]any{}
	for d := 0; d < 7; d++ {
		slots = append(slots, map[string]any{"day_of_week": d, "start_time": "00:00", "end_time": "24:00"})
	}
	var camp idOnly
	if err := c.do(ctx, key, http.MethodPost, "/api/v1/campaign", map[string]any{
		"name": "Spring reminders", "workflow_id": workflowID, "source_id": up.FileKey,
		"telephony_configuration_id": configID, "max_concurrency": 4, "rate_limit_per_second": 20,
		"default_country": "us",
		"retry_config":    map[string]any{"enabled": false, "max_retries": 0},
		"schedule_config": map[string]any{"timezone": "America/New_York", "slots": slots},
		"circuit_breaker": map[string]any{"enabled": false, "failure_threshold": 0.9},
	}, &camp); err != nil {
		return err
	}
	path := fmt.Sprintf("/api/v1/campaign/%d", camp.ID)
	if err := c.do(ctx, key, http.MethodPost, path+"/start", nil, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var st struct {
			State string `json:"state"`
		}
		if err := c.do(ctx, key, http.MethodGet, path, nil, &st); err != nil {
			return err
		}
		if st.State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("campaign %d is still %s after 90 s", camp.ID, st.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c.do(ctx, key, http.MethodPost, path+"/redial", map[string]any{"name": "Spring reminders, again", "retry_on_failed": true}, nil)
}

// record makes every read of both organizations and stores the answers.
func (c *client) record(ctx context.Context, fx *Fixture) error {
	for _, org := range []string{"acme", "globex"} {
		key := fx.Keys[org]
		get := func(path string, out any) error {
			r, err := c.get(ctx, key, path)
			if err != nil {
				return err
			}
			r.Org = org
			fx.Requests = append(fx.Requests, r)
			if out != nil && r.JSON != nil {
				return json.Unmarshal(r.JSON, out)
			}
			return nil
		}
		var configs struct {
			Configurations []idOnly `json:"configurations"`
		}
		if err := get("/api/v1/organizations/telephony-configs", &configs); err != nil {
			return err
		}
		for _, cf := range configs.Configurations {
			p := fmt.Sprintf("/api/v1/organizations/telephony-configs/%d", cf.ID)
			if err := errors.Join(get(p, nil), get(p+"/phone-numbers", nil)); err != nil {
				return err
			}
		}
		var wfs struct {
			Workflows []idOnly `json:"workflows"`
		}
		if err := get("/api/v1/workflow", &wfs); err != nil {
			return err
		}
		for _, w := range wfs.Workflows {
			if err := get(fmt.Sprintf("/api/v1/workflow/%d", w.ID), nil); err != nil {
				return err
			}
		}
		var camps struct {
			Campaigns []idOnly `json:"campaigns"`
		}
		if err := get("/api/v1/campaign", &camps); err != nil {
			return err
		}
		for _, cp := range camps.Campaigns {
			p := fmt.Sprintf("/api/v1/campaign/%d", cp.ID)
			if err := errors.Join(get(p, nil), get(p+"/calls?limit=1000", nil), get(p+"/logs?limit=1000", nil), get(p+"/report", nil)); err != nil {
				return err
			}
		}
		if ok, err := c.has(ctx, key, "/api/v1/suppressions"); err != nil || !ok {
			continue
		}
		for _, p := range []string{"/api/v1/suppressions", "/api/v1/organizations/compliance", "/api/v1/organizations/compliance/changes"} {
			if err := get(p, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// get makes one GET and returns it as recorded; a non-200 is an error.
func (c *client) get(ctx context.Context, key, path string) (Recorded, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return Recorded{}, err
	}
	req.Header.Set("X-API-Key", key)
	res, err := c.http.Do(req)
	if err != nil {
		return Recorded{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Recorded{}, err
	}
	if res.StatusCode != http.StatusOK {
		return Recorded{}, fmt.Errorf("GET %s: status %d: %s", path, res.StatusCode, b)
	}
	r := Recorded{Path: path, Status: res.StatusCode}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return Recorded{}, fmt.Errorf("GET %s: %w", path, err)
		}
		r.JSON = buf.Bytes()
	} else {
		r.Text = string(b)
	}
	return r, nil
}
