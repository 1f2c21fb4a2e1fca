// Package dialer is the in-process campaign engine. Each running campaign has
// one runner goroutine that claims due call attempts from the call-attempts
// table (the durable queue) and hands them to its carrier, never above the
// campaign's max_concurrency and paced by a token bucket; status webhooks and
// provider queries end attempts, which queues retries, trips the circuit
// breaker and completes campaigns. An attempt is written (claimed) before its
// provider request, so after a crash no attempt is placed twice: Start
// reconciles what was left in flight.
//
// # Locks
//
// Every mutex of the package, what it guards, and what may be held when it
// is taken. Two rules hold for all of them: no engine-wide lock is held
// across a store call, a provider request or a call of the Watcher; and no
// lock is held across a call of Engine.leave, Engine.apply or a requeue
// (they take Engine.mu and the campaign's settle lock, one after the
// other, and make store writes).
//
// Engine-wide (short, over maps and fields; nothing but the listed leaves
// is taken under them):
//
//   - Engine.mu: the runners, carriers, limiters, campaign states, campaign
//     snapshots, deadline timers, ctx and stopped, and campaignState.users.
//     Taken with no lock held; under it only runner.cmu is taken (reading a
//     runner's campaign), and carriers' event streams are started or
//     cancelled (no lock of theirs is held on return).
//   - liveAttempts.mu: the attempts this process dispatched. Leaf; may be
//     taken under an organization's suppression gate.
//   - guardRails.pmu: the cached compliance policies. Leaf (the policy is
//     read from the store outside it); may be taken under a suppression
//     gate.
//   - guardRails.sweepMu: the attempt cap's sweep timer. Leaf (the sweep's
//     store write runs outside it).
//   - aggregator.mu: the map of aggregated log entries only. Taken with no
//     lock held; under it an entry's lock is only tried (TryLock), never
//     waited for.
//
// Per organization:
//
//   - the suppression gate (guardRails.gates, an RWMutex): held for
//     reading by a dispatch from its suppression check until the provider
//     answered (across the checks' store calls, among them the attempt
//     cap's reservation, and the provider request), for writing by
//     SuppressionsAdded and by another node's ask (suppressnodes.go),
//     empty. Taken with no lock held. Under it:
//     campaignState.gate, and the leaves guardRails.pmu, runner.gmu,
//     liveAttempts.mu.
//
// Per campaign (campaignState):
//
//   - settle (RWMutex): orders the campaign's first count against the store
//     writes that move its attempts out of dialing or in flight (slots.go).
//     Held for writing across the count's one read, for reading across one
//     such write (Engine.leave); taken with no lock held, and nothing is
//     taken under it. A slow write holds back only the same campaign's
//     first count, and only until the write returns.
//   - gate (RWMutex): provider requests against Halt; held for reading
//     across one provider request (runner.place), under the organization's
//     suppression gate, for writing by Halt (empty), with no lock held.
//     Never held across a store call.
//   - refused.mu: the requeues the store refused (requeue.go). Leaf.
//
// Per campaign and event:
//
//   - aggEntry.mu: one aggregated log entry; held across its store write
//     (AddLog or UpdateLog) and the Watcher's notice. Taken with no lock
//     held; nothing is taken under it.
//
// Per telephony configuration:
//
//   - providerLimiter.mu: the provider's 429 back-off. Leaf.
//
// Per runner (one campaign's run loop):
//
//   - runner.mu: the earliest known deadline. Leaf.
//   - runner.gmu (RWMutex): the calling window, the contacts' zone groups
//     and the policy the run loop loaded, read by dispatches. Leaf; may be
//     taken under a suppression gate.
//   - runner.bmu: the circuit breaker's window. Leaf (the pause it may
//     cause is written outside it).
//   - runner.cmu: the campaign as status handlers see it. Leaf; may be
//     taken under Engine.mu.
//   - hold.mu: the runner's hold (hold.go). Leaf.
//
// The sub-packages' locks (metrics, the carriers' clients, contacts,
// workflow, the simulators) guard their own data only and are released
// before they call back into this package (the ARI client collects its
// EventSink calls under its lock and makes them after).
package dialer
