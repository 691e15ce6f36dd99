package ssefold

/*
#include <stdlib.h>
#include "ssefold.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// RelayFormat is the browser protocol a Relay writes.
type RelayFormat uint32

const (
	// RelayAISDK is the Vercel AI SDK's UI message stream protocol (v1),
	// read by useChat.
	RelayAISDK RelayFormat = 0
	// RelayCatalog is the agent event catalog (text-delta, tool-call,
	// tool-result, approval-required, step-completed, log, finish, error).
	RelayCatalog RelayFormat = 1
)

// Status codes of relays (700-799).
const (
	ResultRelayFinished       Result = 700
	ResultRelayNoStream       Result = 701
	ResultRelayReplayTooOld   Result = 702
	ResultRelayUnknownEventID Result = 703
	ResultRelayInvalidEvent   Result = 704
)

// Relay errors, matched with errors.Is against an *Error (a pushed event
// that is not a normalized event matches ErrInvalidInput).
var (
	// ErrRelayFinished: Finish was called; nothing more can be sent.
	ErrRelayFinished = errors.New("ssefold: relay finished")
	// ErrNoStream: Feed on a relay made without a provider stream.
	ErrNoStream = errors.New("ssefold: relay has no stream")
	// ErrReplayTooOld: the Last-Event-ID is no longer held; reload the message.
	ErrReplayTooOld = errors.New("ssefold: replay too old")
	// ErrUnknownEventID: the Last-Event-ID was never sent by this relay.
	ErrUnknownEventID = errors.New("ssefold: unknown event id")
)

// relayErrorIs maps the relay codes onto their sentinels.
func relayErrorIs(code Result, target error) bool {
	switch target {
	case ErrRelayFinished:
		return code == ResultRelayFinished
	case ErrNoStream:
		return code == ResultRelayNoStream
	case ErrReplayTooOld:
		return code == ResultRelayReplayTooOld
	case ErrUnknownEventID:
		return code == ResultRelayUnknownEventID
	case ErrInvalidInput:
		return code == ResultRelayInvalidEvent
	}
	return false
}

// RelayOptions are a relay's settings; the zero value is the AI SDK format
// with the defaults.
type RelayOptions struct {
	// Format is the protocol written.
	Format RelayFormat
	// ReplayBytes is how many bytes of recent frames ReplayAfter can serve
	// (0: the default, 1 MiB; negative: none).
	ReplayBytes int
	// KeepAlive is the idle time after which KeepAlive sends a comment
	// (0: the default, 15 s).
	KeepAlive time.Duration
	// ToolInputCoalesceBytes (AI SDK format): a tool call's argument
	// deltas are held back and written as one tool-input-delta once this
	// many bytes are held (0: the default, 4096; negative: every delta as
	// it came). The browser parses a call's whole input again on every
	// delta; held text is written before any other frame, at the call's
	// end, and by Tick.
	ToolInputCoalesceBytes int
	// ToolInputCoalesce is the longest argument text is held back, by the
	// clock given to Tick (0: the default, 50 ms; negative: every Tick
	// writes what is held).
	ToolInputCoalesce time.Duration
}

// RelayHeader is one HTTP response header the browser side needs.
type RelayHeader struct {
	Name, Value string
}

// Relay turns normalized events (or provider bytes) into the browser's SSE
// bytes, plus the events the host injects (tool results, approvals, logs,
// errors, steps, the finish). Every method returns a copy of the bytes to
// send now. Not safe for concurrent use: a call that overlaps another gets
// ErrBadState (the bytes a call returns point into the relay until they are
// copied, so the claim covers the copy, not only the C call).
type Relay struct {
	ptr *C.struct_ssefold_relay
	use inUse
}

// NewRelay creates a relay of pushed events (Push, PushJSON); opts may be nil.
func NewRelay(opts *RelayOptions) (*Relay, error) {
	return newRelay(opts, nil)
}

// NewRelayWithStream creates a relay that folds provider's bytes itself
// (Feed, EndOfInput), with the default stream limits; opts may be nil.
func NewRelayWithStream(provider Provider, opts *RelayOptions) (*Relay, error) {
	return newRelay(opts, &provider)
}

func newRelay(opts *RelayOptions, provider *Provider) (*Relay, error) {
	var o RelayOptions
	if opts != nil {
		o = *opts
	}
	var cfg C.struct_ssefold_relay_config
	maybeGC()
	if r := C.ssefold_relay_config_default(C.uint32_t(o.Format), &cfg); r != 0 {
		return nil, &Error{Code: Result(r), Message: "unknown relay format"}
	}
	if o.ReplayBytes > 0 {
		cfg.replay_bytes = C.size_t(o.ReplayBytes)
	} else if o.ReplayBytes < 0 {
		cfg.replay_bytes = 0
	}
	if o.KeepAlive > 0 {
		cfg.keep_alive_ms = C.uint64_t(o.KeepAlive.Milliseconds())
	}
	if o.ToolInputCoalesceBytes > 0 {
		cfg.tool_input_coalesce_bytes = C.size_t(o.ToolInputCoalesceBytes)
	} else if o.ToolInputCoalesceBytes < 0 {
		cfg.tool_input_coalesce_bytes = 0
	}
	if o.ToolInputCoalesce > 0 {
		cfg.tool_input_coalesce_ms = C.uint64_t(o.ToolInputCoalesce.Milliseconds())
	} else if o.ToolInputCoalesce < 0 {
		cfg.tool_input_coalesce_ms = 0
	}
	var ptr *C.struct_ssefold_relay
	if provider == nil {
		maybeGC()
		if r := C.ssefold_relay_new(&cfg, &ptr); r != 0 {
			return nil, &Error{Code: Result(r)}
		}
	} else {
		maybeGC()
		if r := C.ssefold_relay_new_with_stream(&cfg, C.uint32_t(*provider), nil, &ptr); r != 0 {
			return nil, &Error{Code: Result(r)}
		}
	}
	return track(&Relay{ptr: ptr}, (*Relay).Close), nil
}

// Close frees the relay. It is idempotent.
func (rl *Relay) Close() error {
	if err := rl.use.enter(); err != nil {
		return err
	}
	defer rl.use.leave()
	if rl.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_relay_free(rl.ptr)
	rl.ptr = nil
	untrack(rl, nil)
	return nil
}

func (rl *Relay) err(r C.ssefold_result) error {
	if r == 0 {
		return nil
	}
	var m C.struct_ssefold_str
	maybeGC()
	C.ssefold_relay_last_error(rl.ptr, &m)
	msg, _ := goString(m)
	return &Error{Code: Result(r), Message: msg}
}

// out copies the bytes of a successful call.
func (rl *Relay) out(r C.ssefold_result, b C.struct_ssefold_bytes) ([]byte, error) {
	if err := rl.err(r); err != nil {
		runtime.KeepAlive(rl)
		return nil, err
	}
	var data []byte
	if b.len > 0 {
		data = C.GoBytes(unsafe.Pointer(b.ptr), C.int(b.len))
	}
	runtime.KeepAlive(rl)
	return data, nil
}

// streamResult returns the bytes of Feed / EndOfInput with the provider
// stream's failure, if any, as an *Error (the bytes then hold its error
// event: send them).
func (rl *Relay) streamResult(r C.ssefold_result, b C.struct_ssefold_bytes, status C.ssefold_result) ([]byte, error) {
	data, err := rl.out(r, b)
	if err != nil || status == 0 {
		return data, err
	}
	return data, &Error{Code: Result(status), Message: "the provider stream failed; the relay sent an error event"}
}

// Feed feeds provider body bytes through the relay's stream and returns the
// browser bytes they produced. When the provider stream fails on them, the
// bytes (an error event included) come with the stream's *Error: send them,
// then Finish.
func (rl *Relay) Feed(chunk []byte) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	var b C.struct_ssefold_bytes
	var status C.ssefold_result
	p, n := bytesPtr(chunk)
	maybeGC()
	r := C.ssefold_relay_feed(rl.ptr, p, n, &b, &status)
	runtime.KeepAlive(chunk)
	return rl.streamResult(r, b, status)
}

// EndOfInput ends the provider body: the stream's last events, and an error
// matching ErrIncomplete (with the error event in the bytes) when the
// terminal event never came.
func (rl *Relay) EndOfInput() ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	var b C.struct_ssefold_bytes
	var status C.ssefold_result
	maybeGC()
	r := C.ssefold_relay_end_of_input(rl.ptr, &b, &status)
	return rl.streamResult(r, b, status)
}

// PushJSON relays one normalized event in its JSON form ({"event": name,
// ...}); its bytes are often empty. A malformed event matches
// ErrInvalidInput.
func (rl *Relay) PushJSON(event []byte) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	v, free := strView(string(event), true)
	defer free()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_push_json(rl.ptr, v, &b)
	return rl.out(r, b)
}

// Push relays an event of a Stream created with StreamOptions.EventJSON.
func (rl *Relay) Push(ev StreamEvent) ([]byte, error) {
	if len(ev.JSON) == 0 {
		return nil, &Error{Code: ResultInvalidArgument, Message: "the event has no JSON form: create the Stream with EventJSON"}
	}
	return rl.PushJSON(ev.JSON)
}

// jsonView marshals v (a json.RawMessage passes through) into a C view.
func jsonView(v any) (C.struct_ssefold_str, func(), error) {
	text, err := json.Marshal(v)
	if err != nil {
		return C.struct_ssefold_str{}, func() {}, err
	}
	view, free := strView(string(text), true)
	return view, free, nil
}

// ToolResult relays a tool's result: output is marshaled as JSON; isError
// marks a failed tool; duration (negative: unknown) goes into the catalog.
func (rl *Relay) ToolResult(callID string, output any, isError bool, duration time.Duration) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	out, freeOut, err := jsonView(output)
	if err != nil {
		return nil, err
	}
	defer freeOut()
	id, freeID := strView(callID, true)
	defer freeID()
	var ms *C.uint64_t
	if duration >= 0 {
		ms = (*C.uint64_t)(C.malloc(8))
		defer C.free(unsafe.Pointer(ms))
		*ms = C.uint64_t(duration.Milliseconds())
	}
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_tool_result(rl.ptr, id, out, C.bool(isError), ms, &b)
	return rl.out(r, b)
}

// ApprovalRequired relays that a tool call waits for the user's approval
// (catalog approval-required {approvalId, toolName, input, message}):
// message is the sentence the user reads ("": "Allow NAME to run?").
func (rl *Relay) ApprovalRequired(approvalID, callID, name string, input any, message string) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	in, freeIn, err := jsonView(input)
	if err != nil {
		return nil, err
	}
	defer freeIn()
	a, f1 := strView(approvalID, true)
	defer f1()
	c, f2 := strView(callID, true)
	defer f2()
	n, f3 := strView(name, true)
	defer f3()
	m, f4 := strView(message, true)
	defer f4()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_approval_required(rl.ptr, a, c, n, in, m, &b)
	return rl.out(r, b)
}

// Log relays a log line for the UI (catalog log {level, message,
// metadata?, timestamp, traceId}; a transient data-log in the AI SDK
// format): level is info, warn or error; metadata (nil: left out) is
// marshaled as JSON; at is the host's time (written as ISO 8601 UTC with
// milliseconds) and traceID its trace.
func (rl *Relay) Log(level, message string, metadata any, at time.Time, traceID string) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	meta, freeMeta := C.struct_ssefold_str{}, func() {}
	if metadata != nil {
		var err error
		if meta, freeMeta, err = jsonView(metadata); err != nil {
			return nil, err
		}
	}
	defer freeMeta()
	l, f1 := strView(level, true)
	defer f1()
	m, f2 := strView(message, true)
	defer f2()
	ts, f3 := strView(at.UTC().Format("2006-01-02T15:04:05.000Z"), true)
	defer f3()
	tr, f4 := strView(traceID, true)
	defer f4()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_log(rl.ptr, l, m, meta, ts, tr, &b)
	return rl.out(r, b)
}

// ErrorEvent relays an error for the UI (catalog error {error, code?,
// recoverable}): code a machine-readable code ("": left out);
// recoverable: the agent goes on.
func (rl *Relay) ErrorEvent(message, code string, recoverable bool) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	m, f := strView(message, true)
	defer f()
	c, fc := strView(code, true)
	defer fc()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_error(rl.ptr, m, c, C.bool(recoverable), &b)
	return rl.out(r, b)
}

// MessageMetadata sends the host's metadata of the answer (marshalled to a
// JSON object, e.g. a turn's timings): AI SDK message-metadata, which
// useChat merges into the message's metadata; the catalog writes nothing.
func (rl *Relay) MessageMetadata(metadata any) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	view, free, err := jsonView(metadata)
	if err != nil {
		return nil, err
	}
	defer free()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_message_metadata(rl.ptr, view, &b)
	return rl.out(r, b)
}

// FinishStep closes the open step (after the tools of a turn ran).
func (rl *Relay) FinishStep() ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_finish_step(rl.ptr, &b)
	return rl.out(r, b)
}

// Abort ends a run the host aborted (the user pressed stop): the relay's
// provider stream, if any, is aborted (its open parts end), then the AI SDK
// format's abort chunk instead of finish (the catalog's finish says
// cancelled). Later calls fail with ErrRelayFinished.
func (rl *Relay) Abort() ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_abort(rl.ptr, &b)
	return rl.out(r, b)
}

// Finish ends the answer; usage (nil: the usage folded from the stream) is
// marshaled as JSON. Later calls fail with ErrRelayFinished.
func (rl *Relay) Finish(usage any) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	u := C.struct_ssefold_str{}
	if usage != nil {
		view, free, err := jsonView(usage)
		if err != nil {
			return nil, err
		}
		defer free()
		u = view
	}
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_finish(rl.ptr, u, &b)
	return rl.out(r, b)
}

// KeepAlive returns a keep-alive comment when nothing was sent for the
// configured idle time by the host's clock now (empty otherwise). Call it
// on a ticker.
func (rl *Relay) KeepAlive(now time.Time) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_keep_alive(rl.ptr, C.uint64_t(now.UnixMilli()), &b)
	return rl.out(r, b)
}

// Tick is the host's timer for held-back tool input
// (ToolInputCoalesceBytes): the argument text held for ToolInputCoalesce by
// the host's clock now (the one given to KeepAlive); empty when nothing is
// due. Call it on a ticker every ToolInputCoalesce while a stream is relayed.
func (rl *Relay) Tick(now time.Time) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_tick(rl.ptr, C.uint64_t(now.UnixMilli()), &b)
	return rl.out(r, b)
}

// Flush returns the argument text held back, whatever its age (empty when
// nothing is held).
func (rl *Relay) Flush() ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_flush(rl.ptr, &b)
	return rl.out(r, b)
}

// ReplayAfter returns what a browser reconnecting with Last-Event-ID
// missed; errors match ErrReplayTooOld or ErrUnknownEventID.
func (rl *Relay) ReplayAfter(lastEventID string) ([]byte, error) {
	if rl.ptr == nil {
		return nil, ErrClosed
	}
	if err := rl.use.enter(); err != nil {
		return nil, err
	}
	defer rl.use.leave()
	v, f := strView(lastEventID, true)
	defer f()
	var b C.struct_ssefold_bytes
	maybeGC()
	r := C.ssefold_relay_replay_after(rl.ptr, v, &b)
	return rl.out(r, b)
}

// RelayFrame is one frame of a relay call's output: its SSE event id and
// its bytes (the "id: N" line included).
type RelayFrame struct {
	ID    uint64
	Bytes []byte
}

// Frames returns the frames of the last call's output, oldest first
// (copies): joined, they are that output without Trailer. A host that
// shares the stream with other processes appends each to its replay store
// under its id (bindings/go/redisstore). Empty after ReplayAfter and
// KeepAlive, which write no frame.
func (rl *Relay) Frames() []RelayFrame {
	if rl.ptr == nil {
		return nil
	}
	var n C.size_t
	maybeGC()
	C.ssefold_relay_frame_count(rl.ptr, &n)
	out := make([]RelayFrame, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var id C.uint64_t
		var b C.struct_ssefold_bytes
		maybeGC()
		r := C.ssefold_relay_frame(rl.ptr, i, &id, &b)
		if r != 0 {
			break
		}
		out = append(out, RelayFrame{ID: uint64(id), Bytes: C.GoBytes(unsafe.Pointer(b.ptr), C.int(b.len))})
	}
	runtime.KeepAlive(rl)
	return out
}

// Trailer returns what a reader sends after the stream's last frame, part
// of no frame: "data: [DONE]\n\n" in the AI SDK format, nothing in the
// catalog (its finish event is a frame). A replay store keeps it with its
// finished marker.
func (rl *Relay) Trailer() []byte {
	if rl.ptr == nil {
		return nil
	}
	var b C.struct_ssefold_bytes
	maybeGC()
	C.ssefold_relay_trailer(rl.ptr, &b)
	var out []byte
	if b.len > 0 {
		out = C.GoBytes(unsafe.Pointer(b.ptr), C.int(b.len))
	}
	runtime.KeepAlive(rl)
	return out
}

// ResumePoint is where a replay store resumes for a browser's
// Last-Event-ID: the id after which its frames are sent, given the ids it
// holds, oldest through newest (both 0: it holds none, as when the stream
// expired). Errors match ErrUnknownEventID (not a number, or newer than
// newest) or ErrReplayTooOld (the frames after it are no longer held), as
// Relay.ReplayAfter's do.
func ResumePoint(lastEventID string, oldest, newest uint64) (uint64, error) {
	v, f := strView(lastEventID, true)
	defer f()
	var after C.uint64_t
	maybeGC()
	r := C.ssefold_relay_resume_point(v, C.uint64_t(oldest), C.uint64_t(newest), &after)
	if r != 0 {
		return 0, newError(r, fmt.Sprintf("Last-Event-ID %q, held %d..%d", lastEventID, oldest, newest))
	}
	return uint64(after), nil
}

// CatalogEventNames returns every event name the catalog format sends: a
// browser's EventSource needs a listener for each.
func CatalogEventNames() []string {
	var names []string
	for {
		var name C.struct_ssefold_str
		maybeGC()
		r := C.ssefold_relay_catalog_event_name(C.size_t(len(names)), &name)
		if r != 0 {
			return names
		}
		names = append(names, C.GoStringN(name.ptr, C.int(name.len)))
	}
}

// Headers returns the HTTP response headers the browser side needs.
func (rl *Relay) Headers() []RelayHeader {
	if rl.ptr == nil {
		return nil
	}
	var n C.size_t
	maybeGC()
	C.ssefold_relay_header_count(rl.ptr, &n)
	out := make([]RelayHeader, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var name, value C.struct_ssefold_str
		maybeGC()
		C.ssefold_relay_header(rl.ptr, i, &name, &value)
		k, _ := goString(name)
		v, _ := goString(value)
		out = append(out, RelayHeader{Name: k, Value: v})
	}
	runtime.KeepAlive(rl)
	return out
}

// LastEventID is the id of the last event sent (0 before the first), and
// finished whether Finish was called.
func (rl *Relay) LastEventID() (id uint64, finished bool) {
	if rl.ptr == nil {
		return 0, false
	}
	var last C.uint64_t
	var done C.bool
	maybeGC()
	C.ssefold_relay_status(rl.ptr, &last, &done)
	runtime.KeepAlive(rl)
	return uint64(last), bool(done)
}
