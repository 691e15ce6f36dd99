package ssefold

import (
	"runtime"
	"runtime/cgo"
)

// The lifecycle every handle type (Decoder, Encoder, Stream, PartialJSON,
// Reconnector, ToolScheduler, Relay, AgentTurn) shares, written once here
// (wasmtime-go's pattern): each type holds its C pointer in ptr and, when
// the C library calls back into Go, the cgo.Handle of its callback state.
//
//   - The constructor returns track(v, (*T).Close): the C handle is counted
//     in LiveHandles and Close becomes v's finalizer, a safety net only (the
//     Go GC does not see the weight of the C memory).
//   - Close is idempotent: with ptr nil it returns at once; otherwise it
//     frees the C handle (its own C call, after maybeGC), sets ptr to nil
//     and calls untrack, which deletes the callback's cgo.Handle, uncounts
//     the C handle and clears the finalizer.
//   - Every method that reaches C checks ptr first (ErrClosed) and ends
//     with runtime.KeepAlive(v), so the finalizer cannot free the C handle
//     during the call; go test -tags debug forces a collection before every
//     C call (maybeGC) to prove it.

// track counts v's new C handle as live and sets closer as v's finalizer.
func track[T any](v *T, closer func(*T) error) *T {
	liveHandles.Add(1)
	runtime.SetFinalizer(v, closer)
	return v
}

// untrack ends what track began, once v's C handle is freed: deletes the
// callback's cgo.Handle (callback nil or 0: none), uncounts the C handle
// and clears the finalizer.
func untrack[T any](v *T, callback *cgo.Handle) {
	if callback != nil && *callback != 0 {
		callback.Delete()
		*callback = 0
	}
	liveHandles.Add(-1)
	runtime.SetFinalizer(v, nil)
}
