package ssefold

/*
#include <stdlib.h>
#include "ssefold_go.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// ReconnectPolicy holds the knobs of the reconnection policy. Start from
// DefaultReconnectPolicy.
type ReconnectPolicy struct {
	// InitialDelay before the first retry (default 1s).
	InitialDelay time.Duration
	// Growth factor per further retry (default 1.5; >= 1).
	Growth float64
	// MaxDelay caps the computed delay (default 30s).
	MaxDelay time.Duration
	// MaxRetries is the number of reconnections before giving up (default 2).
	MaxRetries uint32
	// Jitter as a fraction of the delay, in [0, 1] (default 0).
	Jitter float64
	// IdleTimeout closes a connection without bytes for this long (0: none).
	IdleTimeout time.Duration
	// MaxServerRetry caps the server's retry: field, which otherwise takes
	// precedence over the backoff (0: the default, 10 minutes).
	MaxServerRetry time.Duration
}

// DefaultReconnectPolicy returns the core's default policy.
func DefaultReconnectPolicy() ReconnectPolicy {
	var p C.struct_ssefold_reconnect_policy
	maybeGC()
	C.ssefold_reconnect_policy_default(&p)
	return policyFromC(p)
}

func policyFromC(p C.struct_ssefold_reconnect_policy) ReconnectPolicy {
	return ReconnectPolicy{
		InitialDelay: time.Duration(p.initial_delay_ms) * time.Millisecond,
		Growth:       float64(p.growth),
		MaxDelay:     time.Duration(p.max_delay_ms) * time.Millisecond,
		MaxRetries:   uint32(p.max_retries),
		Jitter:       float64(p.jitter),
		IdleTimeout:  time.Duration(p.idle_timeout_ms) * time.Millisecond,
		// Capped so that the conversion cannot overflow time.Duration.
		MaxServerRetry: msDuration(uint64(p.max_server_retry_ms)),
	}
}

// msDuration converts milliseconds to a Duration, saturating instead of
// overflowing.
func msDuration(ms uint64) time.Duration {
	const maxMS = uint64(1<<63-1) / uint64(time.Millisecond)
	if ms > maxMS {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(ms) * time.Millisecond
}

func (p ReconnectPolicy) toC() C.struct_ssefold_reconnect_policy {
	return C.struct_ssefold_reconnect_policy{
		initial_delay_ms:    C.uint64_t(p.InitialDelay / time.Millisecond),
		growth:              C.double(p.Growth),
		max_delay_ms:        C.uint64_t(p.MaxDelay / time.Millisecond),
		max_retries:         C.uint32_t(p.MaxRetries),
		jitter:              C.double(p.Jitter),
		idle_timeout_ms:     C.uint64_t(p.IdleTimeout / time.Millisecond),
		max_server_retry_ms: C.uint64_t(p.MaxServerRetry / time.Millisecond),
	}
}

// NextDelay is the delay before retry number attempt (0 for the first):
// serverRetry when non-nil (the server's retry:, never jittered), else the
// capped exponential backoff spread by the jitter with randomUnit in
// [0, 1) (0.5 for none).
func (p ReconnectPolicy) NextDelay(attempt uint32, serverRetry *time.Duration, randomUnit float64) (time.Duration, error) {
	cp := p.toC()
	var srv *C.uint64_t
	if serverRetry != nil {
		srv = (*C.uint64_t)(C.malloc(8))
		defer C.free(unsafe.Pointer(srv))
		*srv = C.uint64_t(*serverRetry / time.Millisecond)
	}
	var out C.uint64_t
	maybeGC()
	r := C.ssefold_reconnect_next_delay_ms(&cp, C.uint32_t(attempt), srv, C.double(randomUnit), &out)
	if r != 0 {
		return 0, &Error{Code: Result(r)}
	}
	return msDuration(uint64(out)), nil
}

// IsRetryableErrorType says whether a provider error type is transient
// (sending the same request again may succeed).
func IsRetryableErrorType(errorType string) bool {
	v, free := strView(errorType, true)
	defer free()
	var out C.bool
	maybeGC()
	C.ssefold_reconnect_is_retryable_error_type(v, &out)
	return bool(out)
}

// EndKind is how a connection ended.
type EndKind uint32

// End kinds.
const (
	EndCompleted      EndKind = 0
	EndEndedEarly     EndKind = 1
	EndTransportError EndKind = 2
	EndIdleTimeout    EndKind = 3
	EndProviderError  EndKind = 4
	EndAborted        EndKind = 5
)

// String is the binding-wide name of the end kind ("completed",
// "ended_early", "transport_error", "idle_timeout", "provider_error",
// "aborted"), as the Python StreamEnd.kind.
func (k EndKind) String() string {
	switch k {
	case EndCompleted:
		return "completed"
	case EndEndedEarly:
		return "ended_early"
	case EndTransportError:
		return "transport_error"
	case EndIdleTimeout:
		return "idle_timeout"
	case EndProviderError:
		return "provider_error"
	case EndAborted:
		return "aborted"
	}
	return fmt.Sprintf("EndKind(%d)", uint32(k))
}

// StreamEnd is how a connection ended, as the host saw it.
type StreamEnd struct {
	Kind EndKind
	// ErrorType (EndProviderError).
	ErrorType string
	// Message (EndTransportError, EndProviderError).
	Message string
}

// DecisionKind is what the host should do next.
type DecisionKind uint32

// Decision kinds.
const (
	DecisionDone      DecisionKind = 0
	DecisionReconnect DecisionKind = 1
	DecisionGiveUp    DecisionKind = 2
	DecisionFail      DecisionKind = 3
	DecisionStop      DecisionKind = 4
)

// CursorKind says what to send when reconnecting.
type CursorKind uint32

// Cursor kinds.
const (
	// CursorNone: the request starts over.
	CursorNone CursorKind = 0
	// CursorLastEventID: send Last-Event-ID.
	CursorLastEventID CursorKind = 1
	// CursorStartingAfter: OpenAI Responses starting_after.
	CursorStartingAfter CursorKind = 2
)

// Cursor is what to send so the server can resume.
type Cursor struct {
	Kind          CursorKind
	LastEventID   string
	StartingAfter uint64
}

// Decision is the reconnector's answer to a connection end.
type Decision struct {
	Kind DecisionKind
	// Delay before reconnecting (DecisionReconnect).
	Delay time.Duration
	// Attempt number (1 for the first reconnection).
	Attempt uint32
	// Cursor to send (DecisionReconnect).
	Cursor Cursor
	// LastEnd is how the last connection ended (DecisionGiveUp).
	LastEnd EndKind
	// ErrorType and Message of a provider error (DecisionFail) or the
	// transport error text (DecisionGiveUp).
	ErrorType string
	Message   string
	// Retryable: the provider error is transient (DecisionFail).
	Retryable bool
}

// ConnectionState is the connection state for a UI.
type ConnectionState uint32

// Connection states.
const (
	Disconnected ConnectionState = 0
	Connecting   ConnectionState = 1
	Connected    ConnectionState = 2
	Reconnecting ConnectionState = 3
)

// String is the binding-wide state name.
func (s ConnectionState) String() string {
	maybeGC()
	return C.GoString(C.ssefold_connection_state_name(C.uint32_t(s)))
}

// Reconnector is the reconnection state machine of one logical stream.
// Times are milliseconds on the host's clock.
type Reconnector struct {
	ptr *C.struct_ssefold_reconnector
}

// NewReconnector creates a reconnector (state Connecting).
func NewReconnector(policy ReconnectPolicy) (*Reconnector, error) {
	cp := policy.toC()
	var ptr *C.struct_ssefold_reconnector
	maybeGC()
	if r := C.ssefold_reconnector_new(&cp, &ptr); r != 0 {
		return nil, &Error{Code: Result(r)}
	}
	liveHandles.Add(1)
	rc := &Reconnector{ptr: ptr}
	runtime.SetFinalizer(rc, (*Reconnector).Close)
	return rc, nil
}

// Close frees the reconnector. It is idempotent.
func (rc *Reconnector) Close() error {
	if rc.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_reconnector_free(rc.ptr)
	rc.ptr = nil
	liveHandles.Add(-1)
	runtime.SetFinalizer(rc, nil)
	return nil
}

func (rc *Reconnector) err(r C.ssefold_result) error {
	if r == 0 {
		return nil
	}
	var m C.struct_ssefold_str
	maybeGC()
	C.ssefold_reconnector_last_error(rc.ptr, &m)
	msg, _ := goString(m)
	return &Error{Code: Result(r), Message: msg}
}

// OnConnected: the response headers arrived at nowMS.
func (rc *Reconnector) OnConnected(nowMS uint64) error {
	if rc.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_reconnector_on_connected(rc.ptr, C.uint64_t(nowMS))
	runtime.KeepAlive(rc)
	return rc.err(r)
}

// OnActivity: bytes arrived at nowMS.
func (rc *Reconnector) OnActivity(nowMS uint64) error {
	if rc.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_reconnector_on_activity(rc.ptr, C.uint64_t(nowMS))
	runtime.KeepAlive(rc)
	return rc.err(r)
}

// OnEvent: an event was dispatched with the SSE last event ID (hasID),
// the Responses sequence number and the stream's retry time (nil when
// unknown). It resets the retry count.
func (rc *Reconnector) OnEvent(id string, hasID bool, sequenceNumber, retryMS *uint64) error {
	if rc.ptr == nil {
		return ErrClosed
	}
	v, free := strView(id, hasID)
	defer free()
	buf := (*[2]C.uint64_t)(C.malloc(16))
	defer C.free(unsafe.Pointer(buf))
	var seq, retry *C.uint64_t
	if sequenceNumber != nil {
		buf[0] = C.uint64_t(*sequenceNumber)
		seq = &buf[0]
	}
	if retryMS != nil {
		buf[1] = C.uint64_t(*retryMS)
		retry = &buf[1]
	}
	maybeGC()
	r := C.ssefold_reconnector_on_event(rc.ptr, v, seq, retry)
	runtime.KeepAlive(rc)
	return rc.err(r)
}

func cursorFromC(c C.struct_ssefold_resume_cursor) Cursor {
	id, _ := goString(c.last_event_id)
	return Cursor{Kind: CursorKind(c.kind), LastEventID: id, StartingAfter: uint64(c.starting_after)}
}

// OnEnd: a connection ended; decides what comes next.
func (rc *Reconnector) OnEnd(end StreamEnd) (Decision, error) {
	if rc.ptr == nil {
		return Decision{}, ErrClosed
	}
	et, f1 := strView(end.ErrorType, end.ErrorType != "")
	defer f1()
	msg, f2 := strView(end.Message, end.Message != "")
	defer f2()
	ce := (*C.struct_ssefold_stream_end)(C.malloc(C.size_t(unsafe.Sizeof(C.struct_ssefold_stream_end{}))))
	defer C.free(unsafe.Pointer(ce))
	ce.kind = C.uint32_t(end.Kind)
	ce.error_type = et
	ce.message = msg
	var out C.struct_ssefold_reconnect_decision
	maybeGC()
	r := C.ssefold_reconnector_on_end(rc.ptr, ce, &out)
	if r != 0 {
		return Decision{}, rc.err(r)
	}
	d := Decision{
		Kind:      DecisionKind(out.kind),
		Delay:     msDuration(uint64(out.delay_ms)),
		Attempt:   uint32(out.attempt),
		Cursor:    cursorFromC(out.cursor),
		LastEnd:   EndKind(out.last_end),
		Retryable: bool(out.retryable),
	}
	d.ErrorType, _ = goString(out.error_type)
	d.Message, _ = goString(out.message)
	runtime.KeepAlive(rc)
	return d, nil
}

// Cursor is what to send on the next connection.
func (rc *Reconnector) Cursor() Cursor {
	if rc.ptr == nil {
		return Cursor{}
	}
	var c C.struct_ssefold_resume_cursor
	maybeGC()
	C.ssefold_reconnector_cursor(rc.ptr, &c)
	out := cursorFromC(c)
	runtime.KeepAlive(rc)
	return out
}

// IdleDeadline is when the idle timeout of the current connection expires
// (ok false when none).
func (rc *Reconnector) IdleDeadline() (deadlineMS uint64, ok bool) {
	if rc.ptr == nil {
		return 0, false
	}
	var has C.bool
	var d C.uint64_t
	maybeGC()
	C.ssefold_reconnector_idle_deadline_ms(rc.ptr, &has, &d)
	runtime.KeepAlive(rc)
	return uint64(d), bool(has)
}

// IsIdle says whether the idle deadline has passed at nowMS.
func (rc *Reconnector) IsIdle(nowMS uint64) bool {
	if rc.ptr == nil {
		return false
	}
	var out C.bool
	maybeGC()
	C.ssefold_reconnector_is_idle(rc.ptr, C.uint64_t(nowMS), &out)
	runtime.KeepAlive(rc)
	return bool(out)
}

// State is the connection state and the reconnections in a row so far.
func (rc *Reconnector) State() (ConnectionState, uint32) {
	if rc.ptr == nil {
		return Disconnected, 0
	}
	var s C.ssefold_connection_state
	var a C.uint32_t
	maybeGC()
	C.ssefold_reconnector_state(rc.ptr, &s, &a)
	runtime.KeepAlive(rc)
	return ConnectionState(s), uint32(a)
}
