package telnyxsim

// What a test controls: the scripts calls play, the requests a fault
// function sees and the faults it answers.

import (
	"net/http"
	"time"
)

// Outcome is how a simulated call ends.
type Outcome string

// Outcomes a Script can play. Human, Machine and Fax are answered (Machine
// and Fax differ only in the machine-detection result); the others end the
// call with call.hangup after the ring delay without answering it: Busy
// (user_busy, SIP 486), NoAnswer (timeout, SIP 487), Rejected
// (call_rejected, SIP 603), NotFound (not_found, SIP 404), Failed
// (unspecified, SIP 503) and Canceled (originator_cancel, SIP 487).
const (
	Human    Outcome = "human"
	Machine  Outcome = "machine"
	Fax      Outcome = "fax"
	Busy     Outcome = "busy"
	NoAnswer Outcome = "no_answer"
	Rejected Outcome = "rejected"
	NotFound Outcome = "not_found"
	Failed   Outcome = "failed"
	Canceled Outcome = "canceled"
)

// Never, as a Script's RingDelay or TalkDuration, means the step does not
// come by itself: the call rings (or talks) until it is hung up by command.
const Never time.Duration = -1

// Script is what one call does after it was dialled. The zero Script is a
// person answering at once who hangs up at once.
type Script struct {
	// Outcome is how the call ends; "" is Human.
	Outcome Outcome
	// RingDelay is the time from the dial to call.answered (Human,
	// Machine, Fax) or to call.hangup (the other outcomes).
	RingDelay time.Duration
	// TalkDuration is the time from the answer until the callee hangs up
	// (normal_clearing, hangup_source callee) unless the call was hung up
	// by command before.
	TalkDuration time.Duration
	// SpeakDuration is the time from call.speak.started to
	// call.speak.ended; call.speak.started follows the speak command at
	// once (after EventDelay).
	SpeakDuration time.Duration
	// AMDResult overrides the machine-detection result ("not_sure",
	// "silence", ...); it is reported only when the dial asked for
	// answering_machine_detection.
	AMDResult string
	// HangupCause and SIPHangupCause override the final call.hangup's
	// hangup_cause and sip_hangup_cause (e.g. normal_clearing with 480 on
	// a call never answered).
	HangupCause    string
	SIPHangupCause string
	// EventDelay delays every event: each is sent no earlier than
	// EventDelay after it happened.
	EventDelay time.Duration
	// Duplicate sends every event twice in a row (each signed afresh, as a
	// retrying Telnyx would).
	Duplicate bool
	// OutOfOrder holds the events before call.hangup back and sends them
	// after it, latest first.
	OutOfOrder bool
	// LoseFinal never sends call.hangup (the call still ends and GET shows
	// it dead): the service must reconcile.
	LoseFinal bool
}

// DefaultScript answers every call at once (a person) who hangs up after
// one second unless the service hangs up first; a greeting takes 20 ms.
func DefaultScript(CallInfo) Script {
	return Script{Outcome: Human, TalkDuration: time.Second, SpeakDuration: 20 * time.Millisecond}
}

// CallInfo describes a dialled call to the script function.
type CallInfo struct {
	// N numbers dialled calls from 1 in dial order.
	N int
	// CallControlID, CallLegID and CallSessionID are the call's ids.
	CallControlID, CallLegID, CallSessionID string
	To, From                                string
	// Attempt counts the dials to this To number so far, this one included.
	Attempt int
	// Dial is the dial request as received.
	Dial DialRequest
	// Created is when the dial was accepted.
	Created time.Time
}

// DialRequest is the dial body, the fields the simulator reads; Raw is the
// whole body.
type DialRequest struct {
	ConnectionID              string `json:"connection_id"`
	To                        string `json:"to"`
	From                      string `json:"from"`
	TimeoutSecs               int    `json:"timeout_secs"`
	TimeLimitSecs             int    `json:"time_limit_secs"`
	WebhookURL                string `json:"webhook_url"`
	WebhookURLMethod          string `json:"webhook_url_method"`
	ClientState               string `json:"client_state"`
	CommandID                 string `json:"command_id"`
	AnsweringMachineDetection string `json:"answering_machine_detection"`
	StreamURL                 string `json:"stream_url"`
	StreamTrack               string `json:"stream_track"`
	StreamBidirectionalMode   string `json:"stream_bidirectional_mode"`
	StreamBidirectionalCodec  string `json:"stream_bidirectional_codec"`
	Raw                       []byte `json:"-"`
}

// Request is an API request, as a fault function sees it.
type Request struct {
	// Op is one of the Op constants.
	Op string
	// CallControlID is the call of a get or a command ("" otherwise).
	CallControlID string
	// Body is the request's JSON body (nil for a get).
	Body []byte
}

// Operations of a Request.
const (
	OpDial              = "dial"
	OpGet               = "get"
	OpHangUp            = "hangup"
	OpSpeak             = "speak"
	OpStreamingStart    = "streaming_start"
	OpCreateApplication = "create_application"
	OpBalance           = "balance" // GET /v2/balance
)

// Fault is an error answer the simulator gives instead of serving a request,
// with Telnyx's error body {"errors":[{code,title,detail}]}.
type Fault struct {
	Status int
	Code   string
	Title  string
	Detail string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Dial, for a dial request, dials the call (its script plays) although
	// the error is answered: a request that "may or may not have gone out"
	// that in fact did.
	Dial bool
}

// TooManyDials is the fault Telnyx answers above the dials-per-second
// limit: HTTP 429, error 90103.
func TooManyDials() *Fault {
	return &Fault{Status: http.StatusTooManyRequests, Code: "90103", Title: "Too many requests",
		Detail: "The dials per second limit has been exceeded."}
}

// Unauthorized is the fault Telnyx answers a wrong API key: HTTP 401.
func Unauthorized() *Fault {
	return &Fault{Status: http.StatusUnauthorized, Code: "10009", Title: "Authentication failed",
		Detail: "The API key provided is invalid."}
}
