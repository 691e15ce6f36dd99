package ssefold

/*
#include "ssefold_go.h"
ssefold_result ssefold_go_stream_set_callback(struct ssefold_stream *s, uintptr_t h, bool event_json);
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Provider is the dialect a Stream folds.
type Provider uint32

// Providers.
const (
	// Auto detects the dialect from the first event.
	Auto Provider = 0
	// Anthropic is the Anthropic Messages API.
	Anthropic Provider = 1
	// OpenAIChat is OpenAI Chat Completions (and compatible providers).
	OpenAIChat Provider = 2
	// OpenAIResponses is the OpenAI Responses API.
	OpenAIResponses Provider = 3
	// Gemini is the Google Gemini API and Vertex AI.
	Gemini Provider = 4
	// Ollama is Ollama's native chat API (newline-delimited JSON).
	Ollama Provider = 5
	// Bedrock is Amazon Bedrock InvokeModelWithResponseStream with an
	// Anthropic model (AWS event-stream framing; the Anthropic fold).
	Bedrock Provider = 6
	// BedrockConverse is Amazon Bedrock ConverseStream (AWS event-stream
	// framing; the Converse response fold).
	BedrockConverse Provider = 7
)

// String is the provider's name.
func (p Provider) String() string {
	switch p {
	case Auto:
		return "auto"
	case Anthropic:
		return "anthropic"
	case OpenAIChat:
		return "openai_chat"
	case OpenAIResponses:
		return "openai_responses"
	case Gemini:
		return "gemini"
	case Ollama:
		return "ollama"
	case Bedrock:
		return "bedrock"
	case BedrockConverse:
		return "bedrock_converse"
	}
	return "unknown"
}

// EventKind is the kind of a normalized event.
type EventKind uint32

// Normalized event kinds (their wire names are in StreamEvent.Name).
const (
	KindMessageStart  EventKind = 0
	KindPartStart     EventKind = 1
	KindTextDelta     EventKind = 2
	KindToolArgsDelta EventKind = 3
	KindToolArgsPath  EventKind = 4
	KindPartMetadata  EventKind = 5
	KindPartEnd       EventKind = 6
	KindUsage         EventKind = 7
	KindStopReason    EventKind = 8
	KindTurnEnd       EventKind = 9
	KindError         EventKind = 10
	KindWarning       EventKind = 11
	KindUnknown       EventKind = 12
	KindTurnReset     EventKind = 13
	KindMediaDelta    EventKind = 14
)

// StreamEvent is one normalized event (copied into Go memory). The small
// texts and path events of the events a call returns share chunks of a few
// KiB (an event kept keeps its chunks alive); each json.RawMessage has a
// capacity equal to its length, so appending to one never writes into
// another.
type StreamEvent struct {
	// Kind is what happened.
	Kind EventKind
	// Name is the wire name ("text_delta", …).
	Name string
	// Part is the part id (0, 1, 2… in stream order), -1 for events
	// without a part.
	Part int
	// Text: the text of a text delta, the JSON fragment of a tool-args
	// delta, the stop reason, or a warning/error message.
	Text string
	// JSON is the event's JSON form ({"event": name, ...}) when the stream
	// was created with StreamOptions.EventJSON. A path event's is O(1):
	// {"type", "depth", "key" | "index" (the last segment), then "kind" |
	// "text" | "value"}, a closing container's kind and not its value.
	JSON json.RawMessage
	// PathEvent is the typed path event of a KindToolArgsPath event (nil
	// otherwise), O(1) whatever the depth.
	PathEvent *StreamPathEvent
	// MimeType is a KindMediaDelta event's MIME type ("audio/pcm",
	// "image/png", …).
	MimeType string
	// Data is a KindMediaDelta event's bytes, appended to the media part
	// (decoded from the provider's base64).
	Data []byte
	// Outcome is how a KindPartEnd event's part ended (OutcomeNone on
	// every other event).
	Outcome PartOutcome
	// ToolCall is the call of a tool_call part, provider-neutral, on its
	// KindPartStart (what the provider sent with the start: ID and Name
	// empty when not known yet, no Arguments) and its KindPartEnd (the
	// whole call); nil on every other event. A call is ready when its
	// part_end's outcome is complete (see ReadyToolCall).
	ToolCall *ToolCall
	// content is the core's is_content of the event (see IsContent).
	content bool
}

// IsContent says whether the event is content, as the core decides it
// (text, arguments, media, a part starting or ending, part metadata, usage,
// the stop reason, the end of the turn; not message_start, warnings,
// errors, unknown events such as pings, or turn_reset): what a host reports
// to Reconnector.OnContent. A stream that sends only other events is
// stalled (ReconnectPolicy.FirstContentTimeout, ContentTimeout).
func (e *StreamEvent) IsContent() bool { return e.content }

// ReadyToolCall is the call of a part_end that makes a tool call ready
// (kind tool_call, outcome complete: its arguments are complete, valid
// JSON); nil for every other event.
func (e *StreamEvent) ReadyToolCall() *ToolCall {
	if e.Kind == KindPartEnd && e.Outcome == OutcomeComplete {
		return e.ToolCall
	}
	return nil
}

// PartOutcome is how a part ended (a part_end's outcome; wire names in
// String).
type PartOutcome uint32

// Part outcomes.
const (
	// OutcomeNone: the event is no part_end.
	OutcomeNone PartOutcome = 0
	// OutcomeComplete: the part is complete; a tool call is ready.
	OutcomeComplete PartOutcome = 1
	// OutcomeInvalidArguments: a tool call whose arguments are not valid
	// JSON (the event's JSON form has error and raw).
	OutcomeInvalidArguments PartOutcome = 2
	// OutcomeIncomplete: the stream ended (or the turn was cut) while the
	// part was open.
	OutcomeIncomplete PartOutcome = 3
)

// String is the wire name: complete, invalid_arguments, incomplete ("" for
// OutcomeNone).
func (o PartOutcome) String() string {
	switch o {
	case OutcomeComplete:
		return "complete"
	case OutcomeInvalidArguments:
		return "invalid_arguments"
	case OutcomeIncomplete:
		return "incomplete"
	}
	return ""
}

// ToolInputFormat says how a tool call's input is written (wire names
// "json", "text").
type ToolInputFormat uint32

// Input formats.
const (
	// ToolInputJSON: the arguments are JSON text (every function / tool call).
	ToolInputJSON ToolInputFormat = 0
	// ToolInputText: free text (an OpenAI Responses custom tool's input, the
	// output of a grammar, not JSON).
	ToolInputText ToolInputFormat = 1
)

// String is the wire name: json or text.
func (f ToolInputFormat) String() string {
	if f == ToolInputText {
		return "text"
	}
	return "json"
}

// StreamPathEvent is a path event of a tool call's arguments: the depth and
// the last segment; Path builds the full path on demand (consecutive events
// share their segments, so each event costs O(1) however deep).
type StreamPathEvent struct {
	Kind PathEventKind
	// Depth is the number of path segments (0: the root value).
	Depth int
	// Last is the last path segment (zero at the root).
	Last PathSegment
	// Container: ContainerStart, and a ValueComplete with IsContainer.
	Container   ContainerKind
	IsContainer bool
	// Text: the new text of a StringAppend.
	Text string
	// Value: the completed value as JSON (ValueComplete): a scalar's compact
	// JSON, a container's text as received.
	Value json.RawMessage
	// parent holds the segments before Last (nil at depth 0 and 1).
	parent *pathNode
}

// pathNode is one segment of a path shared between events.
type pathNode struct {
	parent *pathNode
	seg    PathSegment
}

// Path is the path from the root (O(Depth), computed on each call).
func (e *StreamPathEvent) Path() []PathSegment {
	return pathOf(e.Depth, e.Last, e.parent)
}

// pathOf is the path of depth segments ending in last, the ones before it
// read up the parent chain (an empty, non-nil path at depth 0).
func pathOf(depth int, last PathSegment, parent *pathNode) []PathSegment {
	p := make([]PathSegment, depth)
	if depth == 0 {
		return p
	}
	p[depth-1] = last
	i := depth - 2
	for n := parent; n != nil && i >= 0; n = n.parent {
		p[i] = n.seg
		i--
	}
	return p
}

// StreamOptions configures a Stream. A zero field is not set: the core's
// default (Go has no optional fields, so Go cannot ask for a limit of 0,
// which the core refuses for every limit but MaxPathEventsPerFeed). A set
// limit means its number and the core checks its range (NewStream returns
// an *Error with ResultInvalidArgument naming the field); a negative one
// cannot be converted and is refused the same way. The names are the core's
// (ssefold::config::STREAM_LIMITS) in Go case.
type StreamOptions struct {
	// NoEvents folds the message without reporting events (fastest).
	NoEvents bool
	// EventJSON fills StreamEvent.JSON (one serialization per event).
	EventJSON bool
	// SSE holds the SSE decoder's limits.
	SSE              DecoderConfig
	MaxParts         int
	MaxToolArgsBytes int
	MaxTextBytes     int
	MaxChoices       int
	// ToolInputTrailingStrings (Anthropic) keeps an unfinished trailing
	// string in a partial tool input in the folded message (jiter
	// partial_mode="trailing-strings", what the official SDK does under
	// anthropic-beta: fine-grained-tool-streaming-2025-05-14); default:
	// dropped with its key. It never makes a tool call ready.
	ToolInputTrailingStrings bool
	// MaxMemoryBytes (C: max_memory_bytes; default 128 MiB) bounds the
	// bytes the stream holds: everything it keeps (texts, tool arguments,
	// media and every member and value of the fold). Over it: a
	// *StreamError with code ResultStreamLimitExceeded, everything folded
	// so far kept. A tool input whose tree would cost more than a
	// sixteenth of it stays text: Message writes it as it came.
	MaxMemoryBytes int
	// EventStream holds the AWS event-stream framing's limits (Bedrock).
	EventStream EventStreamLimits
	// MaxPathEventsPerFeed (C: max_path_events_per_feed; default 16,384)
	// bounds the KindToolArgsPath events one Feed or Finish returns:
	// arguments that arrive whole in one delta (Gemini and Ollama always,
	// OpenAI-compatible servers often) give one per JSON token, and past the
	// limit the rest of that call's are dropped with one warning
	// (path_events_dropped); the KindToolArgsDelta text and the message stay
	// whole. Negative: no path events at all (C 0).
	MaxPathEventsPerFeed int
}

// EventStreamLimits bounds the AWS event-stream framing of Bedrock bodies
// (C: ssefold_event_stream_limits); zero takes the default. A message over
// them is a *StreamError with code ResultStreamEventStream.
type EventStreamLimits struct {
	// MaxMessageLen is the longest message accepted, in bytes (default
	// 16 MiB, the AWS limit).
	MaxMessageLen int
	// MaxHeadersLen is the longest headers section accepted, in bytes
	// (default 128 KiB, the AWS limit).
	MaxHeadersLen int
}

type streamState struct {
	events   []StreamEvent
	panicked any
	names    map[string]string
	// paths holds each tool call's current path.
	paths map[int]*pathStack
	arena eventArena
	// lastLen is how many events the previous call returned (the next
	// call's first guess).
	lastLen int
	// pathLimit is the stream's max_path_events_per_feed; pathCount counts
	// the path events of the running call. A call that reached the limit
	// may have dropped path events (the core warns once): the paths are
	// then read again from C at each part's next path event (pathGen).
	pathLimit, pathCount int
	pathGen              uint64
}

// pathStack is a tool call's current path: nodes for the segments that are
// parents of later events, then the last event's segment, made a node only
// when an event below it comes (a scalar or an empty container costs none).
type pathStack struct {
	nodes     []*pathNode // nodes[i] is the segment at depth i+1
	last      PathSegment
	lastDepth int
	gen       uint64 // the streamState.pathGen the stack follows
}

// callEnded is called when a call into the stream returned: the arena's
// strings are the caller's, and a call that reached the path-event limit
// makes every part's path stale.
func (s *streamState) callEnded() {
	s.arena.returned()
	if s.pathCount > 0 && s.pathCount >= s.pathLimit {
		s.pathGen++
	}
	s.pathCount = 0
}

// resync rebuilds the nodes of the segments before depth d from the C
// event's path (O(d), once per part after a call that dropped path events).
func (st *pathStack) resync(ev *C.struct_ssefold_stream_event, d int, key func(C.struct_ssefold_str) string) {
	clear(st.nodes)
	st.nodes = st.nodes[:0]
	var up *pathNode
	for i := 0; i < d-1; i++ {
		var seg C.struct_ssefold_path_segment
		maybeGC()
		C.ssefold_stream_event_path(ev, C.size_t(i), &seg)
		n := &pathNode{parent: up}
		if seg.key.ptr != nil {
			n.seg.Key = key(seg.key)
		} else {
			n.seg.IsIndex, n.seg.Index = true, int(seg.index)
		}
		st.nodes = append(st.nodes, n)
		up = n
	}
	// parent(d) returns the last of these d-1 nodes.
	st.lastDepth = -1
}

// parent returns the node of the segments before depth d (d >= 1).
func (st *pathStack) parent(d int) *pathNode {
	if st.lastDepth == d-1 && len(st.nodes) == d-2 {
		var up *pathNode
		if len(st.nodes) > 0 {
			up = st.nodes[len(st.nodes)-1]
		}
		st.nodes = append(st.nodes, &pathNode{parent: up, seg: st.last})
	}
	if len(st.nodes) > d-1 {
		clear(st.nodes[d-1:])
		st.nodes = st.nodes[:d-1]
	}
	if len(st.nodes) == 0 {
		return nil
	}
	return st.nodes[len(st.nodes)-1]
}

// pathEvent converts a C path event, keeping part's path: the new path is
// the old one cut to depth-1 segments plus the last one.
func (s *streamState) pathEvent(part int, ev *C.struct_ssefold_stream_event) *StreamPathEvent {
	p := &ev.path_event
	s.pathCount++
	e := s.arena.pathEvent()
	e.Kind, e.Depth, e.Container = PathEventKind(p.kind), int(p.depth), ContainerKind(p.container)
	e.IsContainer = bool(p.is_container)
	switch {
	case e.Kind == StringAppend:
		e.Text = s.arena.str(p.text)
	case e.Kind == ValueComplete && e.IsContainer:
		s.arena.containerValue(part, e, p.text)
	case e.Kind == ValueComplete:
		e.Value = s.arena.raw(p.text)
	}
	if s.paths == nil {
		s.paths = map[int]*pathStack{}
	}
	st := s.paths[part]
	if st == nil {
		st = &pathStack{gen: s.pathGen}
		s.paths[part] = st
	}
	if st.gen != s.pathGen {
		// Path events of this part may have been dropped since its last one.
		st.gen = s.pathGen
		if e.Depth >= 2 {
			st.resync(ev, e.Depth, s.arena.str)
		}
	}
	if e.Depth > 0 {
		if p.last.key.ptr != nil {
			e.Last.Key = s.arena.str(p.last.key)
		} else {
			e.Last.IsIndex, e.Last.Index = true, int(p.last.index)
		}
		e.parent = st.parent(e.Depth)
	} else {
		clear(st.nodes)
		st.nodes = st.nodes[:0]
	}
	st.last, st.lastDepth = e.Last, e.Depth
	return e
}

// add appends an event, the buffer sized from the previous call's count.
func (s *streamState) add(e StreamEvent) {
	if s.events == nil {
		s.events = make([]StreamEvent, 0, max(8, s.lastLen+s.lastLen/8))
	}
	s.events = append(s.events, e)
}

// name interns the wire names (a handful of distinct values).
func (s *streamState) name(v C.struct_ssefold_str) string {
	if v.ptr == nil {
		return ""
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(v.ptr)), int(v.len))
	if n, ok := s.names[string(b)]; ok {
		return n
	}
	n := string(b)
	s.names[n] = n
	return n
}

// Stream folds one provider response body into normalized events and the
// message the non-streaming endpoint would have returned.
type Stream struct {
	ptr      *C.struct_ssefold_stream
	handle   cgo.Handle
	state    *streamState
	provider Provider
	opts     StreamOptions
	use      inUse
}

// NewStream creates a stream for provider; opts may be nil.
func NewStream(provider Provider, opts *StreamOptions) (*Stream, error) {
	var o StreamOptions
	if opts != nil {
		o = *opts
	}
	cfg, err := o.toC()
	if err != nil {
		return nil, err
	}
	var ptr *C.struct_ssefold_stream
	maybeGC()
	if r := C.ssefold_stream_new(C.uint32_t(provider), &cfg, &ptr); r != 0 {
		return nil, &Error{Code: Result(r)}
	}
	s := &Stream{ptr: ptr, provider: provider, opts: o,
		state: &streamState{names: map[string]string{}, pathLimit: int(cfg.max_path_events_per_feed)}}
	if !o.NoEvents {
		s.handle = cgo.NewHandle(s.state)
		maybeGC()
		C.ssefold_go_stream_set_callback(ptr, C.uintptr_t(s.handle), C.bool(o.EventJSON))
	}
	return track(s, (*Stream).Close), nil
}

// toC is the C configuration: the core's defaults, with the limits o sets
// (a zero field is not set: Go has no optional fields). The ranges are the
// core's: ssefold_stream_new refuses a limit out of range. Only what C's
// types cannot hold is refused here (a negative, an event-stream limit over
// 32 bits), as Python's OverflowError does.
func (o *StreamOptions) toC() (C.struct_ssefold_stream_config, error) {
	var cfg C.struct_ssefold_stream_config
	maybeGC()
	C.ssefold_stream_config_default(&cfg)
	var err error
	if cfg.sse, err = o.SSE.toC(); err != nil {
		return cfg, err
	}
	for _, l := range []struct {
		name string
		n    int
		dst  *C.size_t
	}{
		{"MaxParts", o.MaxParts, &cfg.max_parts},
		{"MaxToolArgsBytes", o.MaxToolArgsBytes, &cfg.max_tool_args_bytes},
		{"MaxTextBytes", o.MaxTextBytes, &cfg.max_text_bytes},
		{"MaxChoices", o.MaxChoices, &cfg.max_choices},
		{"MaxMemoryBytes", o.MaxMemoryBytes, &cfg.max_memory_bytes},
	} {
		if err := setSize(l.name, l.n, l.dst); err != nil {
			return cfg, err
		}
	}
	cfg.tool_input_trailing_strings = C.bool(o.ToolInputTrailingStrings)
	for _, l := range []struct {
		name string
		n    int
		dst  *C.uint32_t
	}{
		{"EventStream.MaxMessageLen", o.EventStream.MaxMessageLen, &cfg.event_stream.max_message_len},
		{"EventStream.MaxHeadersLen", o.EventStream.MaxHeadersLen, &cfg.event_stream.max_headers_len},
	} {
		switch {
		case l.n < 0 || l.n > math.MaxUint32:
			return cfg, &Error{Code: ResultInvalidArgument, Message: fmt.Sprintf("%s = %d does not fit 32 bits", l.name, l.n)}
		case l.n > 0:
			*l.dst = C.uint32_t(l.n)
		}
	}
	// Negative: the C 0 (no path events), which a zero field cannot say.
	switch n := o.MaxPathEventsPerFeed; {
	case n > 0:
		cfg.max_path_events_per_feed = C.size_t(n)
	case n < 0:
		cfg.max_path_events_per_feed = 0
	}
	return cfg, nil
}

// setSize writes a set (non-zero) limit to dst; a negative one cannot be a
// C size_t.
func setSize(name string, n int, dst *C.size_t) error {
	switch {
	case n < 0:
		return &Error{Code: ResultInvalidArgument, Message: fmt.Sprintf("%s = %d is negative", name, n)}
	case n > 0:
		*dst = C.size_t(n)
	}
	return nil
}

// Close frees the stream. It is idempotent.
func (s *Stream) Close() error {
	if err := s.use.enter(); err != nil {
		return err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_stream_free(s.ptr)
	s.ptr = nil
	untrack(s, &s.handle)
	return nil
}

func (s *Stream) err(r C.ssefold_result) error {
	if r == 0 {
		return nil
	}
	var m C.struct_ssefold_str
	maybeGC()
	C.ssefold_stream_last_error(s.ptr, &m)
	msg, _ := goString(m)
	return &Error{Code: Result(r), Message: msg}
}

// repanic re-raises a panic recovered in the event callback.
func (s *Stream) repanic() {
	if pv := s.state.panicked; pv != nil {
		s.state.panicked = nil
		panic(pv)
	}
}

func (s *Stream) take() []StreamEvent {
	st := s.state
	st.callEnded()
	out := st.events
	st.events = nil
	st.lastLen = len(out)
	if len(out) == 0 {
		return nil
	}
	if len(out) < cap(out)/2 {
		out = append([]StreamEvent(nil), out...)
	}
	return out
}

// Feed feeds bytes of the HTTP body and returns the normalized events they
// completed (nil with NoEvents). An error (SSE decoding, invalid JSON, a
// limit, a provider error event, an unknown dialect) closes the stream;
// the events before it are returned with it and the message stays readable.
func (s *Stream) Feed(b []byte) ([]StreamEvent, error) {
	if err := s.use.enter(); err != nil {
		return nil, err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return nil, ErrClosed
	}
	p, n := bytesPtr(b)
	maybeGC()
	r := C.ssefold_stream_feed(s.ptr, p, n)
	runtime.KeepAlive(b)
	s.repanic()
	err := s.err(r)
	runtime.KeepAlive(s)
	return s.take(), err
}

// Finish ends the stream (the end of the HTTP body). It returns an error
// matching ErrIncomplete when the terminal event never came.
func (s *Stream) Finish() ([]StreamEvent, error) {
	if err := s.use.enter(); err != nil {
		return nil, err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return nil, ErrClosed
	}
	maybeGC()
	r := C.ssefold_stream_finish(s.ptr)
	s.repanic()
	err := s.err(r)
	runtime.KeepAlive(s)
	return s.take(), err
}

// Message is the folded message so far (also after an error) as JSON:
// what the provider's non-streaming endpoint would have returned ("null"
// before the dialect is known).
func (s *Stream) Message() (json.RawMessage, error) {
	if err := s.use.enter(); err != nil {
		return nil, err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return nil, ErrClosed
	}
	var out C.struct_ssefold_str
	maybeGC()
	r := C.ssefold_stream_message_json(s.ptr, &out)
	if r != 0 {
		return nil, s.err(r)
	}
	m := json.RawMessage(goBytes(out))
	runtime.KeepAlive(s)
	return m, nil
}

// Status is the dialect (given or detected; Auto until detection) and
// whether the terminal event was seen.
func (s *Stream) Status() (Provider, bool) {
	if s.use.enter() != nil {
		return 0, false
	}
	defer s.use.leave()
	if s.ptr == nil {
		return s.provider, false
	}
	var p C.ssefold_provider
	var t C.bool
	maybeGC()
	C.ssefold_stream_status(s.ptr, &p, &t)
	runtime.KeepAlive(s)
	return Provider(p), bool(t)
}

// Abort ends the turn because the user cancelled: one KindTurnEnd event
// (Text "aborted") is returned and the stream is closed. Idempotent.
func (s *Stream) Abort() ([]StreamEvent, error) {
	if err := s.use.enter(); err != nil {
		return nil, err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return nil, ErrClosed
	}
	maybeGC()
	r := C.ssefold_stream_abort(s.ptr)
	s.repanic()
	err := s.err(r)
	runtime.KeepAlive(s)
	return s.take(), err
}

// IsAborted says whether Abort delivered its turn end.
func (s *Stream) IsAborted() bool {
	if s.use.enter() != nil {
		return false
	}
	defer s.use.leave()
	if s.ptr == nil {
		return false
	}
	var out C.bool
	maybeGC()
	C.ssefold_stream_is_aborted(s.ptr, &out)
	runtime.KeepAlive(s)
	return bool(out)
}

// IsCompleteAtEnd says whether the body may end here, asked when a
// connection's body ends and before Finish: the terminal event came, or the
// answer is whole without one (Gemini, which has none, once every candidate
// has its finishReason; Bedrock Converse after messageStop; Ollama on a
// lone done line; OpenAI Chat without [DONE] once every choice has its
// finish_reason and the usage a chunk announced came). When true, Finish
// ends the turn normally (Chat without [DONE]: a "terminal_missing"
// warning, then the turn end); do not reconnect. False after an error,
// Abort or Close. It never changes the stream.
func (s *Stream) IsCompleteAtEnd() bool {
	if s.use.enter() != nil {
		return false
	}
	defer s.use.leave()
	if s.ptr == nil {
		return false
	}
	var out C.bool
	maybeGC()
	C.ssefold_stream_is_complete_at_end(s.ptr, &out)
	runtime.KeepAlive(s)
	return bool(out)
}

// Reconnect is called before feeding the body of a new connection: the
// old connection's partial event is dropped, and the new connection's
// first event decides between a restart (a KindTurnReset event, then the
// turn is rebuilt) and a resume. Send ResumeCursor with the new request.
func (s *Stream) Reconnect() error {
	if err := s.use.enter(); err != nil {
		return err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_stream_reconnect(s.ptr)
	err := s.err(r)
	runtime.KeepAlive(s)
	return err
}

// ResumeCursor is what to send when reconnecting: CursorStartingAfter the
// highest Responses sequence_number, else CursorLastEventID, else
// CursorNone.
func (s *Stream) ResumeCursor() (ResumeCursor, error) {
	if err := s.use.enter(); err != nil {
		return ResumeCursor{}, err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return ResumeCursor{}, ErrClosed
	}
	var c C.struct_ssefold_resume_cursor
	maybeGC()
	r := C.ssefold_stream_resume_cursor(s.ptr, &c)
	if r != 0 {
		return ResumeCursor{}, s.err(r)
	}
	out := cursorFromC(c)
	runtime.KeepAlive(s)
	return out, nil
}

// ReconnectionTime is the server's SSE retry: in milliseconds (ok false
// when it sent none).
func (s *Stream) ReconnectionTime() (ms uint64, ok bool) {
	if s.use.enter() != nil {
		return 0, false
	}
	defer s.use.leave()
	if s.ptr == nil {
		return 0, false
	}
	var has C.bool
	var v C.uint64_t
	maybeGC()
	C.ssefold_stream_reconnection_time(s.ptr, &has, &v)
	runtime.KeepAlive(s)
	return uint64(v), bool(has)
}
