package twiliosim_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// A test starts the simulator, points the Twilio carrier at it, scripts the
// calls and waits for them to end.
func Example() {
	sim := twiliosim.Start(twiliosim.Config{
		Script: func(c twiliosim.CallInfo) twiliosim.Script {
			if c.To == "+14155550101" {
				return twiliosim.Script{Outcome: twiliosim.Busy}
			}
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: 200 * time.Millisecond}
		},
	})
	defer sim.Close()

	// The service's webhook endpoints (here: accept everything).
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml")
		io.WriteString(w, "<Response><Hangup/></Response>")
	}))
	defer hooks.Close()

	car, _ := carrier.New(carrier.Twilio, sim.Credentials(false),
		carrier.Options{BaseURLs: map[string]string{carrier.Twilio: sim.URL()}})
	for _, to := range []string{"+14155550100", "+14155550101"} {
		car.Place(context.Background(), carrier.Call{To: to, From: "+14155550199",
			AnswerURL: hooks.URL + "/answer", StatusURL: hooks.URL + "/status"})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sim.WaitFinal(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range sim.Calls() {
		fmt.Printf("%s %s %q\n", c.To, c.Status, c.TwiML)
	}
	st := sim.Stats()
	fmt.Println("created", st.Created, "peak in flight", st.PeakInFlight, "in flight", st.InFlight)
	// Output:
	// +14155550100 completed "<Response><Hangup/></Response>"
	// +14155550101 busy ""
	// created 2 peak in flight 2 in flight 0
}
