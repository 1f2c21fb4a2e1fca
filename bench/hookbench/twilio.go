package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// twilioScheme signs form callbacks with X-Twilio-Signature, as Twilio does
// (twiliosim.Signature).
func twilioScheme() scheme {
	sim := twiliosim.Start(twiliosim.Config{})
	return scheme{
		name:   "twilio",
		creds:  func() map[string]any { return sim.Credentials(false) },
		callID: func(i int) string { return fmt.Sprintf("CA%032x", i) },
		events: func(statusURL, callID string, i int) []signed {
			event := func(status string, seq int) signed {
				form := url.Values{"AccountSid": {sim.AccountSID()}, "CallSid": {callID}, "CallStatus": {status},
					"SequenceNumber": {strconv.Itoa(seq)}, "To": {fmt.Sprintf("+1415%07d", i)}, "From": {"+14155550100"}}
				if status == "completed" {
					form.Set("CallDuration", "12")
				}
				h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"},
					"X-Twilio-Signature": {twiliosim.Signature(sim.AuthToken(), statusURL, form)}}
				return signed{url: statusURL, header: h, body: []byte(form.Encode())}
			}
			return []signed{event("ringing", 1), event("completed", 3)}
		},
		close: sim.Close,
	}
}
