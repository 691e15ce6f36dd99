package ssefold

/*
#include <stdlib.h>
#include "ssefold_go.h"
*/
import "C"

import (
	"fmt"
	"math/rand/v2"
	"net/http"
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
	// Jitter spreads a computed delay by ±this fraction, in [0, 1]
	// (default 0.2; 0: none). The server's retry: and an HTTP Retry-After
	// are not jittered. Its randomness comes from a seed
	// (Reconnector.SeedJitter, AgentTurnConfig.JitterSeed).
	Jitter float64
	// IdleTimeout closes a connection without bytes for this long (0: none).
	IdleTimeout time.Duration
	// MaxServerRetry caps the server's retry: field, which otherwise takes
	// precedence over the backoff (0: the default, 10 minutes).
	MaxServerRetry time.Duration
	// MaxRetryAfter caps an HTTP Retry-After / retry-after-ms wait (0: the
	// default, 60 s).
	MaxRetryAfter time.Duration
	// RestartAfterOutput sends the request again after output was delivered
	// when the answer cannot be resumed (no Last-Event-ID or starting_after
	// cursor): a second answer, billed again, reported as turn_reset.
	// Default false: such an answer ends incomplete (GiveUpNotResumable).
	RestartAfterOutput bool
	// FirstContentTimeout: a connection that delivers no content (text,
	// arguments, a part, usage, the stop reason: StreamEvent.IsContent; not
	// pings, comments or keep-alive events) for this long after it opened,
	// before the answer's first content, is stalled (StallFirstContent)
	// (default 5 minutes; 0: none).
	FirstContentTimeout time.Duration
	// ContentTimeout: no content for this long between contents is a stall
	// (StallContent) (default 2 minutes; 0: none).
	ContentTimeout time.Duration
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
		MaxServerRetry:      msDuration(uint64(p.max_server_retry_ms)),
		MaxRetryAfter:       msDuration(uint64(p.max_retry_after_ms)),
		RestartAfterOutput:  bool(p.restart_after_output),
		FirstContentTimeout: msDuration(uint64(p.first_content_timeout_ms)),
		ContentTimeout:      msDuration(uint64(p.content_timeout_ms)),
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
		initial_delay_ms:     C.uint64_t(p.InitialDelay / time.Millisecond),
		growth:               C.double(p.Growth),
		max_delay_ms:         C.uint64_t(p.MaxDelay / time.Millisecond),
		max_retries:          C.uint32_t(p.MaxRetries),
		jitter:               C.double(p.Jitter),
		idle_timeout_ms:      C.uint64_t(p.IdleTimeout / time.Millisecond),
		max_server_retry_ms:  C.uint64_t(p.MaxServerRetry / time.Millisecond),
		max_retry_after_ms:   C.uint64_t(p.MaxRetryAfter / time.Millisecond),
		restart_after_output: C.bool(p.RestartAfterOutput),
		// A positive timeout under 1 ms is 1 ms, not "none".
		first_content_timeout_ms: C.uint64_t(ceilMS(p.FirstContentTimeout)),
		content_timeout_ms:       C.uint64_t(ceilMS(p.ContentTimeout)),
	}
}

// ceilMS is d in whole milliseconds, rounded up (0 stays 0: none).
func ceilMS(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64((d + time.Millisecond - 1) / time.Millisecond)
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
	// EndHTTPStatus: the response was refused before its body (a status
	// other than 2xx; StreamEnd.Status and Hints).
	EndHTTPStatus EndKind = 6
)

// String is the binding-wide name of the end kind ("completed",
// "ended_early", "transport_error", "idle_timeout", "provider_error",
// "aborted", "http_status"), as the Python StreamEnd.kind.
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
	case EndHTTPStatus:
		return "http_status"
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
	// Status and Hints (EndHTTPStatus): the refused response's status and
	// what its headers say about retrying it (RetryHintsFromHeaders).
	Status int
	Hints  RetryHints
}

// RetryHints is what a refused response's headers say about retrying it.
type RetryHints struct {
	// RetryAfter is retry-after-ms, or Retry-After (seconds or an HTTP
	// date); nil when the response sent neither.
	RetryAfter *time.Duration
	// ShouldRetry is x-should-retry (true / false); nil when not sent.
	ShouldRetry *bool
}

// RetryHintsFromHeaders reads retry-after-ms, Retry-After (seconds, or an
// HTTP date counted from now, the wall clock) and x-should-retry from
// header (the core's RetryHints::from_headers).
func RetryHintsFromHeaders(header http.Header, now time.Time) (RetryHints, error) {
	var names, values []string
	for name, vs := range header {
		for _, v := range vs {
			names, values = append(names, name), append(values, v)
		}
	}
	n := len(names)
	var h RetryHints
	var views *C.struct_ssefold_str
	if n > 0 {
		// Both arrays of views live in C memory (cgo forbids Go pointers
		// inside memory passed to C).
		size := C.size_t(unsafe.Sizeof(C.struct_ssefold_str{}))
		views = (*C.struct_ssefold_str)(C.calloc(C.size_t(2*n), size))
		defer C.free(unsafe.Pointer(views))
		all := unsafe.Slice(views, 2*n)
		for i := range names {
			a, fa := strView(names[i], true)
			defer fa()
			b, fb := strView(values[i], true)
			defer fb()
			all[i], all[n+i] = a, b
		}
	}
	var values0 *C.struct_ssefold_str
	if n > 0 {
		values0 = &unsafe.Slice(views, 2*n)[n]
	}
	out := (*C.struct_ssefold_retry_hints)(C.malloc(C.size_t(unsafe.Sizeof(C.struct_ssefold_retry_hints{}))))
	defer C.free(unsafe.Pointer(out))
	ms := now.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	maybeGC()
	if r := C.ssefold_retry_hints_from_headers(views, values0, C.size_t(n), C.uint64_t(ms), out); r != 0 {
		return h, &Error{Code: Result(r)}
	}
	return hintsFromC(*out), nil
}

func hintsFromC(c C.struct_ssefold_retry_hints) RetryHints {
	var h RetryHints
	if bool(c.has_retry_after) {
		d := msDuration(uint64(c.retry_after_ms))
		h.RetryAfter = &d
	}
	switch c.should_retry {
	case 1, 2:
		v := c.should_retry == 1
		h.ShouldRetry = &v
	}
	return h
}

func (h RetryHints) toC() C.struct_ssefold_retry_hints {
	var c C.struct_ssefold_retry_hints
	if h.RetryAfter != nil {
		c.has_retry_after = true
		c.retry_after_ms = C.uint64_t(max(*h.RetryAfter, 0) / time.Millisecond)
	}
	if h.ShouldRetry != nil {
		c.should_retry = 2
		if *h.ShouldRetry {
			c.should_retry = 1
		}
	}
	return c
}

// Replay says what a reconnection sends (wire names in String).
type Replay uint32

// Replays.
const (
	// ReplayRetry: no output was delivered; the same request again.
	ReplayRetry Replay = 0
	// ReplayResume: output was delivered; the request with the resume
	// cursor (Last-Event-ID, starting_after), for the server to go on.
	ReplayResume Replay = 1
	// ReplayRestart: output was delivered and cannot be resumed; the policy
	// opted in (RestartAfterOutput) to a second answer (turn_reset).
	ReplayRestart Replay = 2
)

// String is the wire name: retry, resume, restart.
func (r Replay) String() string {
	switch r {
	case ReplayRetry:
		return "retry"
	case ReplayResume:
		return "resume"
	case ReplayRestart:
		return "restart"
	}
	return fmt.Sprintf("Replay(%d)", uint32(r))
}

// GiveUpReason says why no reconnection follows (wire names in String).
type GiveUpReason uint32

// Give-up reasons.
const (
	// GiveUpRetriesExhausted: MaxRetries reconnections were used.
	GiveUpRetriesExhausted GiveUpReason = 0
	// GiveUpNotResumable: output was delivered and the answer cannot be
	// resumed (no cursor; RestartAfterOutput off): it ends incomplete.
	GiveUpNotResumable GiveUpReason = 1
	// GiveUpNotRetryable: the HTTP status is not one to retry (or
	// x-should-retry: false).
	GiveUpNotRetryable GiveUpReason = 2
)

// String is the wire name: retries_exhausted, not_resumable, not_retryable.
func (r GiveUpReason) String() string {
	switch r {
	case GiveUpRetriesExhausted:
		return "retries_exhausted"
	case GiveUpNotResumable:
		return "not_resumable"
	case GiveUpNotRetryable:
		return "not_retryable"
	}
	return fmt.Sprintf("GiveUpReason(%d)", uint32(r))
}

// UnmarshalText reads a wire name.
func (r *GiveUpReason) UnmarshalText(b []byte) error {
	for v := GiveUpRetriesExhausted; v <= GiveUpNotRetryable; v++ {
		if v.String() == string(b) {
			*r = v
			return nil
		}
	}
	return &Error{Code: ResultInvalidArgument, Message: "unknown give-up reason " + string(b)}
}

// StallKind says which timeout found a connection idle (wire names in
// String).
type StallKind uint32

// Stall kinds.
const (
	// StallIdle: no bytes for IdleTimeout.
	StallIdle StallKind = 0
	// StallFirstContent: no content for FirstContentTimeout before the
	// answer's first (keep-alives only).
	StallFirstContent StallKind = 1
	// StallContent: no content for ContentTimeout between contents.
	StallContent StallKind = 2
)

// String is the wire name: idle, first_content, content.
func (k StallKind) String() string {
	switch k {
	case StallIdle:
		return "idle"
	case StallFirstContent:
		return "first_content"
	case StallContent:
		return "content"
	}
	return fmt.Sprintf("StallKind(%d)", uint32(k))
}

// UnmarshalText reads a wire name.
func (k *StallKind) UnmarshalText(b []byte) error {
	for v := StallIdle; v <= StallContent; v++ {
		if v.String() == string(b) {
			*k = v
			return nil
		}
	}
	return &Error{Code: ResultInvalidArgument, Message: "unknown stall kind " + string(b)}
}

// timeout is the policy's timeout of kind k.
func (p ReconnectPolicy) timeout(k StallKind) time.Duration {
	switch k {
	case StallFirstContent:
		return p.FirstContentTimeout
	case StallContent:
		return p.ContentTimeout
	}
	return p.IdleTimeout
}

// randomSeed is a fresh seed for the retry jitter.
func randomSeed() uint64 {
	for {
		if s := rand.Uint64(); s != 0 {
			return s
		}
	}
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

// ResumeCursor is what to send so the server can resume (Rust
// reconnect::ResumeCursor, C ssefold_resume_cursor, Python ResumeCursor).
type ResumeCursor struct {
	Kind          CursorKind
	LastEventID   string
	StartingAfter uint64
}

// Cursor is the old name of ResumeCursor.
//
// Deprecated: use ResumeCursor, the name every binding uses.
type Cursor = ResumeCursor

// Decision is the reconnector's answer to a connection end.
type Decision struct {
	Kind DecisionKind
	// Delay before reconnecting (DecisionReconnect).
	Delay time.Duration
	// Attempt number (1 for the first reconnection).
	Attempt uint32
	// Cursor to send (DecisionReconnect).
	Cursor ResumeCursor
	// Replay says what the request is (DecisionReconnect): a retry before
	// any output, a resume with the cursor, or an opted-in restart.
	Replay Replay
	// LastEnd is how the last connection ended (DecisionGiveUp).
	LastEnd EndKind
	// GiveUpReason says why no reconnection follows (DecisionGiveUp).
	GiveUpReason GiveUpReason
	// Status is the HTTP status of a refused response (DecisionGiveUp
	// after EndHTTPStatus; 0 otherwise).
	Status int
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
	return track(&Reconnector{ptr: ptr}, (*Reconnector).Close), nil
}

// Close frees the reconnector. It is idempotent.
func (rc *Reconnector) Close() error {
	if rc.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_reconnector_free(rc.ptr)
	rc.ptr = nil
	untrack(rc, nil)
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

func cursorFromC(c C.struct_ssefold_resume_cursor) ResumeCursor {
	id, _ := goString(c.last_event_id)
	return ResumeCursor{Kind: CursorKind(c.kind), LastEventID: id, StartingAfter: uint64(c.starting_after)}
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
	ce.status = C.uint16_t(end.Status)
	ce.hints = end.Hints.toC()
	var out C.struct_ssefold_reconnect_decision
	maybeGC()
	r := C.ssefold_reconnector_on_end(rc.ptr, ce, &out)
	if r != 0 {
		return Decision{}, rc.err(r)
	}
	d := Decision{
		Kind:         DecisionKind(out.kind),
		Delay:        msDuration(uint64(out.delay_ms)),
		Attempt:      uint32(out.attempt),
		Cursor:       cursorFromC(out.cursor),
		Replay:       Replay(out.replay),
		LastEnd:      EndKind(out.last_end),
		GiveUpReason: GiveUpReason(out.give_up_reason),
		Status:       int(out.status),
		Retryable:    bool(out.retryable),
	}
	d.ErrorType, _ = goString(out.error_type)
	d.Message, _ = goString(out.message)
	runtime.KeepAlive(rc)
	return d, nil
}

// OnContent: content reached the host at nowMS (an event whose
// StreamEvent.IsContent is true; not pings, comments or keep-alives): the
// content timeouts restart, and from now on the answer has output (it is
// resumed, never sent again unless RestartAfterOutput).
func (rc *Reconnector) OnContent(nowMS uint64) error {
	if rc.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_reconnector_on_content(rc.ptr, C.uint64_t(nowMS))
	runtime.KeepAlive(rc)
	return rc.err(r)
}

// SeedJitter seeds the retry jitter with a random number (without it the
// jitter is the same sequence in every process).
func (rc *Reconnector) SeedJitter(seed uint64) error {
	if rc.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_reconnector_seed_jitter(rc.ptr, C.uint64_t(seed))
	runtime.KeepAlive(rc)
	return rc.err(r)
}

// Stall says which timeout has passed at nowMS (ok false: none): the
// connection is then closed and ended with EndIdleTimeout.
func (rc *Reconnector) Stall(nowMS uint64) (kind StallKind, ok bool) {
	k, ok, _ := rc.stall(nowMS)
	return k, ok
}

// OutputStarted says whether content reached the host on some connection
// of the answer (OnContent).
func (rc *Reconnector) OutputStarted() bool {
	_, _, started := rc.stall(0)
	return started
}

// ReplaySafe says whether sending the request again now would neither
// bill nor show a second answer: no output yet, or a resume cursor to send.
func (rc *Reconnector) ReplaySafe() bool {
	if rc.ptr == nil {
		return false
	}
	var safe C.bool
	maybeGC()
	C.ssefold_reconnector_output_started(rc.ptr, nil, &safe)
	runtime.KeepAlive(rc)
	return bool(safe)
}

func (rc *Reconnector) stall(nowMS uint64) (StallKind, bool, bool) {
	if rc.ptr == nil {
		return 0, false, false
	}
	var stalled, started C.bool
	var kind C.ssefold_stall_kind
	maybeGC()
	C.ssefold_reconnector_stall(rc.ptr, C.uint64_t(nowMS), &stalled, &kind, &started)
	runtime.KeepAlive(rc)
	return StallKind(kind), bool(stalled), bool(started)
}

// Cursor is what to send on the next connection.
func (rc *Reconnector) Cursor() ResumeCursor {
	if rc.ptr == nil {
		return ResumeCursor{}
	}
	var c C.struct_ssefold_resume_cursor
	maybeGC()
	C.ssefold_reconnector_cursor(rc.ptr, &c)
	out := cursorFromC(c)
	runtime.KeepAlive(rc)
	return out
}

// IdleDeadline is when the current connection counts as idle or stalled:
// the earliest of the idle timeout (from the last bytes) and the content
// timeout in force (from the connection's opening or its last content);
// ok false when none.
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
