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
// message; a 5xx is a plain error (the request may or may not have taken
// effect).
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
		if code != "" {
			return fmt.Errorf("http %d (code %s): %s", resp.StatusCode, code, msg)
		}
		return fmt.Errorf("http %d: %s", resp.StatusCode, msg)
	}
	return e
}
