package realbin

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
)

// Compliance policies (API.md 12.2) the benchmarks PUT, as partial JSON
// bodies of PUT /api/v1/organizations/compliance.
const (
	// CallingHoursOff turns calling hours off. An organization starts with
	// them on, 08:00-21:00 in the callee's local time, so a benchmark that
	// dials in real time would have its calls held whenever its numbers'
	// zones are at night; the dialing benchmarks measure the dialer at any
	// hour and PUT this by default (PolicyFlag).
	CallingHoursOff = `{"calling_hours":{"enabled":false}}`
	// OpenAllDay turns calling hours on, open at every hour of every day:
	// every call goes through the check (the callee's zones and local
	// time) and none is held.
	OpenAllDay = `{"calling_hours":{"enabled":true,"start":"00:00","end":"24:00","days":[0,1,2,3,4,5,6]}}`
)

// PolicyFlag defines the -policy flag of a benchmark that dials: the
// compliance policy to PUT for every organization that dials, before it
// dials. Its default is CallingHoursOff; "" keeps the organization's
// defaults.
func PolicyFlag() *string {
	return flag.String("policy", CallingHoursOff,
		"compliance policy PUT to /api/v1/organizations/compliance for every organization that dials, before it dials "+
			"(partial JSON, API.md 12.2); \"\" keeps the defaults, calling hours 08:00-21:00 callee-local, which hold calls to zones at night")
}

// SetCompliance PUTs policy, partial JSON, to the organization's
// compliance policy and returns the whole policy answered; policy "" does
// nothing and returns nil. Any answer but 200 is fatal.
func (c *Client) SetCompliance(policy string) map[string]any {
	if policy == "" {
		return nil
	}
	if !json.Valid([]byte(policy)) {
		c.Fail("compliance policy is not JSON: %s", policy)
	}
	return c.Do(http.MethodPut, "/api/v1/organizations/compliance", json.RawMessage(policy))
}

// UploadCSV presigns an upload of body as the file name, PUTs it and
// returns its file_key, as a client uploads a contacts or suppression
// file (API.md 3.1).
func (c *Client) UploadCSV(name string, body []byte) string {
	up := c.Post("/api/v1/s3/presigned-upload-url", map[string]any{"file_name": name, "file_size": len(body), "content_type": "text/csv"})
	Upload(up["upload_url"].(string), body, c.Fail)
	return up["file_key"].(string)
}

// SuppressResult is the answer of POST /api/v1/suppressions.
type SuppressResult struct {
	Added          int `json:"added"`
	AlreadyPresent int `json:"already_present"`
	InvalidCount   int `json:"invalid_count"`
}

// ImportSuppressions adds the numbers of the CSV uploaded at fileKey to the
// organization's suppression list (POST /api/v1/suppressions with
// source_id) and returns the counts answered. Any answer but 200 is fatal.
func (c *Client) ImportSuppressions(fileKey string) SuppressResult {
	m := c.Post("/api/v1/suppressions", map[string]any{"source_id": fileKey})
	var r SuppressResult
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, &r); err != nil {
		c.Fail("POST /api/v1/suppressions answered %v: %v", m, err)
	}
	return r
}

// String is the counts as the benchmarks print them.
func (r SuppressResult) String() string {
	return fmt.Sprintf("added %d, already present %d, invalid %d", r.Added, r.AlreadyPresent, r.InvalidCount)
}
