package ssefold

/*
#include <stdlib.h>
#include "ssefold.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"runtime"
	"unsafe"
)

// Status codes of the tool scheduler (misuse; the call changed nothing).
const (
	ResultToolUnknownCallID       Result = 600
	ResultToolDuplicateCallID     Result = 601
	ResultToolAlreadyFinished     Result = 602
	ResultToolNotStarted          Result = 603
	ResultToolAddAfterDiscard     Result = 604
	ResultToolTooManyCalls        Result = 605
	ResultToolUnfinished          Result = 606
	ResultToolDiscarded           Result = 607
	ResultToolUnsupportedProvider Result = 608
	// ResultToolNotAwaitingApproval: no call waits for this approval id
	// (unknown, or already answered).
	ResultToolNotAwaitingApproval Result = 609
)

// Scheduler error kinds, matched with errors.Is against an *Error; their
// texts are the kind names shared with the Rust, C and Python APIs.
var (
	ErrUnknownCallID       = errors.New("ssefold: unknown_call_id")
	ErrDuplicateCallID     = errors.New("ssefold: duplicate_call_id")
	ErrAlreadyFinished     = errors.New("ssefold: already_finished")
	ErrNotStarted          = errors.New("ssefold: not_started")
	ErrAddAfterDiscard     = errors.New("ssefold: add_after_discard")
	ErrTooManyCalls        = errors.New("ssefold: too_many_calls")
	ErrUnfinished          = errors.New("ssefold: unfinished")
	ErrDiscarded           = errors.New("ssefold: discarded")
	ErrUnsupportedProvider = errors.New("ssefold: unsupported_provider")
	ErrNotAwaitingApproval = errors.New("ssefold: not_awaiting_approval")
)

var schedulerErrors = map[Result]error{
	ResultToolUnknownCallID:       ErrUnknownCallID,
	ResultToolDuplicateCallID:     ErrDuplicateCallID,
	ResultToolAlreadyFinished:     ErrAlreadyFinished,
	ResultToolNotStarted:          ErrNotStarted,
	ResultToolAddAfterDiscard:     ErrAddAfterDiscard,
	ResultToolTooManyCalls:        ErrTooManyCalls,
	ResultToolUnfinished:          ErrUnfinished,
	ResultToolDiscarded:           ErrDiscarded,
	ResultToolUnsupportedProvider: ErrUnsupportedProvider,
	ResultToolNotAwaitingApproval: ErrNotAwaitingApproval,
}

// isSchedulerError reports whether code is the scheduler error kind target.
func isSchedulerError(code Result, target error) bool {
	kind, ok := schedulerErrors[code]
	return ok && kind == target
}

// SchedulerConfig limits a ToolScheduler.
type SchedulerConfig struct {
	// MaxConcurrency: at most this many calls run at once (0: no limit).
	MaxConcurrency int
	// MaxCalls: at most this many calls in one turn (0: the default, 4096).
	MaxCalls int
}

// ToolOptions says how a tool is scheduled.
type ToolOptions struct {
	// Exclusive: not safe beside other tools (an edit, a shell command): it
	// runs alone, and later calls wait for it.
	Exclusive bool
	// AbortSiblingsOnError: its error result cancels the running siblings
	// and the calls still to run in this turn.
	AbortSiblingsOnError bool
	// Start says when a ready call may start (ToolStartAuto: as soon as it
	// is ready, or, for an Exclusive tool, once the turn ended normally).
	Start ToolStart
	// NeedsApproval: a ready call waits for the host's approval
	// (AgentTurn.Approve / Deny after its tool_approval_requested event).
	NeedsApproval bool
}

func (o ToolOptions) toC() C.struct_ssefold_tool_options {
	return C.struct_ssefold_tool_options{exclusive: C.bool(o.Exclusive),
		abort_siblings_on_error: C.bool(o.AbortSiblingsOnError), start: C.uint32_t(o.Start),
		needs_approval: C.bool(o.NeedsApproval)}
}

// ToolStart says when a ready call may start (wire names in String).
type ToolStart uint32

// Tool starts.
const (
	// ToolStartAuto: ToolStartReady for a tool that may run beside others,
	// ToolStartTurnEnd for an Exclusive one.
	ToolStartAuto ToolStart = 0
	// ToolStartReady: as soon as the call is ready, while the answer
	// streams.
	ToolStartReady ToolStart = 1
	// ToolStartTurnEnd: only once the answer ended with a normal or
	// tool-use stop; after another stop reason (length, content_filter,
	// refusal, ...) the call never runs (a ToolSkipped result). For a tool
	// with side effects.
	ToolStartTurnEnd ToolStart = 2
)

// String is the wire name: auto, ready, turn_end.
func (s ToolStart) String() string {
	switch s {
	case ToolStartAuto:
		return "auto"
	case ToolStartReady:
		return "ready"
	case ToolStartTurnEnd:
		return "turn_end"
	}
	return "unknown"
}

// ToolResultKind says where a result came from.
type ToolResultKind uint32

// Result kinds (wire names in String).
const (
	ToolRan          ToolResultKind = 0
	ToolUnknownTool  ToolResultKind = 1
	ToolInvalidInput ToolResultKind = 2
	ToolCancelled    ToolResultKind = 3
	ToolAborted      ToolResultKind = 4
	ToolDiscarded    ToolResultKind = 5
	// ToolIncomplete: the call's arguments were cut off (the turn ended
	// while they streamed); the tool never ran.
	ToolIncomplete ToolResultKind = 6
	// ToolUnnamed: the provider sent the call without a tool name; nothing
	// ran.
	ToolUnnamed ToolResultKind = 7
	// ToolSkipped: the answer stopped with a reason that lets no call start
	// (length, content_filter, ...); the call never ran.
	ToolSkipped ToolResultKind = 8
	// ToolDenied: the host denied the call (or its approval timed out); it
	// never ran.
	ToolDenied ToolResultKind = 9
)

// String is the wire name: ran, unknown_tool, invalid_input, cancelled,
// aborted, discarded, incomplete, unnamed, skipped, denied.
func (k ToolResultKind) String() string {
	switch k {
	case ToolRan:
		return "ran"
	case ToolUnknownTool:
		return "unknown_tool"
	case ToolInvalidInput:
		return "invalid_input"
	case ToolCancelled:
		return "cancelled"
	case ToolAborted:
		return "aborted"
	case ToolDiscarded:
		return "discarded"
	case ToolIncomplete:
		return "incomplete"
	case ToolUnnamed:
		return "unnamed"
	case ToolSkipped:
		return "skipped"
	case ToolDenied:
		return "denied"
	}
	return "unknown"
}

// toolResultKinds maps the wire names back to the kinds.
var toolResultKinds = func() map[string]ToolResultKind {
	m := map[string]ToolResultKind{}
	for k := ToolRan; k <= ToolDenied; k++ {
		m[k.String()] = k
	}
	return m
}()

// UnmarshalText reads a wire name (the JSON form of a result's kind).
func (k *ToolResultKind) UnmarshalText(b []byte) error {
	v, ok := toolResultKinds[string(b)]
	if !ok {
		return &Error{Code: ResultInvalidArgument, Message: "unknown tool result kind " + string(b)}
	}
	*k = v
	return nil
}

// ToolResult is the result of one tool call (copied into Go memory).
type ToolResult struct {
	// CallID is the provider's id of the call, or the synthesized one.
	CallID string `json:"call_id"`
	// IDSynthesized: CallID was synthesized (the provider sent none, or
	// repeated an earlier call's).
	IDSynthesized bool   `json:"id_synthesized"`
	Name          string `json:"name"`
	// Output is what the model is told: the tool's output, or the error text.
	Output  string         `json:"output"`
	IsError bool           `json:"is_error"`
	Kind    ToolResultKind `json:"kind"`
}

// ToolExecutionEvent is a tool event: Name is its wire name
// (tool_execution_started, tool_execution_update, tool_execution_finished,
// tool_approval_requested, tool_running_after_stop).
type ToolExecutionEvent struct {
	Name   string
	CallID string
	// ToolName is the tool's name (empty for an update).
	ToolName string
	// Text is an update's progress text.
	Text string
	// IsError: a finished call's result is an error.
	IsError bool
	// ApprovalID and Arguments (tool_approval_requested): the id to answer
	// with AgentTurn.Approve or Deny, and the call's arguments.
	ApprovalID string
	Arguments  string
	// StopReason (tool_running_after_stop): the answer stopped with this
	// reason, which lets no call start, while the call ran; the host may
	// cancel it (AgentTurn.CancelTool).
	StopReason string
	// JSON is the event's JSON form ({"event": name, "call_id", ...}).
	JSON json.RawMessage
}

// Tool event names.
const (
	ToolEventStarted           = "tool_execution_started"
	ToolEventUpdate            = "tool_execution_update"
	ToolEventFinished          = "tool_execution_finished"
	ToolEventApprovalRequested = "tool_approval_requested"
	ToolEventRunningAfterStop  = "tool_running_after_stop"
)

// Finished is what ToolScheduler.Finish did.
type Finished struct {
	// Recorded is false when the scheduler had already ended the call
	// (cancelled, aborted, discarded): the late result was dropped.
	Recorded bool
	// Cancel lists the running calls to cancel now.
	Cancel []string
}

// ToolScheduler decides which ready tool calls run now and hands their
// results back in call order. It never runs a tool: the host does (see
// RunTurn). Not safe for concurrent use; Close it when done.
type ToolScheduler struct {
	ptr *C.struct_ssefold_tool_scheduler
}

func defaultSchedulerConfig() C.struct_ssefold_tool_scheduler_config {
	maybeGC()
	return C.ssefold_tool_scheduler_config_default()
}

// NewToolScheduler creates a scheduler (cfg nil: the defaults).
func NewToolScheduler(cfg *SchedulerConfig) (*ToolScheduler, error) {
	c := defaultSchedulerConfig()
	if cfg != nil {
		if cfg.MaxConcurrency < 0 || cfg.MaxCalls < 0 {
			return nil, &Error{Code: ResultInvalidArgument, Message: "negative limit"}
		}
		c.max_concurrency = C.size_t(cfg.MaxConcurrency)
		if cfg.MaxCalls > 0 {
			c.max_calls = C.size_t(cfg.MaxCalls)
		}
	}
	var ptr *C.struct_ssefold_tool_scheduler
	maybeGC()
	if r := C.ssefold_tool_scheduler_new(&c, &ptr); r != 0 {
		return nil, &Error{Code: Result(r)}
	}
	return track(&ToolScheduler{ptr: ptr}, (*ToolScheduler).Close), nil
}

// Close frees the scheduler. It is idempotent.
func (s *ToolScheduler) Close() error {
	if s.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_tool_scheduler_free(s.ptr)
	s.ptr = nil
	untrack(s, nil)
	return nil
}

func (s *ToolScheduler) err(r C.ssefold_result) error {
	if r == 0 {
		return nil
	}
	var m C.struct_ssefold_str
	maybeGC()
	C.ssefold_tool_scheduler_last_error(s.ptr, &m)
	msg, _ := goString(m)
	return &Error{Code: Result(r), Message: msg}
}

func goIDs(ids *C.struct_ssefold_str, n C.size_t) []string {
	if n == 0 {
		return nil
	}
	views := unsafe.Slice(ids, int(n))
	out := make([]string, len(views))
	for i, v := range views {
		out[i], _ = goString(v)
	}
	return out
}

func goResults(r *C.struct_ssefold_tool_result, n C.size_t) []ToolResult {
	if n == 0 {
		return nil
	}
	views := unsafe.Slice(r, int(n))
	out := make([]ToolResult, len(views))
	for i, v := range views {
		out[i].CallID, _ = goString(v.call_id)
		out[i].Name, _ = goString(v.name)
		out[i].Output, _ = goString(v.output)
		out[i].IsError = bool(v.is_error)
		out[i].Kind = ToolResultKind(v.kind)
		out[i].IDSynthesized = bool(v.id_synthesized)
	}
	return out
}

// Add adds a ready tool call (input: its complete arguments as JSON text).
// Input that is not valid JSON gets an error result at once.
func (s *ToolScheduler) Add(callID, name, input string, opts ToolOptions) error {
	if s.ptr == nil {
		return ErrClosed
	}
	id, f1 := strView(callID, true)
	defer f1()
	n, f2 := strView(name, true)
	defer f2()
	in, f3 := strView(input, true)
	defer f3()
	maybeGC()
	r := C.ssefold_tool_scheduler_add(s.ptr, id, n, in, opts.toC())
	runtime.KeepAlive(s)
	return s.err(r)
}

// AddUnknown adds a call to a tool the host does not have: it gets the
// error result "No such tool available: NAME" at once.
func (s *ToolScheduler) AddUnknown(callID, name string) error {
	if s.ptr == nil {
		return ErrClosed
	}
	id, f1 := strView(callID, true)
	defer f1()
	n, f2 := strView(name, true)
	defer f2()
	maybeGC()
	r := C.ssefold_tool_scheduler_add_unknown(s.ptr, id, n)
	runtime.KeepAlive(s)
	return s.err(r)
}

// Startable returns the ids of the calls to start now, in call order.
func (s *ToolScheduler) Startable() ([]string, error) {
	if s.ptr == nil {
		return nil, ErrClosed
	}
	var ids *C.struct_ssefold_str
	var n C.size_t
	maybeGC()
	r := C.ssefold_tool_scheduler_startable(s.ptr, &ids, &n)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil {
		return nil, err
	}
	return goIDs(ids, n), nil
}

// Update reports progress text of a running call.
func (s *ToolScheduler) Update(callID, text string) error {
	if s.ptr == nil {
		return ErrClosed
	}
	id, f1 := strView(callID, true)
	defer f1()
	t, f2 := strView(text, true)
	defer f2()
	maybeGC()
	r := C.ssefold_tool_scheduler_update(s.ptr, id, t)
	runtime.KeepAlive(s)
	return s.err(r)
}

// Finish reports the host's result of a running call.
func (s *ToolScheduler) Finish(callID, output string, isError bool) (Finished, error) {
	if s.ptr == nil {
		return Finished{}, ErrClosed
	}
	id, f1 := strView(callID, true)
	defer f1()
	out, f2 := strView(output, true)
	defer f2()
	var recorded C.bool
	var ids *C.struct_ssefold_str
	var n C.size_t
	maybeGC()
	r := C.ssefold_tool_scheduler_finish(s.ptr, id, out, C.bool(isError), &recorded, &ids, &n)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil {
		return Finished{}, err
	}
	return Finished{Recorded: bool(recorded), Cancel: goIDs(ids, n)}, nil
}

// Results returns the results that can be handed back now (call order,
// each once).
func (s *ToolScheduler) Results() ([]ToolResult, error) {
	if s.ptr == nil {
		return nil, ErrClosed
	}
	var res *C.struct_ssefold_tool_result
	var n C.size_t
	maybeGC()
	r := C.ssefold_tool_scheduler_results(s.ptr, &res, &n)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil {
		return nil, err
	}
	return goResults(res, n), nil
}

// AllResults returns every call's result in call order (ErrUnfinished
// while a call has none, ErrDiscarded after Discard).
func (s *ToolScheduler) AllResults() ([]ToolResult, error) {
	if s.ptr == nil {
		return nil, ErrClosed
	}
	var res *C.struct_ssefold_tool_result
	var n C.size_t
	maybeGC()
	r := C.ssefold_tool_scheduler_all_results(s.ptr, &res, &n)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil {
		return nil, err
	}
	return goResults(res, n), nil
}

// Discard throws the turn's tool work away (a streaming fallback) and
// returns the running calls to cancel.
func (s *ToolScheduler) Discard() ([]string, error) {
	if s.ptr == nil {
		return nil, ErrClosed
	}
	var ids *C.struct_ssefold_str
	var n C.size_t
	maybeGC()
	r := C.ssefold_tool_scheduler_discard(s.ptr, &ids, &n)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil {
		return nil, err
	}
	return goIDs(ids, n), nil
}

// Abort gives every unfinished call the result "Aborted: REASON" and
// returns the running calls to cancel.
func (s *ToolScheduler) Abort(reason string) ([]string, error) {
	if s.ptr == nil {
		return nil, ErrClosed
	}
	why, f := strView(reason, true)
	defer f()
	var ids *C.struct_ssefold_str
	var n C.size_t
	maybeGC()
	r := C.ssefold_tool_scheduler_abort(s.ptr, why, &ids, &n)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil {
		return nil, err
	}
	return goIDs(ids, n), nil
}

// NextEvent returns the next tool_execution_* event (ok false: none).
func (s *ToolScheduler) NextEvent() (ev ToolExecutionEvent, ok bool, err error) {
	if s.ptr == nil {
		return ev, false, ErrClosed
	}
	var e C.struct_ssefold_tool_event
	var has C.bool
	maybeGC()
	r := C.ssefold_tool_scheduler_next_event(s.ptr, &e, &has)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil || !bool(has) {
		return ev, false, err
	}
	return toolEventFromC(&e), true, nil
}

// toolEventFromC copies a borrowed tool_execution_* event.
func toolEventFromC(e *C.struct_ssefold_tool_event) ToolExecutionEvent {
	var ev ToolExecutionEvent
	ev.Name, _ = goString(e.name)
	ev.CallID, _ = goString(e.call_id)
	ev.ToolName, _ = goString(e.tool_name)
	switch e.kind {
	case C.SSEFOLD_TOOL_EVENT_KIND_APPROVAL_REQUESTED:
		ev.ApprovalID, _ = goString(e.approval_id)
		ev.Arguments, _ = goString(e.text)
	case C.SSEFOLD_TOOL_EVENT_KIND_RUNNING_AFTER_STOP:
		ev.StopReason, _ = goString(e.text)
	default:
		ev.Text, _ = goString(e.text)
	}
	ev.IsError = bool(e.is_error)
	ev.JSON = goBytes(e.json)
	return ev
}

// ToolResults returns every result shaped for the next request of p, as
// JSON: Anthropic, one user message of tool_result blocks; OpenAI Chat, an
// array of tool messages; Responses, an array of function_call_output items.
func (s *ToolScheduler) ToolResults(p Provider) (json.RawMessage, error) {
	if s.ptr == nil {
		return nil, ErrClosed
	}
	var out C.struct_ssefold_str
	maybeGC()
	r := C.ssefold_tool_scheduler_tool_results(s.ptr, C.uint32_t(p), &out)
	defer runtime.KeepAlive(s)
	if err := s.err(r); err != nil {
		return nil, err
	}
	return goBytes(out), nil
}

// Status returns the number of calls added, the number running now, and
// whether every call has its result.
func (s *ToolScheduler) Status() (calls, running int, settled bool) {
	if s.ptr == nil {
		return 0, 0, true
	}
	var c, n C.size_t
	var done C.bool
	maybeGC()
	C.ssefold_tool_scheduler_status(s.ptr, &c, &n, &done)
	runtime.KeepAlive(s)
	return int(c), int(n), bool(done)
}
