package cmd

// The demo's set-up, done as any client of the API does it: HTTP requests
// to the service's own listener with the organization's API key, and the
// contacts uploaded with a plain S3 PUT to the presigned URL.

import (
	"bytes"
	"context"
	_ "embed" // the demo's sample data
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// demoContacts is the sample contacts file: 200 rows of phone_number,
// first_name, last_name and appointment (the column the workflow's
// greeting uses). The numbers are the NANP's fictional 555-0100 to
// 555-0149 in four area codes (415, 312, 212, 303: four US time zones);
// libphonenumber accepts them (555-01XX only: it rejects most of 555).
//
//go:embed demodata/contacts.csv
var demoContacts []byte

// demoWorkflow is the sample workflow: an appointment reminder whose start
// node greets {{first_name}} about {{appointment}}.
//
//go:embed demodata/workflow.json
var demoWorkflow []byte

// Names of what the demo creates in organization demo.
const (
	demoOrg          = "demo"
	demoConfigName   = "Twilio simulator"
	demoWorkflowName = "Appointment reminder"
	demoCampaignName = "Appointment reminders"
	// demoCallerID is the caller id of the demo's configuration (555-0100
	// of area code 650, outside the contacts' numbers).
	demoCallerID = "+16505550100"
)

// The demo campaign's pace: about 25 calls up at once, each lasting a
// fraction of a second (busy, failed) to a few seconds (answered), is about
// seven calls a second, so the first calls to 200 contacts take about 30 s;
// the retries come 30 s (the shortest retry_delay_seconds) after their
// first call, and the campaign completes after about a minute.
const (
	demoMaxConcurrency = 25
	demoRatePerSecond  = 10
	demoRetryDelay     = 30
)

// demoClient calls the API as a client does: over HTTP with an API key.
type demoClient struct {
	base string // the service's public URL
	key  string
	http *http.Client
}

// apiError is a non-200 answer of the API.
type apiError struct {
	method, path string
	status       int
	body         string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.method, e.path, e.status, e.body)
}

// do sends body (JSON, nil: none) to path and decodes a 200 answer into out
// (nil: discarded); any other status is an *apiError.
func (c *demoClient) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("X-API-Key", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode != http.StatusOK {
		return &apiError{method: method, path: path, status: res.StatusCode, body: strings.TrimSpace(string(b))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// isConflict reports whether err is the API's 409.
func isConflict(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusConflict
}

// demoCampaign is the campaign the set-up started.
type demoCampaign struct {
	ID        int64 `json:"id"`
	TotalRows int   `json:"total_rows"`
}

// setUp makes organization demo ready and starts its campaign: calling
// hours off, a Twilio configuration with sim's credentials (machine
// detection on, so voicemail is told apart) and a caller id, the sample
// workflow, the sample contacts uploaded through a presigned URL, and a
// campaign of them with retries. A configuration or workflow of the same
// name (a --data directory used before) is reused.
func (c *demoClient) setUp(ctx context.Context, sim *twiliosim.Server) (*demoCampaign, error) {
	if err := c.do(ctx, http.MethodPut, "/api/v1/organizations/compliance",
		map[string]any{"calling_hours": map[string]any{"enabled": false}}, nil); err != nil {
		return nil, err
	}
	configID, err := c.twilioConfig(ctx, sim)
	if err != nil {
		return nil, err
	}
	workflowID, err := c.workflow(ctx)
	if err != nil {
		return nil, err
	}
	fileKey, err := c.upload(ctx, "demo-contacts.csv", demoContacts)
	if err != nil {
		return nil, err
	}
	var camp demoCampaign
	err = c.do(ctx, http.MethodPost, "/api/v1/campaign", map[string]any{
		"name": demoCampaignName, "workflow_id": workflowID, "source_id": fileKey,
		"telephony_configuration_id": configID,
		"max_concurrency":            demoMaxConcurrency, "rate_limit_per_second": demoRatePerSecond,
		"retry_config": map[string]any{"enabled": true, "max_retries": 1, "retry_delay_seconds": demoRetryDelay,
			"retry_on_busy": true, "retry_on_no_answer": true, "retry_on_voicemail": false},
	}, &camp)
	if err != nil {
		return nil, err
	}
	if err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", camp.ID), nil, nil); err != nil {
		return nil, err
	}
	return &camp, nil
}

// named is an element of a list answer.
type named struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// twilioConfig returns the id of the demo's Twilio configuration, created
// with a default caller id unless one of its name exists.
func (c *demoClient) twilioConfig(ctx context.Context, sim *twiliosim.Server) (int64, error) {
	var list struct {
		Configurations []named `json:"configurations"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v1/organizations/telephony-configs", nil, &list); err != nil {
		return 0, err
	}
	for _, cfg := range list.Configurations {
		if cfg.Name == demoConfigName {
			return cfg.ID, nil
		}
	}
	config := sim.Credentials(true)
	config["provider"] = "twilio"
	var cfg named
	if err := c.do(ctx, http.MethodPost, "/api/v1/organizations/telephony-configs",
		map[string]any{"name": demoConfigName, "is_default_outbound": true, "config": config}, &cfg); err != nil {
		return 0, err
	}
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", cfg.ID),
		map[string]any{"address": demoCallerID, "label": "demo caller id", "is_default_caller_id": true}, nil)
	if err != nil {
		return 0, err
	}
	return cfg.ID, nil
}

// workflow returns the id of the sample workflow, created unless one of
// its name exists.
func (c *demoClient) workflow(ctx context.Context) (int64, error) {
	var wf named
	err := c.do(ctx, http.MethodPost, "/api/v1/workflow",
		map[string]any{"name": demoWorkflowName, "workflow_definition": json.RawMessage(demoWorkflow)}, &wf)
	if !isConflict(err) {
		return wf.ID, err
	}
	var list struct {
		Workflows []named `json:"workflows"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v1/workflow", nil, &list); err != nil {
		return 0, err
	}
	for _, w := range list.Workflows {
		if w.Name == demoWorkflowName {
			return w.ID, nil
		}
	}
	return 0, err
}

// upload asks for a presigned upload URL, PUTs data to it as curl or
// `aws s3` would (a real S3 request to the bundled object store) and
// returns the file key.
func (c *demoClient) upload(ctx context.Context, name string, data []byte) (string, error) {
	var up struct {
		UploadURL string `json:"upload_url"`
		FileKey   string `json:"file_key"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/v1/s3/presigned-upload-url",
		map[string]any{"file_name": name, "file_size": len(data), "content_type": "text/csv"}, &up); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, up.UploadURL, bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("upload contacts: %w", err)
	}
	req.Header.Set("Content-Type", "text/csv")
	res, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("upload contacts: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		return "", fmt.Errorf("upload contacts: status %d: %s", res.StatusCode, strings.TrimSpace(string(b)))
	}
	return up.FileKey, nil
}
