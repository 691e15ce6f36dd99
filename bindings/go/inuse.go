package ssefold

import "sync/atomic"

// inUse is the Go-side claim of a handle whose Go state (the events a call
// collects, the path stacks, the arena) a call changes: Decoder, Stream,
// PartialJSON and AgentTurn. Every exported method claims it for its whole
// run (one compare-and-swap), so two goroutines that use one value at once
// (which is not allowed) get a *Error with code ResultBadState (errors.Is
// ErrBadState) for the call that loses the race, never a data race on the
// Go state or the C handle. Methods without an error result return their
// zero values then. The C handle has the same claim (atomic, in the core),
// which refuses the other threads of a C program the same way.
type inUse struct{ busy atomic.Bool }

// enter claims the value for one call.
func (u *inUse) enter() error {
	if !u.busy.CompareAndSwap(false, true) {
		return &Error{Code: ResultBadState, Message: "the value is in use by another call (not safe for concurrent use)"}
	}
	return nil
}

// leave ends the claim of enter.
func (u *inUse) leave() { u.busy.Store(false) }
