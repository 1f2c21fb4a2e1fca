package dialer

import (
	"sync"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// liveAttempts holds the attempts this process dispatched that are not final
// yet, so status and answer webhooks (five per answered call) need no read
// of the attempt: an entry is added before the provider request, gets the
// provider's call id and caller id once placed, follows the sequence of the
// progress applied, and goes with the final status or a requeue. After a
// restart the attempts in flight are read from the database instead.
type liveAttempts struct {
	mu sync.Mutex
	m  map[int64]*store.Attempt
}

func (l *liveAttempts) add(a *store.Attempt) {
	c := *a
	l.mu.Lock()
	if l.m == nil {
		l.m = map[int64]*store.Attempt{}
	}
	l.m[a.ID] = &c
	l.mu.Unlock()
}

// placed records the provider's call id and the caller id, unless the
// attempt ended meanwhile.
func (l *liveAttempts) placed(id int64, providerCallID, callerID string) {
	l.mu.Lock()
	if a := l.m[id]; a != nil {
		c := *a
		c.State, c.ProviderCallID, c.CallerID = store.AttemptInFlight, &providerCallID, &callerID
		l.m[id] = &c
	}
	l.mu.Unlock()
}

// progressed notes that a status of sequence seq was applied, and the
// provider call id that replaced the request id, if any (Status.RequestID).
func (l *liveAttempts) progressed(id int64, seq int, st carrier.Status) {
	l.mu.Lock()
	if a := l.m[id]; a != nil {
		c := *a
		if int64(seq) > c.Sequence {
			c.Sequence = int64(seq)
		}
		if st.RequestID != "" && st.ProviderCallID != "" && c.ProviderCallID != nil && *c.ProviderCallID == st.RequestID {
			c.ProviderCallID = &st.ProviderCallID
		}
		l.m[id] = &c
	}
	l.mu.Unlock()
}

// get returns a copy's pointer (entries are replaced, never changed).
func (l *liveAttempts) get(id int64) *store.Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[id]
}

func (l *liveAttempts) remove(id int64) {
	l.mu.Lock()
	delete(l.m, id)
	l.mu.Unlock()
}
