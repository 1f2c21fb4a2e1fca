package carrier

// Creating a Plivo or Vobiz application (API.md 2.3): POST
// .../Account/{auth_id}/Application/ with the service's application-level
// answer and status URLs; the answer's app_id is stored as the
// configuration's application_id.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// plivoAppBody is the application create body (both APIs).
type plivoAppBody struct {
	AppName      string `json:"app_name"`
	AnswerURL    string `json:"answer_url"`
	AnswerMethod string `json:"answer_method"`
	HangupURL    string `json:"hangup_url,omitempty"`
	HangupMethod string `json:"hangup_method,omitempty"`
}

// plivoAppCreated is the create answer: {"message": "created", "app_id":
// "...", "api_id": "..."}. app_id is read whether a string or a number.
type plivoAppCreated struct {
	AppID json.RawMessage `json:"app_id"`
}

// plivoAppName makes name an application name both providers accept:
// letters, digits, "-" and "_" (others become "-"), "outdial" when empty.
func plivoAppName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !plivoAlnum(string(c)) && c != '-' && c != '_' {
			b[i] = '-'
		}
	}
	if s := strings.Trim(string(b), "-"); s != "" {
		return s
	}
	return "outdial"
}

// provisionPlivoLike creates the application of a configuration (auth_id,
// auth_token in creds) pointing at t and returns its app_id. The provider's
// refusal maps through provisionFailed: 401/403 → 422 at auth_token, 404 →
// 404, another 4xx → 422 at application_id, 429 and 5xx → 502. A transport
// error is returned as is (Provision answers it 502).
func provisionPlivoLike(ctx context.Context, d *plivoDialect, creds map[string]any, t Target, opts Options) (string, error) {
	c := newPlivoLike(d, creds, opts)
	body := plivoAppBody{AppName: plivoAppName(t.Name), AnswerURL: t.AnswerURL, AnswerMethod: http.MethodPost}
	if t.StatusURL != "" {
		body.HangupURL, body.HangupMethod = t.StatusURL, http.MethodPost
	}
	var created plivoAppCreated
	if err := c.api().provision(ctx, c.accountURL("Application"), body, &created, "auth_token", "application_id"); err != nil {
		return "", fmt.Errorf("%s create application: %w", d.provider, err)
	}
	var id string
	if json.Unmarshal(created.AppID, &id) != nil {
		id = strings.TrimSpace(string(created.AppID)) // a JSON number
		if id == "null" {
			id = ""
		}
	}
	return id, nil // "" is answered 502 by Provision
}
