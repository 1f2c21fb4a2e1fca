package arisim

// What the simulator recorded.

import "sort"

// CallRecord is a snapshot of one call.
type CallRecord struct {
	CallInfo
	// Script is the script the call plays (Outcome never "").
	Script Script
	// Answered, Ended: the call was answered; all its channels are gone.
	Answered, Ended bool
	// OwnCause and FarCause are the ChannelDestroyed causes of our channel
	// and of the far half, once ended.
	OwnCause, FarCause int
	// Canceled: hung up through the API while ringing; HungUp: hung up
	// through the API at all.
	Canceled, HungUp bool
	// Variables are the originate's channel variables.
	Variables map[string]string
}

// Calls returns every call placed, in origination order.
func (s *Server) Calls() []CallRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CallRecord, len(s.calls))
	for i, c := range s.calls {
		out[i] = CallRecord{CallInfo: c.info, Script: c.script, Answered: c.answered, Ended: c.ended,
			OwnCause: c.ownCause, FarCause: c.farCause, Canceled: c.canceled, HungUp: c.hungUpAPI, Variables: c.own.vars}
	}
	return out
}

// Requests returns every originate request that was valid (placed: 200,
// or refused as a duplicate: 409), in order.
func (s *Server) Requests() []OriginateRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]OriginateRecord(nil), s.requests...)
}

// OriginatesOf is the number of calls placed with channel id id.
func (s *Server) OriginatesOf(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.originates[id]
}

// OriginatesByID returns the number of calls placed per channel id.
func (s *Server) OriginatesByID() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.originates))
	for k, v := range s.originates {
		out[k] = v
	}
	return out
}

// OriginatesTo is the number of calls placed to number.
func (s *Server) OriginatesTo(number string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byNumber[number]
}

// Live returns the ids of the live channels, sorted.
func (s *Server) Live() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.channels))
	for id := range s.channels {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Media returns the externalMedia channels created, in order.
func (s *Server) Media() []MediaRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]MediaRecord(nil), s.media...)
}

// BridgeRecord is a snapshot of one bridge.
type BridgeRecord struct {
	ID, Type, Name string
	// Channels are in the bridge now; Added every channel ever added.
	Channels, Added []string
	Deleted         bool
}

// Bridges returns every bridge created, in order.
func (s *Server) Bridges() []BridgeRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]BridgeRecord, len(s.bridgeOrder))
	for i, b := range s.bridgeOrder {
		out[i] = BridgeRecord{ID: b.id, Type: b.typ, Name: b.name, Channels: append([]string(nil), b.channels...),
			Added: append([]string(nil), b.added...), Deleted: b.deleted}
	}
	return out
}

// HangUps returns the channel ids hung up through the API, in order.
func (s *Server) HangUps() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hangups...)
}
