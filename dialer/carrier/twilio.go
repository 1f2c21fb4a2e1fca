package carrier

// Twilio Programmable Voice over its REST API (2010-04-01), with net/http
// only. This file holds the REST requests (create, update, fetch a call) and
// the mapping of Twilio's answers to *Error; twilio_webhook.go holds the
// status mapping, the TwiML answer and the X-Twilio-Signature checks.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// twilioBaseURL is Twilio's REST API base URL, used unless
// Options.BaseURLs["twilio"] (OUTDIAL_TWILIO_API_URL) overrides it.
const twilioBaseURL = "https://api.twilio.com"

// twilioStatusEvents are the StatusCallbackEvent values every call asks for.
// Twilio posts CallStatus "initiated", "ringing", "in-progress" and, for
// "completed", whichever final status the call ended with.
var twilioStatusEvents = []string{"initiated", "ringing", "answered", "completed"}

// Twilio's limits on the Timeout (ring seconds) parameter of a new call.
const (
	twilioMaxTimeout = 600
	// maxTwilioBody bounds how much of a Twilio answer is read.
	maxTwilioBody = 1 << 20
)

// twilio is the Carrier of one Twilio account. The auth token is only ever
// sent as the Basic auth password and used as the HMAC key of webhook
// signatures; it never appears in an error, a log line or a String method.
type twilio struct {
	accountSID       string
	authToken        string
	machineDetection bool
	base             string // without trailing slash
	client           *http.Client
	now              func() time.Time
}

// newTwilio binds a Twilio configuration's credentials (account_sid,
// auth_token, machine_detection). Missing credentials are not checked here:
// Twilio refuses the requests (AuthFailed) and no webhook verifies.
func newTwilio(creds map[string]any, opts Options) Carrier {
	return &twilio{
		accountSID:       credString(creds, "account_sid"),
		authToken:        credString(creds, "auth_token"),
		machineDetection: credBool(creds, "machine_detection"),
		base:             strings.TrimRight(opts.baseURL(Twilio, twilioBaseURL), "/"),
		client:           opts.client(),
		now:              opts.now,
	}
}

// String, GoString and LogValue describe the carrier without its auth token,
// so printing or logging it (even with %+v or %#v) cannot leak it.
func (t *twilio) String() string { return "twilio carrier (account " + t.accountSID + ")" }

// GoString: see String.
func (t *twilio) GoString() string { return t.String() }

// LogValue: see String.
func (t *twilio) LogValue() slog.Value { return slog.StringValue(t.String()) }

// callsURL is the Calls list resource; with a sid, that call's resource.
func (t *twilio) callsURL(sid string) string {
	u := t.base + "/2010-04-01/Accounts/" + url.PathEscape(t.accountSID) + "/Calls"
	if sid != "" {
		u += "/" + url.PathEscape(sid)
	}
	return u + ".json"
}

// placeForm is the create-call form of call. MachineDetection=Enable is asked
// for when the configuration's machine_detection or the call's
// MachineDetection is set. Timeout is the ring timeout rounded up to whole
// seconds and clamped to Twilio's 1..600; it is left out (Twilio's default,
// 60 s) when RingTimeout is 0. TimeLimit is sent only when set.
func (t *twilio) placeForm(call Call) url.Values {
	f := url.Values{}
	f.Set("To", call.To)
	f.Set("From", call.From)
	f.Set("Url", call.AnswerURL)
	f.Set("Method", http.MethodPost)
	if call.StatusURL != "" {
		f.Set("StatusCallback", call.StatusURL)
		f.Set("StatusCallbackMethod", http.MethodPost)
		for _, e := range twilioStatusEvents {
			f.Add("StatusCallbackEvent", e)
		}
	}
	if call.RingTimeout > 0 {
		f.Set("Timeout", strconv.Itoa(min(max(ceilSeconds(call.RingTimeout), 1), twilioMaxTimeout)))
	}
	if call.TimeLimit > 0 {
		f.Set("TimeLimit", strconv.Itoa(ceilSeconds(call.TimeLimit)))
	}
	if t.machineDetection || call.MachineDetection {
		f.Set("MachineDetection", "Enable")
	}
	return f
}

func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// Place creates the call (POST .../Calls.json). A 2xx answer with a call sid
// is Placed; HTTP 429 or Twilio error 20429 is RateLimited (with the
// Retry-After hint when Twilio gives one), 401/403 AuthFailed, any other 4xx
// Rejected with Twilio's code and message. A 5xx answer, an unreadable
// answer or a transport error is a plain error: the call may or may not have
// been created.
func (t *twilio) Place(ctx context.Context, call Call) (Placed, error) {
	var c twilioCall
	if err := t.do(ctx, http.MethodPost, t.callsURL(""), t.placeForm(call), &c); err != nil {
		return Placed{}, fmt.Errorf("twilio create call: %w", err)
	}
	if c.Sid == "" {
		return Placed{}, errors.New("twilio create call: answer has no call sid")
	}
	return Placed{ProviderCallID: c.Sid}, nil
}

// HangUp ends the call with Status=completed, which Twilio applies whether
// the call is queued, ringing or in progress (Status=canceled would leave an
// answered call up). A call that has already ended is not an error: Twilio
// answers such an update either with the call (2xx) or with error 21220
// (invalid call state), and both return nil. Errors map as for Place.
func (t *twilio) HangUp(ctx context.Context, providerCallID string) error {
	if providerCallID == "" {
		return errors.New("twilio hang up: empty call sid")
	}
	form := url.Values{"Status": {"completed"}}
	err := t.do(ctx, http.MethodPost, t.callsURL(providerCallID), form, nil)
	var e *Error
	if errors.As(err, &e) && e.Code == "21220" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("twilio hang up %s: %w", providerCallID, err)
	}
	return nil
}

// Query fetches the call (GET .../Calls/{sid}.json) and maps its status,
// answered_by and duration like a status webhook (Sequence is 0). An
// unknown sid is a Rejected *Error (HTTP 404, code 20404).
func (t *twilio) Query(ctx context.Context, providerCallID string) (Status, error) {
	if providerCallID == "" {
		return Status{}, errors.New("twilio query: empty call sid")
	}
	var c twilioCall
	if err := t.do(ctx, http.MethodGet, t.callsURL(providerCallID), nil, &c); err != nil {
		return Status{}, fmt.Errorf("twilio query %s: %w", providerCallID, err)
	}
	if c.Status == "" {
		return Status{}, fmt.Errorf("twilio query %s: answer has no status", providerCallID)
	}
	sid := c.Sid
	if sid == "" {
		sid = providerCallID
	}
	s := twilioStatus(c.Status, string(c.AnsweredBy))
	s.ProviderCallID = sid
	s.DurationSeconds = int(c.Duration)
	return s, nil
}

// twilioCall is the part of Twilio's Call resource we read.
type twilioCall struct {
	Sid        string     `json:"sid"`
	Status     string     `json:"status"`
	AnsweredBy nullString `json:"answered_by"`
	Duration   looseInt   `json:"duration"`
}

// twilioError is Twilio's JSON error body.
type twilioError struct {
	Code     looseInt `json:"code"`
	Message  string   `json:"message"`
	MoreInfo string   `json:"more_info"`
	Status   int      `json:"status"`
}

// do sends one request with Basic auth (form-encoded body when form is not
// nil) and decodes a 2xx JSON answer into out (when not nil). Non-2xx
// answers become errors as Place documents.
func (t *twilio) do(ctx context.Context, method, u string, form url.Values, out any) error {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.SetBasicAuth(t.accountSID, t.authToken)
	req.Header.Set("Accept", "application/json")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return err // *url.Error: method, URL (no credentials) and cause
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxTwilioBody))
	// Drain what is left so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxTwilioBody))
	if err != nil {
		return fmt.Errorf("read answer (http %d): %w", resp.StatusCode, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode answer (http %d): %w", resp.StatusCode, err)
		}
		return nil
	}
	return t.answerError(resp, data)
}

// answerError maps a non-2xx Twilio answer (see Place): Twilio error 20429
// is its rate limit even when the status is not 429.
func (t *twilio) answerError(resp *http.Response, data []byte) error {
	var te twilioError
	_ = json.Unmarshal(data, &te) // a non-JSON body leaves te empty
	code := ""
	if te.Code != 0 {
		code = strconv.Itoa(int(te.Code))
	}
	return answerError(resp, code, te.Message, code == "20429", t.now())
}

// retryAfter parses a Retry-After header: delay seconds or an HTTP date
// (relative to now). Anything else, or a time in the past, is 0.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// nullString decodes a JSON string or null ("").
type nullString string

func (s *nullString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = nullString(v)
	return nil
}

// looseInt decodes a JSON number, a numeric string (Twilio's "duration":
// "15") or null (0). A non-numeric string is 0.
type looseInt int

func (n *looseInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		*n = 0
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		*n = 0
		return nil
	}
	*n = looseInt(v)
	return nil
}
