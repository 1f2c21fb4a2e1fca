package main

import (
	"fmt"
	"net/http"

	"github.com/outdial/outdial/dialer/carrier/vonagesim"
)

// vonageScheme signs JSON events with an HS256 JWT carrying the body's
// payload_hash, as Vonage's signed callbacks do (vonagesim.Authorization).
func vonageScheme() scheme {
	sim := vonagesim.Start(vonagesim.Config{})
	return scheme{
		name:   "vonage",
		creds:  func() map[string]any { return sim.Credentials(false) },
		callID: func(i int) string { return fmt.Sprintf("63f61863-4a51-4f6b-86e1-%012x", i) },
		events: func(statusURL, callID string, i int) []signed {
			event := func(body string) signed {
				h := http.Header{"Content-Type": {"application/json"}, "Authorization": {sim.Authorization([]byte(body))}}
				return signed{url: statusURL, header: h, body: []byte(body)}
			}
			return []signed{
				event(fmt.Sprintf(`{"uuid":%q,"conversation_uuid":"CON-%d","status":"ringing","direction":"outbound"}`, callID, i)),
				event(fmt.Sprintf(`{"uuid":%q,"conversation_uuid":"CON-%d","status":"completed","direction":"outbound","duration":"12"}`, callID, i)),
			}
		},
		close: sim.Close,
	}
}
