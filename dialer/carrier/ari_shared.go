package carrier

// One events websocket among several processes: Asterisk hands a Stasis
// application to one websocket connection only, so when several processes
// share the database only the one holding the configuration's stream
// lease runs Events (see SharedEventSource); the others place calls
// through REST alone. Their originates name our application, which the
// holder's websocket registered, so the calls enter Stasis there, and the
// holder follows them from their events (eventCall follows any channel id
// of ours) and, after every connect, from EventSink.InFlight.

// EventsElsewhere says whether another process holds the configuration's
// event stream (implements SharedEventSource). It is called only while
// Events does not run. Turned on, it wakes the calls waiting for the
// websocket (they are placed at once, see awaitEvents) and stops
// following the calls it followed, except those being placed (their
// originate is under way): the stream's holder follows them, and this
// carrier, were it to run Events again, adopts whatever is still in
// flight on connecting.
func (a *ari) EventsElsewhere(elsewhere bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.elsewhere == elsewhere {
		return
	}
	a.elsewhere = elsewhere
	if !elsewhere {
		return
	}
	for id, c := range a.calls {
		if !c.placing {
			delete(a.calls, id)
		}
	}
	close(a.evChanged)
	a.evChanged = make(chan struct{})
}
