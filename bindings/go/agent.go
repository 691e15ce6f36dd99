package ssefold

/*
#include <stdlib.h>
#include "ssefold_go.h"
ssefold_result ssefold_go_agent_turn_set_callback(struct ssefold_agent_turn *t, uintptr_t h, bool event_json);
*/
import "C"

import (
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/cgo"
	"time"
	"unsafe"
)

// AgentTurnConfig configures an AgentTurn; the zero value is the default
// (provider Auto, the default limits, reconnection with
// DefaultReconnectPolicy and a random jitter seed, events on without their
// JSON form).
type AgentTurnConfig struct {
	// Provider is the dialect (Auto: detected from the body).
	Provider Provider
	// Stream holds the stream's limits (nil: the defaults). Its NoEvents and
	// EventJSON say whether the turn reports its stream events, and with
	// their JSON form.
	Stream *StreamOptions
	// Scheduler holds the tool scheduler's limits (nil: the defaults).
	Scheduler *SchedulerConfig
	// Reconnect is the policy for a connection that is refused with a
	// transient HTTP status (HTTPStatus), ends early, fails or stalls: the
	// turn asks for ActionReconnect (a retry before output, a resume with
	// the cursor after it) until the policy gives up (nil:
	// DefaultReconnectPolicy). Its stall timeouts apply with NoReconnect
	// too.
	Reconnect *ReconnectPolicy
	// NoReconnect: never send a request again (a host that reads one body
	// it cannot request again); such an ending ends the turn.
	NoReconnect bool
	// ApprovalTimeout denies a call waiting for approval that gets no
	// answer for this long (Tick; 0: it waits for the host).
	ApprovalTimeout time.Duration
	// JitterSeed seeds the retry jitter (0: a random seed).
	JitterSeed uint64
}

// ActionKind is what a TurnAction asks the host to do.
type ActionKind uint32

// Action kinds.
const (
	// ActionStartTool: run the call (ID, Name, Arguments) and report
	// AgentTurn.ToolResult.
	ActionStartTool ActionKind = 0
	// ActionCancelTool: cancel the running call ID; the turn already gave it
	// its result (a late one is dropped).
	ActionCancelTool ActionKind = 1
	// ActionCloseConnection: close the connection now (it went idle).
	ActionCloseConnection ActionKind = 2
	// ActionReconnect: send the request again after Delay with Cursor, then
	// report Connected and feed the new body.
	ActionReconnect ActionKind = 3
)

// TurnAction is one thing the host does next (AgentTurn.PollAction).
type TurnAction struct {
	Kind ActionKind
	// Call is the call to start (ActionStartTool; its Input is the
	// arguments as JSON for a JSON call) or to cancel (ActionCancelTool:
	// only ID).
	Call ToolCall
	// DelayMS, Attempt, Cursor and Replay: ActionReconnect's wait, which
	// reconnection this is (1 for the first), what to send to resume, and
	// what the request is (a retry before any output, a resume with the
	// cursor, or a restart the policy opted in to).
	DelayMS uint64
	Attempt uint32
	Cursor  ResumeCursor
	Replay  Replay
}

// AgentTurn is one sans-IO agent turn (the C ssefold_agent_turn): the host
// reports what happened (bytes, the connection, the time, a tool's result,
// an abort), each such call returns the events to show in order, and
// PollAction says what to do (start or cancel a tool, reconnect). It never
// opens a connection, runs a tool or reads a clock: RunTurn is the ready
// IO shell over it. Not safe for concurrent use; Close it when done.
type AgentTurn struct {
	ptr    *C.struct_ssefold_agent_turn
	handle cgo.Handle
	state  *turnState
	use    inUse
}

// turnState is what the event callback fills.
type turnState struct {
	stream   streamState
	events   []TurnEvent
	panicked any
}

// NewAgentTurn creates a turn waiting for its first bytes (cfg nil: the
// defaults).
func NewAgentTurn(cfg *AgentTurnConfig) (*AgentTurn, error) {
	var c AgentTurnConfig
	if cfg != nil {
		c = *cfg
	}
	var o StreamOptions
	if c.Stream != nil {
		o = *c.Stream
	}
	var cc C.struct_ssefold_agent_turn_config
	maybeGC()
	C.ssefold_agent_turn_config_default(&cc)
	cc.provider = C.uint32_t(c.Provider)
	var err error
	if cc.stream, err = o.toC(); err != nil {
		return nil, err
	}
	if s := c.Scheduler; s != nil {
		if s.MaxConcurrency < 0 || s.MaxCalls < 0 {
			return nil, &Error{Code: ResultInvalidArgument, Message: "negative limit"}
		}
		cc.scheduler.max_concurrency = C.size_t(s.MaxConcurrency)
		if s.MaxCalls > 0 {
			cc.scheduler.max_calls = C.size_t(s.MaxCalls)
		}
	}
	if c.Reconnect != nil {
		cc.reconnect_policy = c.Reconnect.toC()
	}
	cc.reconnect = C.bool(!c.NoReconnect)
	if c.ApprovalTimeout > 0 {
		cc.approval_timeout_ms = C.uint64_t(ceilMS(c.ApprovalTimeout))
	}
	cc.jitter_seed = C.uint64_t(c.JitterSeed)
	if c.JitterSeed == 0 {
		cc.jitter_seed = C.uint64_t(randomSeed())
	}
	var ptr *C.struct_ssefold_agent_turn
	maybeGC()
	if r := C.ssefold_agent_turn_new(&cc, &ptr); r != 0 {
		return nil, &Error{Code: Result(r)}
	}
	t := &AgentTurn{ptr: ptr, state: &turnState{stream: streamState{names: map[string]string{},
		pathLimit: int(cc.stream.max_path_events_per_feed)}}}
	if !o.NoEvents {
		t.handle = cgo.NewHandle(t.state)
		maybeGC()
		C.ssefold_go_agent_turn_set_callback(ptr, C.uintptr_t(t.handle), C.bool(o.EventJSON))
	}
	return track(t, (*AgentTurn).Close), nil
}

// Close frees the turn. It is idempotent.
func (t *AgentTurn) Close() error {
	if err := t.use.enter(); err != nil {
		return err
	}
	defer t.use.leave()
	if t.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_agent_turn_free(t.ptr)
	t.ptr = nil
	untrack(t, &t.handle)
	return nil
}

func (t *AgentTurn) err(r C.ssefold_result) error {
	if r == 0 {
		return nil
	}
	var m C.struct_ssefold_str
	maybeGC()
	C.ssefold_agent_turn_last_error(t.ptr, &m)
	msg, _ := goString(m)
	return &Error{Code: Result(r), Message: msg}
}

// report runs one input that reports events: the turn claimed and open,
// call made with its handle (each call does its maybeGC() right before its
// C call), then done.
func (t *AgentTurn) report(call func(h *C.struct_ssefold_agent_turn) C.ssefold_result) ([]TurnEvent, error) {
	if err := t.use.enter(); err != nil {
		return nil, err
	}
	defer t.use.leave()
	if t.ptr == nil {
		return nil, ErrClosed
	}
	return t.done(call(t.ptr))
}

// done finishes a call that reported events: re-raises a panic of the
// callback, and hands the events over.
func (t *AgentTurn) done(r C.ssefold_result) ([]TurnEvent, error) {
	st := t.state
	if pv := st.panicked; pv != nil {
		st.panicked = nil
		panic(pv)
	}
	err := t.err(r)
	runtime.KeepAlive(t)
	st.stream.callEnded()
	events := st.events
	st.events = nil
	return events, err
}

// AddTool registers a tool the host runs, and how it is scheduled. A call
// to a name not registered gets the error result "No such tool available:
// NAME" and never starts. Register the tools before the first Feed.
func (t *AgentTurn) AddTool(name string, opts ToolOptions) error {
	if err := t.use.enter(); err != nil {
		return err
	}
	defer t.use.leave()
	if t.ptr == nil {
		return ErrClosed
	}
	n, free := strView(name, true)
	defer free()
	maybeGC()
	r := C.ssefold_agent_turn_add_tool(t.ptr, n, opts.toC())
	runtime.KeepAlive(t)
	return t.err(r)
}

// RequestSent reports that the host sent the request at nowMS (the first,
// or the one ActionReconnect asked for): the timings count from the first.
// Optional (without it they count from Connected).
func (t *AgentTurn) RequestSent(nowMS uint64) error {
	if err := t.use.enter(); err != nil {
		return err
	}
	defer t.use.leave()
	if t.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_agent_turn_request_sent(t.ptr, C.uint64_t(nowMS))
	runtime.KeepAlive(t)
	return t.err(r)
}

// HTTPStatus reports that the response was refused before its body at
// nowMS: status is not 2xx; header is the response's (its retry hints are
// read with RetryHintsFromHeaders and the wall clock). A transient status
// (408, 409, 429, 500, 502, 503, 504, 529) is retried under the policy
// (ActionReconnect after its Retry-After, capped); another, or
// x-should-retry: false, ends the turn (a *TurnFailure of kind http; the
// body is the host's, for its error).
func (t *AgentTurn) HTTPStatus(status int, header http.Header, nowMS uint64) ([]TurnEvent, error) {
	hints, err := RetryHintsFromHeaders(header, time.Now())
	if err != nil {
		return nil, err
	}
	return t.HTTPStatusHints(status, hints, nowMS)
}

// HTTPStatusHints is HTTPStatus with the hints already read.
func (t *AgentTurn) HTTPStatusHints(status int, hints RetryHints, nowMS uint64) ([]TurnEvent, error) {
	if status < 0 || status > 0xFFFF {
		return nil, &Error{Code: ResultInvalidArgument, Message: "HTTP status out of range"}
	}
	hc := (*C.struct_ssefold_retry_hints)(C.malloc(C.size_t(unsafe.Sizeof(C.struct_ssefold_retry_hints{}))))
	defer C.free(unsafe.Pointer(hc))
	*hc = hints.toC()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_http_status(h, C.uint16_t(status), hc, C.uint64_t(nowMS))
	})
}

// Approve approves the call waiting for approvalID (its
// tool_approval_requested event): the scheduling rules now apply to it.
// An unknown or already answered id matches ErrNotAwaitingApproval.
func (t *AgentTurn) Approve(approvalID string) ([]TurnEvent, error) {
	id, free := strView(approvalID, true)
	defer free()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_approve(h, id)
	})
}

// Deny denies the call waiting for approvalID: its error result (kind
// ToolDenied) is "Denied by the user", with ": REASON" for a non-empty
// reason. Errors as Approve.
func (t *AgentTurn) Deny(approvalID, reason string) ([]TurnEvent, error) {
	id, f1 := strView(approvalID, true)
	defer f1()
	why, f2 := strView(reason, true)
	defer f2()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_deny(h, id, why)
	})
}

// CancelTool cancels the running call callID (after its
// tool_running_after_stop event, say): its result is "Cancelled by the
// host" (kind ToolCancelled) now and its late result is dropped; the host
// stops the call itself. A call not running is left as it is; an unknown id
// matches ErrUnknownCallID.
func (t *AgentTurn) CancelTool(callID string) ([]TurnEvent, error) {
	id, free := strView(callID, true)
	defer free()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_cancel_tool(h, id)
	})
}

// Connected reports that the response headers of a connection arrived at
// nowMS (the host's clock) with a 2xx status: the first one, or the one
// ActionReconnect asked for.
func (t *AgentTurn) Connected(nowMS uint64) error {
	if err := t.use.enter(); err != nil {
		return err
	}
	defer t.use.leave()
	if t.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_agent_turn_connected(t.ptr, C.uint64_t(nowMS))
	runtime.KeepAlive(t)
	return t.err(r)
}

// Feed reports bytes of the body and returns the events to show. A failure
// of the stream is no error here: it ends the turn (Failure, the outcome).
func (t *AgentTurn) Feed(b []byte, nowMS uint64) ([]TurnEvent, error) {
	p, n := bytesPtr(b)
	defer runtime.KeepAlive(b)
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_feed(h, p, n, C.uint64_t(nowMS))
	})
}

// EndOfBody reports that the body ended (the connection closed cleanly).
func (t *AgentTurn) EndOfBody(nowMS uint64) ([]TurnEvent, error) {
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_end_of_body(h, C.uint64_t(nowMS))
	})
}

// ConnectionFailed reports that the connection failed before the body
// ended (reason says how).
func (t *AgentTurn) ConnectionFailed(reason string, nowMS uint64) ([]TurnEvent, error) {
	v, free := strView(reason, true)
	defer free()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_connection_failed(h, v, C.uint64_t(nowMS))
	})
}

// Tick reports the time: a connection idle or stalled past the policy's
// timeouts is closed (ActionCloseConnection), then reconnected or the end
// of the turn; a call waiting for approval past ApprovalTimeout is denied.
func (t *AgentTurn) Tick(nowMS uint64) ([]TurnEvent, error) {
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_tick(h, C.uint64_t(nowMS))
	})
}

// Deadline is when Tick should be called next (ok false: no deadline).
func (t *AgentTurn) Deadline() (deadlineMS uint64, ok bool) {
	if t.use.enter() != nil {
		return 0, false
	}
	defer t.use.leave()
	if t.ptr == nil {
		return 0, false
	}
	var has C.bool
	var ms C.uint64_t
	maybeGC()
	C.ssefold_agent_turn_deadline_ms(t.ptr, &has, &ms)
	runtime.KeepAlive(t)
	return uint64(ms), bool(has)
}

// ToolUpdate reports progress text of a running call.
func (t *AgentTurn) ToolUpdate(callID, text string) ([]TurnEvent, error) {
	id, f1 := strView(callID, true)
	defer f1()
	v, f2 := strView(text, true)
	defer f2()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_tool_update(h, id, v)
	})
}

// ToolResult reports the result of a call the turn started (a late result
// of a call it already ended is dropped). Misuse matches the scheduler's
// errors (ErrUnknownCallID, ErrNotStarted, ErrAlreadyFinished).
func (t *AgentTurn) ToolResult(callID, output string, isError bool) ([]TurnEvent, error) {
	id, f1 := strView(callID, true)
	defer f1()
	out, f2 := strView(output, true)
	defer f2()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_tool_result(h, id, out, C.bool(isError))
	})
}

// Abort ends the turn because the user cancelled (reason: the results'
// "Aborted: REASON"): running calls are cancelled, every call without a
// result gets the aborted one. Nothing once the turn is over.
func (t *AgentTurn) Abort(reason string) ([]TurnEvent, error) {
	v, free := strView(reason, true)
	defer free()
	return t.report(func(h *C.struct_ssefold_agent_turn) C.ssefold_result {
		maybeGC()
		return C.ssefold_agent_turn_abort(h, v)
	})
}

// PollAction returns the next thing to do (ok false: nothing now). Drain
// the actions after every report.
func (t *AgentTurn) PollAction() (a TurnAction, ok bool, err error) {
	if err := t.use.enter(); err != nil {
		return TurnAction{}, false, err
	}
	defer t.use.leave()
	if t.ptr == nil {
		return a, false, ErrClosed
	}
	var c C.struct_ssefold_agent_turn_action
	var has C.bool
	maybeGC()
	r := C.ssefold_agent_turn_poll_action(t.ptr, &c, &has)
	defer runtime.KeepAlive(t)
	if err := t.err(r); err != nil || !bool(has) {
		return a, false, err
	}
	a.Kind = ActionKind(c.kind)
	a.Call.ID, _ = goString(c.call_id)
	switch a.Kind {
	case ActionStartTool:
		a.Call.Name, _ = goString(c.name)
		a.Call.Arguments, _ = goString(c.arguments)
		a.Call.InputFormat = ToolInputFormat(c.input_format)
		a.Call.IDSynthesized = bool(c.id_synthesized)
		if a.Call.InputFormat == ToolInputJSON {
			a.Call.Input = json.RawMessage(a.Call.Arguments)
		}
	case ActionReconnect:
		a.DelayMS, a.Attempt = uint64(c.delay_ms), uint32(c.attempt)
		a.Cursor = cursorFromC(c.cursor)
		a.Replay = Replay(c.replay)
	}
	return a, true, nil
}

// IsFinished says whether the turn is over: the stream ended (or failed,
// or was aborted) and every call has its result.
func (t *AgentTurn) IsFinished() bool {
	if t.use.enter() != nil {
		return false
	}
	defer t.use.leave()
	if t.ptr == nil {
		return false
	}
	var out C.bool
	maybeGC()
	C.ssefold_agent_turn_is_finished(t.ptr, &out)
	runtime.KeepAlive(t)
	return bool(out)
}

// IsStreamEnded says whether the stream is over (the turn may still wait
// for tools); bytes fed now are ignored.
func (t *AgentTurn) IsStreamEnded() bool {
	if t.use.enter() != nil {
		return false
	}
	defer t.use.leave()
	if t.ptr == nil {
		return false
	}
	var out C.bool
	maybeGC()
	C.ssefold_agent_turn_is_stream_ended(t.ptr, &out)
	runtime.KeepAlive(t)
	return bool(out)
}

// Failure is why the turn ended with an error (nil: it did not, or not
// yet), as an error: an *Error with the stream's code for a stream failure
// (errors.Is with ErrIncomplete, ErrProviderError, ...), with
// ResultToolTooManyCalls for too many calls; a *TurnFailure otherwise
// (transport, idle_timeout with its Stall and After, http with its
// Status).
func (t *AgentTurn) Failure() error {
	if err := t.use.enter(); err != nil {
		return err
	}
	defer t.use.leave()
	if t.ptr == nil {
		return ErrClosed
	}
	var f C.struct_ssefold_turn_failure
	maybeGC()
	r := C.ssefold_agent_turn_failure(t.ptr, &f)
	defer runtime.KeepAlive(t)
	if err := t.err(r); err != nil {
		return err
	}
	msg, _ := goString(f.message)
	switch f.kind {
	case C.SSEFOLD_TURN_FAILURE_KIND_NONE:
		return nil
	case C.SSEFOLD_TURN_FAILURE_KIND_STREAM, C.SSEFOLD_TURN_FAILURE_KIND_TOO_MANY_CALLS:
		return &Error{Code: Result(f.status), Message: msg}
	case C.SSEFOLD_TURN_FAILURE_KIND_TRANSPORT:
		return &TurnFailure{Kind: "transport", Message: msg, Retryable: bool(f.retryable)}
	case C.SSEFOLD_TURN_FAILURE_KIND_HTTP:
		return &TurnFailure{Kind: "http", Message: msg, Retryable: bool(f.retryable), Status: int(f.http_status)}
	}
	return &TurnFailure{Kind: "idle_timeout", Message: msg, Retryable: bool(f.retryable), Stall: StallKind(f.stall),
		After: msDuration(uint64(f.after_ms))}
}

// Outcome is the turn's result so far (final once IsFinished).
func (t *AgentTurn) Outcome() (TurnResult, error) {
	if err := t.use.enter(); err != nil {
		return TurnResult{}, err
	}
	defer t.use.leave()
	var res TurnResult
	if t.ptr == nil {
		return res, ErrClosed
	}
	var out C.struct_ssefold_str
	maybeGC()
	r := C.ssefold_agent_turn_outcome_json(t.ptr, &out)
	if err := t.err(r); err != nil {
		return res, err
	}
	doc := goBytes(out)
	runtime.KeepAlive(t)
	err := res.fromJSON(doc)
	return res, err
}
