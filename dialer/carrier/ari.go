package carrier

// Asterisk over ARI (the Asterisk REST Interface), with net/http and one
// events websocket (github.com/coder/websocket). This file holds the
// carrier, its REST requests (originate, get, hang up) and the channel ids;
// ari_events.go keeps the events websocket; ari_calls.go follows each
// call's channels and maps them to outcomes; ari_handle.go applies the
// events and connects an answered call to the voice agent.
//
// ARI has no webhooks and no answer markup: every status comes over the
// events websocket (carrier.EventSource), the answer is a few REST requests
// made when the call enters our Stasis application, and ARI has no
// text-to-speech, so a call without an agent URL is hung up right after it
// was answered and recorded answered (the greeting is not spoken).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ariDefaultDialTemplate is dial_template when the configuration has none.
const ariDefaultDialTemplate = "PJSIP/{number}"

// ariChannelPrefix starts every channel id Outdial originates; the
// application name follows, so the ids of two Outdial installs sharing an
// Asterisk differ as long as their ARI applications do (which they must:
// Asterisk sends an application's events to its websocket only).
const ariChannelPrefix = "outdial-"

// Suffixes of the ids derived from a call's channel id: the far half of a
// Local/ channel (otherChannelId), the externalMedia channel to the agent
// and the mixing bridge joining them.
const (
	ariFarSuffix    = "-far"
	ariMediaSuffix  = "-media"
	ariBridgeSuffix = "-bridge"
)

// Channel variables set on the calls and media channels we create.
const (
	ariVarAttempt     = "OUTDIAL_ATTEMPT_ID"
	ariVarContext     = "OUTDIAL_CONTEXT"
	ariVarAgent       = "OUTDIAL_AGENT_URL"
	ariVarOptOutToken = "OUTDIAL_OPT_OUT_TOKEN"
	ariVarOptOutURL   = "OUTDIAL_OPT_OUT_URL"
	// API.md 19's names for the webhook token and the agent events URL.
	ariVarToken          = "OUTDIAL_TOKEN"
	ariVarAgentEventsURL = "OUTDIAL_AGENT_EVENTS_URL"
)

// ari is the Carrier of one ARI configuration. The password is only sent as
// the Basic auth password; it never appears in an error, a log line or a
// String method. It also follows the calls it placed (see ariCall) for its
// event stream, so one ari value serves one configuration's calls.
type ari struct {
	base         string // ari_endpoint without trailing slash
	shown        string // base without its user info, for String
	hostPort     string // ari_endpoint's host:port (never its user info), for messages
	app          string // app_name: ARI user and Stasis application
	password     string // app_password
	wsClient     string // ws_client_name
	dialTemplate string
	prefix       string // channel id prefix: "outdial-<app>-"
	client       *http.Client
	wsHTTP       *http.Client // the events websocket's handshake client
	now          func() time.Time
	timing       ariTiming
	log          *slog.Logger

	mu     sync.Mutex
	calls  map[string]*ariCall      // calls followed, by their channel id
	done   map[string]time.Time     // calls finished lately, by channel id
	pruned time.Time                // when done was last pruned
	timers map[*time.Timer]struct{} // pending timers of afterLocked
	sink   EventSink                // set while Events runs
	// The events websocket's state: connected, last attempt refused for
	// the credentials, results so far; evChanged is closed (and replaced)
	// on every result. kick asks a reconnect waiting out its backoff to
	// try now (granted at most once per timing.kickEvery).
	evConnected, evRefused bool
	// evCause says why the websocket is not connected (ariEventsCause),
	// "" while connected or before the first attempt's result.
	evCause   string
	evResults int
	evChanged chan struct{}
	// evDials numbers the connection attempts started; evRefusedDial is
	// the number of the attempt whose refusal is evRefused.
	evDials, evRefusedDial int
	kick                   chan struct{}
	// elsewhere: another process holds the configuration's event stream
	// (SharedEventSource; ari_shared.go): calls are neither awaited nor
	// followed here.
	elsewhere bool
	sinkC     context.Context // Events' context, for late work
	work      sync.WaitGroup  // answers, clean-ups and timers under way
}

// newARI binds an ARI configuration's credentials (ari_endpoint, app_name,
// app_password, ws_client_name, dial_template). ari_endpoint is the API base
// (API.md 8: ARI uses each configuration's own URL); Options.BaseURLs["ari"]
// is used only when the credentials have none.
func newARI(creds map[string]any, opts Options) (Carrier, error) {
	base := credString(creds, "ari_endpoint")
	if base == "" {
		base = opts.BaseURLs[ARI]
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("ari: ari_endpoint must be an absolute http or https URL")
	}
	app := credString(creds, "app_name")
	if app == "" {
		return nil, errors.New("ari: app_name is required")
	}
	tmpl := credString(creds, "dial_template")
	if tmpl == "" {
		tmpl = ariDefaultDialTemplate
	}
	a := &ari{
		base:         strings.TrimRight(base, "/"),
		shown:        strings.TrimRight(withoutUser(u), "/"),
		hostPort:     hostPort(u),
		app:          app,
		password:     credString(creds, "app_password"),
		wsClient:     credString(creds, "ws_client_name"),
		dialTemplate: tmpl,
		prefix:       ariChannelPrefix + ariIDPart(app) + "-",
		client:       opts.client(),
		wsHTTP:       opts.HTTPClient,
		now:          opts.now,
		timing:       ariDefaultTiming(),
		log:          opts.logger(),
		calls:        map[string]*ariCall{},
		done:         map[string]time.Time{},
		timers:       map[*time.Timer]struct{}{},
		evChanged:    make(chan struct{}),
		kick:         make(chan struct{}, 1),
	}
	if a.wsHTTP == nil {
		a.wsHTTP = ariWebsocketClient
	}
	return a, nil
}

// ariWebsocketClient dials the events websockets when Options.HTTPClient is
// not set: HTTP/1.1 only (a websocket upgrade cannot ride HTTP/2).
var ariWebsocketClient = &http.Client{Transport: &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	TLSHandshakeTimeout: 10 * time.Second,
}}

// ariIDPart keeps the characters of s that are safe in a channel id (and a
// URL path segment) and replaces the others with '_'.
func ariIDPart(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// String, GoString and LogValue describe the carrier without its password
// (nor any user info ari_endpoint may hold), so printing or logging it
// (even with %+v or %#v) cannot leak it.
func (a *ari) String() string { return "ari carrier (app " + a.app + " at " + a.shown + ")" }

// GoString: see String.
func (a *ari) GoString() string { return a.String() }

// LogValue: see String.
func (a *ari) LogValue() slog.Value { return slog.StringValue(a.String()) }

// CallID is the channel id of attempt attemptID's call:
// "outdial-<app_name>-<attempt id>" (implements CallIDDeriver).
func (a *ari) CallID(attemptID int64) string {
	return a.prefix + strconv.FormatInt(attemptID, 10)
}

// ariRole says which of a call's channels an id names.
type ariRole int

// Roles of a channel id (see classify).
const (
	ariNone  ariRole = iota // not one of ours
	ariOwn                  // the channel we originated (Local/ ;1)
	ariFar                  // the far half of a Local/ channel (;2)
	ariMedia                // the externalMedia channel to the agent
)

// classify maps a channel id to its call's channel id, attempt id and role.
func (a *ari) classify(id string) (own string, attemptID int64, role ariRole) {
	rest, ok := strings.CutPrefix(id, a.prefix)
	if !ok {
		return "", 0, ariNone
	}
	role = ariOwn
	for suffix, r := range map[string]ariRole{ariFarSuffix: ariFar, ariMediaSuffix: ariMedia} {
		if s, ok := strings.CutSuffix(rest, suffix); ok {
			rest, role = s, r
			break
		}
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n <= 0 {
		return "", 0, ariNone
	}
	return a.prefix + rest, n, role
}

// endpoint is the dial string of number: dial_template with every
// "{number}" replaced by the E.164 number, "+" included (PJSIP and most
// trunks take it; a template or dialplan that wants digits only strips it,
// e.g. Local/{number}@strip-plus).
func (a *ari) endpoint(number string) string {
	return strings.ReplaceAll(a.dialTemplate, "{number}", number)
}

// originateQuery is the originate request's query string (API.md 7 mapped
// to ARI): endpoint from dial_template, app (the call enters our Stasis
// application once answered), appArgs and the channel ids (ours and, behind
// Local/, the far half's), callerId when there is one (an ARI configuration
// may have no phone number), and the ring timeout in whole seconds (at
// least 1; Asterisk's default of 30 s when RingTimeout is 0).
func (a *ari) originateQuery(call Call, id string) url.Values {
	q := url.Values{}
	q.Set("endpoint", a.endpoint(call.To))
	q.Set("app", a.app)
	q.Set("appArgs", "attempt_id="+strconv.FormatInt(call.AttemptID, 10))
	q.Set("otherChannelId", id+ariFarSuffix)
	if call.From != "" {
		q.Set("callerId", call.From)
	}
	if call.RingTimeout > 0 {
		q.Set("timeout", strconv.Itoa(max(ceilSeconds(call.RingTimeout), 1)))
	}
	return q
}

// originateVariables are the channel variables of a new call: the attempt
// id, and TIMEOUT(absolute) bounding the whole call (ring timeout plus
// TimeLimit) so Asterisk hangs up a call that outlives it.
func (a *ari) originateVariables(call Call) map[string]string {
	v := map[string]string{ariVarAttempt: strconv.FormatInt(call.AttemptID, 10)}
	if call.TimeLimit > 0 {
		v["TIMEOUT(absolute)"] = strconv.Itoa(ceilSeconds(call.TimeLimit + call.RingTimeout))
	}
	return v
}

// Place originates the call (POST /ari/channels/{channelId}) with the
// channel id derived from the attempt id and starts following it. It first
// waits (briefly) for the events websocket: a call that could not be
// followed is put off instead, as Unavailable (see awaitEvents). While
// another process holds the configuration's stream (SharedEventSource) it
// neither waits nor follows the call: that process's stream does. A 409
// (a live channel already has that id: an earlier request for the same
// attempt did reach Asterisk) is the call placed. 401/403 are AuthFailed,
// other 4xx (400: bad endpoint or parameters) Rejected; a 5xx, an unreadable
// answer or a transport error is a plain error (the call may or may not
// exist: look it up with Query(CallID(attempt))).
func (a *ari) Place(ctx context.Context, call Call) (Placed, error) {
	if !strings.Contains(a.dialTemplate, "{number}") {
		return Placed{}, &Error{Kind: Rejected, Message: "ari: dial_template has no {number}"}
	}
	if err := a.awaitEvents(ctx); err != nil {
		return Placed{}, err
	}
	id := a.CallID(call.AttemptID)
	u := a.url("channels/"+url.PathEscape(id), a.originateQuery(call, id))
	// A call placed while another process holds the stream is followed
	// there (see SharedEventSource): c stays nil.
	var c *ariCall
	a.mu.Lock()
	if !a.elsewhere {
		c = a.followLocked(id, call.AttemptID, strings.HasPrefix(strings.ToLower(a.endpoint(call.To)), "local/"))
		c.placing = true
	}
	a.mu.Unlock()
	var ch ariChannel
	status, err := a.do(ctx, http.MethodPost, u, map[string]any{"variables": a.originateVariables(call)}, &ch)
	if c != nil {
		a.mu.Lock()
		c.placing = false
		if a.elsewhere && a.calls[id] == c {
			delete(a.calls, id) // the stream went elsewhere meanwhile: followed there
		} else if err == nil || status == http.StatusConflict {
			c.blind = !a.evConnected
		}
		a.mu.Unlock()
	}
	if status == http.StatusConflict {
		return Placed{ProviderCallID: id}, nil
	}
	if err != nil {
		if KindOf(err) != "" && c != nil {
			a.forget(id) // refused: no channel was created
		}
		return Placed{}, fmt.Errorf("ari originate: %w", err)
	}
	if ch.ID != "" && ch.ID != id {
		return Placed{}, fmt.Errorf("ari originate: channel id %q, want %q", ch.ID, id)
	}
	return Placed{ProviderCallID: id}, nil
}

// HangUp hangs the channel up (DELETE /ari/channels/{id}), which also
// cancels a call still ringing; a channel already gone (404) is not an
// error. A call hung up by us that was never answered ends canceled.
func (a *ari) HangUp(ctx context.Context, providerCallID string) error {
	if providerCallID == "" {
		return errors.New("ari hang up: empty channel id")
	}
	a.mu.Lock()
	if c := a.calls[providerCallID]; c != nil {
		c.hungUp = true
	}
	a.mu.Unlock()
	status, err := a.do(ctx, http.MethodDelete, a.url("channels/"+url.PathEscape(providerCallID), nil), nil, nil)
	if status == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ari hang up %s: %w", providerCallID, err)
	}
	return nil
}

// Query looks the channel up (GET /ari/channels/{id}). A live channel is a
// non-final status (Answered when its state is Up; Raw "state=<state>"),
// and the carrier follows it from then on, unless another process holds
// the stream (after a restart, its events finish it; an answered one keeps
// the agent media an earlier process gave it, or gets its answer now). A channel Asterisk does not have (404) ended: final answered
// when this carrier saw it answered (or its dial status when one was seen),
// else unknown, Raw "channel_gone".
func (a *ari) Query(ctx context.Context, providerCallID string) (Status, error) {
	if providerCallID == "" {
		return Status{}, errors.New("ari query: empty channel id")
	}
	var ch ariChannel
	status, err := a.do(ctx, http.MethodGet, a.url("channels/"+url.PathEscape(providerCallID), nil), nil, &ch)
	if status == http.StatusNotFound {
		return a.gone(providerCallID), nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("ari query %s: %w", providerCallID, err)
	}
	st := Status{ProviderCallID: providerCallID, Raw: "state=" + ch.State, Answered: ch.State == "Up"}
	a.mu.Lock()
	elsewhere := a.elsewhere
	a.mu.Unlock()
	if own, attemptID, role := a.classify(providerCallID); role == ariOwn && !elsewhere {
		c := a.follow(own, attemptID, strings.HasPrefix(ch.Name, "Local/"))
		a.mu.Lock()
		c.placingElsewhere = false // it exists
		a.mu.Unlock()
		if st.Answered {
			a.takeOver(ctx, own)
		}
	}
	return st, nil
}

// AnswerMarkup: ARI has no answer markup (the answer is REST requests made
// when the call enters our application); it returns an empty text body.
func (a *ari) AnswerMarkup(Answer) (string, []byte) {
	return "text/plain; charset=utf-8", nil
}

// errARIWebhook is returned for any webhook: ARI sends none, so whatever
// arrives at an ARI callback URL is not from Asterisk.
var errARIWebhook = fmt.Errorf("ari sends no webhooks: %w", ErrForged)

// ParseStatus refuses every webhook (ErrForged): ARI statuses come over the
// events websocket only.
func (a *ari) ParseStatus(Webhook) (Status, error) { return Status{}, errARIWebhook }

// VerifyAnswer refuses every webhook (ErrForged); see ParseStatus.
func (a *ari) VerifyAnswer(Webhook) (string, error) { return "", errARIWebhook }

// url is the ARI resource path (below /ari/) with query q.
func (a *ari) url(path string, q url.Values) string {
	u := a.base + "/ari/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// ariChannel is the part of ARI's Channel model we read.
type ariChannel struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
}

// ariErrorBody is ARI's error answer ({"message": "..."}; the 401 of some
// versions says {"error": "..."}).
type ariErrorBody struct {
	Message string `json:"message"`
	Error   string `json:"error"`
}

// do sends one request with Basic auth app_name:app_password (body as JSON
// when not nil) and decodes a 2xx JSON answer into out (when not nil). It
// returns the HTTP status (0 when there was no answer) and, for a non-2xx
// answer, the error answerError maps it to.
func (a *ari) do(ctx context.Context, method, u string, body, out any) (int, error) {
	api := restAPI{client: a.client, now: a.now, auth: func(r *http.Request) error { r.SetBasicAuth(a.app, a.password); return nil },
		reason: func(data []byte) (string, string) {
			var eb ariErrorBody
			_ = json.Unmarshal(data, &eb) // a non-JSON body leaves eb empty
			if eb.Message != "" {
				return "", eb.Message
			}
			return "", eb.Error
		}}
	return api.do(ctx, method, u, body, out)
}
