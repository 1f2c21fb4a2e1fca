package carrier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxAnswerBody bounds how much of a provider's answer is read.
const maxAnswerBody = 1 << 20

// exchange sends req and returns the answer with its body read (up to
// maxAnswerBody); the rest is drained so the connection can be reused.
func exchange(client *http.Client, req *http.Request) (*http.Response, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err // *url.Error: method, URL (no credentials) and cause
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBody))
	if err != nil {
		return nil, nil, fmt.Errorf("read answer (http %d): %w", resp.StatusCode, err)
	}
	return resp, data, nil
}

// jsonRequest builds a request with body encoded as JSON (no body when
// body is nil) that accepts JSON.
func jsonRequest(ctx context.Context, method, u string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// answerError maps a provider's non-2xx answer the same way for every
// provider: HTTP 429 (or rateLimited, the provider's own rate-limit error
// code in a non-429 answer) is RateLimited with the Retry-After hint,
// 401/403 AuthFailed, another 4xx Rejected with the provider's code and
// message; a 5xx is a *ServerError, not an *Error (the request may or may
// not have taken effect).
func answerError(resp *http.Response, code, msg string, rateLimited bool, now time.Time) error {
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	e := &Error{HTTPStatus: resp.StatusCode, Code: code, Message: msg}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || rateLimited:
		e.Kind = RateLimited
		e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e.Kind = AuthFailed
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		e.Kind = Rejected
	default:
		return &ServerError{HTTPStatus: resp.StatusCode, Code: code, Message: msg}
	}
	return e
}

// restAPI is how one provider's JSON REST API is called: with which client
// and clock, how a request is authenticated, and how its error bodies read.
// Every JSON provider's requests (calls, queries, hang-ups, application
// creates) go through it, so they are answered and mapped alike.
type restAPI struct {
	client *http.Client
	now    func() time.Time
	// auth adds the credentials to a request; an error (a token that
	// cannot be minted) aborts it.
	auth func(*http.Request) error
	// reason reads an error answer's body: the provider's code and message.
	reason func(body []byte) (code, msg string)
	// rateLimited reports whether an error code means the provider's rate
	// limit in an answer that is not HTTP 429; nil when it has none.
	rateLimited func(code string) bool
}

// exchange sends one authenticated request, with body as JSON unless it is
// nil, and returns the answer with its body read.
func (a restAPI) exchange(ctx context.Context, method, u string, body any) (*http.Response, []byte, error) {
	req, err := jsonRequest(ctx, method, u, body)
	if err != nil {
		return nil, nil, err
	}
	if err := a.auth(req); err != nil {
		return nil, nil, err
	}
	return exchange(a.client, req)
}

// do sends one request and decodes a 2xx answer into out (when out is not
// nil and the answer has a body). It returns the HTTP status (0 when there
// was no answer); a non-2xx answer is the error answerError maps it to.
func (a restAPI) do(ctx context.Context, method, u string, body, out any) (int, error) {
	resp, data, err := a.exchange(ctx, method, u, body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil || len(bytes.TrimSpace(data)) == 0 {
			return resp.StatusCode, nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode answer (http %d): %w", resp.StatusCode, err)
		}
		return resp.StatusCode, nil
	}
	code, msg := a.reason(data)
	limited := a.rateLimited != nil && code != "" && a.rateLimited(code)
	return resp.StatusCode, answerError(resp, code, msg, limited, a.now())
}

// provision creates a provider application (POST u with body) and decodes
// the 2xx answer into out. A refusal maps through provisionFailed (authField
// is the credential a 401/403 is about, appField the application's field);
// a transport error is returned as is (Provision answers it 502).
func (a restAPI) provision(ctx context.Context, u string, body, out any, authField, appField string) error {
	resp, data, err := a.exchange(ctx, http.MethodPost, u, body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, msg := a.reason(data)
		return provisionFailed(resp.StatusCode, authField, appField, msg)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &ProvisionError{Status: http.StatusBadGateway, Message: "the provider's answer to the application create does not decode"}
	}
	return nil
}

// bearer authenticates requests with "Authorization: Bearer token".
func bearer(token string) func(*http.Request) error {
	return func(r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

// ServerError is a provider's answer that is neither 2xx nor 4xx (a 5xx):
// unlike an *Error it is not a refusal, since the request may or may not
// have taken effect. HTTPStatus lets metrics class the answer.
type ServerError struct {
	HTTPStatus int
	Code       string // the provider's error code, "" when none
	Message    string
}

func (e *ServerError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("http %d (code %s): %s", e.HTTPStatus, e.Code, e.Message)
	}
	return fmt.Sprintf("http %d: %s", e.HTTPStatus, e.Message)
}
