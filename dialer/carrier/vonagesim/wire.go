package vonagesim

// The wire side of webhooks and calls: the GET payload Vonage hashes, one
// webhook request, and the call object of GET /v1/calls/{uuid}.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// queryPayload returns the query string of a GET webhook's fields (names
// sorted) and the payload Vonage hashes for it: the JSON object of those
// parameters in the same order, without whitespace or HTML escaping.
func queryPayload(fields map[string]any) (string, []byte) {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	q := make([]string, 0, len(names))
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range names {
		v := fmt.Sprint(fields[k])
		q = append(q, url.QueryEscape(k)+"="+url.QueryEscape(v))
		if i > 0 {
			b.WriteByte(',')
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(k)
		b.Truncate(b.Len() - 1)
		b.WriteByte(':')
		_ = enc.Encode(v)
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return strings.Join(q, "&"), b.Bytes()
}

// send makes one webhook request as the simulator does and returns the
// answer's status, content type and (when keep) body.
func (s *Server) send(ctx context.Context, cb Callback, keep bool) (status int, ctype, body string, err error) {
	req, err := http.NewRequestWithContext(ctx, cb.Method, cb.URL, bytes.NewReader(cb.Body))
	if err != nil {
		return 0, "", "", err
	}
	if cb.Authorization != "" {
		req.Header.Set("Authorization", cb.Authorization)
	}
	if cb.Method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "vonagesim/1")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	if keep {
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxNCCO))
		body, err = string(b), rerr
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Content-Type"), body, err
}

// callJSON is the call object of GET /v1/calls/{uuid}.
type callJSON struct {
	Links            map[string]map[string]string `json:"_links"`
	UUID             string                       `json:"uuid"`
	ConversationUUID string                       `json:"conversation_uuid"`
	To               Endpoint                     `json:"to"`
	From             Endpoint                     `json:"from"`
	Status           string                       `json:"status"`
	Direction        string                       `json:"direction"`
	Rate             string                       `json:"rate,omitempty"`
	Price            string                       `json:"price,omitempty"`
	Duration         string                       `json:"duration,omitempty"`
	StartTime        string                       `json:"start_time,omitempty"`
	EndTime          string                       `json:"end_time,omitempty"`
	Network          string                       `json:"network,omitempty"`
}

// resource is the call's call object.
func (c *call) resource() callJSON {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := callJSON{Links: map[string]map[string]string{"self": {"href": "/calls/" + c.info.UUID}},
		UUID: c.info.UUID, ConversationUUID: c.info.ConversationUUID,
		To: Endpoint{Type: "phone", Number: c.info.To}, From: Endpoint{Type: "phone", Number: c.info.From},
		Status: c.status, Direction: "outbound"}
	if c.ended {
		sum := c.summary()
		r.Rate, r.Price, r.Duration, r.EndTime, r.Network = "0.00450000", sum["price"].(string), fmt.Sprint(c.duration),
			sum["end_time"].(string), "US-FIXED"
		if !c.answeredAt.IsZero() {
			r.StartTime = sum["start_time"].(string)
		}
	}
	return r
}
