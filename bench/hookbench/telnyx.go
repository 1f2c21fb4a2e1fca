package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
)

// telnyxScheme signs JSON events with Ed25519 over "timestamp|body", as
// Telnyx does (telnyxsim's key; the configuration holds its public key).
func telnyxScheme() scheme {
	sim := telnyxsim.Start(telnyxsim.Config{})
	return scheme{
		name:   "telnyx",
		creds:  func() map[string]any { return sim.Credentials("1684641123236054244", true, false) },
		callID: func(i int) string { return fmt.Sprintf("v3:bench-%012d", i) },
		events: func(statusURL, callID string, i int) []signed {
			event := func(n int, eventType, payload string) signed {
				at := time.Now().UTC().Format(time.RFC3339Nano)
				body := fmt.Sprintf(`{"data":{"record_type":"event","event_type":%q,"id":"%08d-0000-4000-8000-%012d","occurred_at":%q,`+
					`"payload":{"call_control_id":%q,"call_leg_id":"leg-%d","call_session_id":"session-%d","connection_id":"1684641123236054244",`+
					`"from":"+14155550100","to":"+1415%07d"%s}},"meta":{"attempt":1,"delivered_to":%q}}`,
					eventType, n, i, at, callID, i, i, i, payload, statusURL)
				ev := sim.SignedEvent(statusURL, []byte(body))
				h := http.Header{"Content-Type": {"application/json"}, "Telnyx-Timestamp": {ev.Timestamp},
					"Telnyx-Signature-Ed25519": {ev.Signature}}
				return signed{url: statusURL, header: h, body: ev.Body}
			}
			start := time.Now().UTC()
			return []signed{
				event(1, "call.initiated", `,"state":"parked","direction":"outgoing"`),
				event(2, "call.hangup", fmt.Sprintf(`,"state":"hangup","hangup_cause":"normal_clearing","hangup_source":"callee",`+
					`"start_time":%q,"end_time":%q`, start.Format(time.RFC3339), start.Add(12*time.Second).Format(time.RFC3339))),
			}
		},
		close: sim.Close,
	}
}
