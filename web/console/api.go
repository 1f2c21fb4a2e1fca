package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// The console calls the public API in process: a request built here goes
// through the API's handler exactly as a client's would (authentication by
// the browser's session cookie, validation, errors in the contract's shape,
// the request log), and its answer is recorded and decoded.

// maxAPIAnswer bounds a recorded API answer; a page never needs more (lists
// are paged).
const maxAPIAnswer = 16 << 20

// apiClient calls the API for one browser request.
type apiClient struct {
	c *Console
	r *http.Request // the browser's request: context, host, remote address
	s *session
}

// api returns a client that calls the API as the browser of r, signed in
// with s.
func (c *Console) api(r *http.Request, s *session) apiClient { return apiClient{c: c, r: r, s: s} }

// apiError is an API answer of 400 or more, with the detail of its body (a
// 422's problems joined into one line).
type apiError struct {
	status int
	detail string
	// problems is a 422's detail list as the API sent it.
	problems []wire.Problem
}

func (e *apiError) Error() string { return fmt.Sprintf("api answered %d: %s", e.status, e.detail) }

// get calls GET path (with its query) and decodes the JSON answer into out.
func (a apiClient) get(path string, out any) error {
	return a.do(http.MethodGet, path, nil, out)
}

// do calls method path with body (JSON-encoded unless nil) and decodes a
// 2xx JSON answer into out (unless out is nil or the answer is empty). A
// request that changes something carries the session's CSRF token: the
// console has checked the browser's own before calling. An answer of 400
// or more is an *apiError.
func (a apiClient) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := a.request(method, path, rd, "application/json")
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}}
	a.c.apiH.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK // the handler wrote nothing
	}
	if rec.overflow {
		return fmt.Errorf("api %s %s: answer larger than %d bytes", method, path, maxAPIAnswer)
	}
	if rec.status >= 400 {
		return decodeAPIError(rec.status, rec.body.Bytes())
	}
	if out == nil || rec.body.Len() == 0 {
		return nil
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return fmt.Errorf("decode api %s %s: %w", method, path, err)
	}
	return nil
}

// request builds the in-process API request method path (with its query)
// accepting accept, as the browser of a.r, signed in with a.s: the
// session's cookie, and its CSRF token when the request changes something
// (the console has checked the browser's own before calling).
func (a apiClient) request(method, path string, body io.Reader, accept string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(a.r.Context(), method, path, body)
	if err != nil {
		return nil, fmt.Errorf("api request %s %s: %w", method, path, err)
	}
	req.Host, req.RemoteAddr, req.RequestURI = a.r.Host, a.r.RemoteAddr, path
	req.Header.Set("Accept", accept)
	if a.s != nil {
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: a.s.token})
		if method != http.MethodGet && method != http.MethodHead {
			req.Header.Set(CSRFHeader, a.s.CSRFToken)
		}
	}
	return req, nil
}

// decodeAPIError reads the contract's error body ({"detail": string} or a
// 422's problem list).
func decodeAPIError(status int, body []byte) error {
	e := &apiError{status: status, detail: http.StatusText(status)}
	var shape struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &shape) != nil {
		return e
	}
	var text string
	if json.Unmarshal(shape.Detail, &text) == nil && text != "" {
		e.detail = text
		return e
	}
	if json.Unmarshal(shape.Detail, &e.problems) == nil && len(e.problems) > 0 {
		msgs := make([]string, len(e.problems))
		for i, p := range e.problems {
			loc := make([]string, len(p.Loc))
			for j, l := range p.Loc {
				loc[j] = fmt.Sprint(l)
			}
			msgs[i] = strings.Join(loc, ".") + ": " + p.Msg
		}
		e.detail = strings.Join(msgs, "; ")
	}
	return e
}

// recorder is the http.ResponseWriter of an in-process API call.
type recorder struct {
	header   http.Header
	status   int
	body     bytes.Buffer
	overflow bool
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body.Len()+len(p) > maxAPIAnswer {
		w.overflow = true
		return 0, fmt.Errorf("api answer larger than %d bytes", maxAPIAnswer)
	}
	return w.body.Write(p)
}
