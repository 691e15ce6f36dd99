package ssefold

/*
#include "ssefold_go.h"
ssefold_result ssefold_go_partial_json_set_callback(struct ssefold_partial_json *p, uintptr_t h, bool container_values);
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"runtime/cgo"
)

// PathEventKind is the kind of a partial-JSON path event.
type PathEventKind uint32

// Path event kinds.
const (
	// ContainerStart: an object or array started at Path.
	ContainerStart PathEventKind = 0
	// StringAppend: new decoded Text of the string at Path.
	StringAppend PathEventKind = 1
	// ValueComplete: the value at Path is complete (Value).
	ValueComplete PathEventKind = 2
)

// ContainerKind is object or array.
type ContainerKind uint32

// Container kinds.
const (
	Object ContainerKind = 0
	Array  ContainerKind = 1
)

// PathSegment is one step of a path: an object key or an array index.
type PathSegment struct {
	// Key is the decoded object key (when !IsIndex).
	Key string
	// IsIndex marks an array element; Index is its zero-based position.
	IsIndex bool
	Index   int
}

// PathEvent is one event of the partial-JSON parser.
type PathEvent struct {
	Kind PathEventKind
	// Path from the root (empty for the root).
	Path []PathSegment
	// Container (ContainerStart only).
	Container ContainerKind
	// Text (StringAppend only).
	Text string
	// Value as compact JSON (ValueComplete: scalars, and containers when
	// PartialJSONOptions.ContainerValues).
	Value json.RawMessage
}

// PartialJSONOptions configures a PartialJSON; zero limits take the
// defaults (depth 512, 64 MiB).
type PartialJSONOptions struct {
	MaxDepth int
	MaxBytes uint64
	// Events makes Push return path events.
	Events bool
	// ContainerValues adds the JSON text of containers to ValueComplete.
	ContainerValues bool
}

type partialState struct {
	events   []PathEvent
	panicked any
}

// PartialJSON is an incremental parser of one JSON document that may be
// cut anywhere.
type PartialJSON struct {
	ptr    *C.struct_ssefold_partial_json
	handle cgo.Handle
	state  *partialState
	use    inUse
}

// NewPartialJSON creates a parser; opts may be nil.
func NewPartialJSON(opts *PartialJSONOptions) (*PartialJSON, error) {
	var o PartialJSONOptions
	if opts != nil {
		o = *opts
	}
	var lim C.struct_ssefold_partial_json_limits
	maybeGC()
	C.ssefold_partial_json_limits_default(&lim)
	if o.MaxDepth > 0 {
		lim.max_depth = C.size_t(o.MaxDepth)
	}
	if o.MaxBytes > 0 {
		lim.max_bytes = C.uint64_t(o.MaxBytes)
	}
	var ptr *C.struct_ssefold_partial_json
	maybeGC()
	if r := C.ssefold_partial_json_new(&lim, &ptr); r != 0 {
		return nil, &Error{Code: Result(r)}
	}
	liveHandles.Add(1)
	p := &PartialJSON{ptr: ptr, state: &partialState{}}
	if o.Events {
		p.handle = cgo.NewHandle(p.state)
		maybeGC()
		C.ssefold_go_partial_json_set_callback(ptr, C.uintptr_t(p.handle), C.bool(o.ContainerValues))
	}
	runtime.SetFinalizer(p, (*PartialJSON).Close)
	return p, nil
}

// Close frees the parser. It is idempotent.
func (p *PartialJSON) Close() error {
	if err := p.use.enter(); err != nil {
		return err
	}
	defer p.use.leave()
	if p.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_partial_json_free(p.ptr)
	p.ptr = nil
	if p.handle != 0 {
		p.handle.Delete()
		p.handle = 0
	}
	liveHandles.Add(-1)
	runtime.SetFinalizer(p, nil)
	return nil
}

func (p *PartialJSON) err(r C.ssefold_result) error {
	if r == 0 {
		return nil
	}
	var m C.struct_ssefold_str
	maybeGC()
	C.ssefold_partial_json_last_error(p.ptr, &m)
	msg, _ := goString(m)
	return &Error{Code: Result(r), Message: msg}
}

// Push feeds the next fragment (split anywhere) and returns its path
// events (with Events). Invalid input and exceeded limits are sticky.
func (p *PartialJSON) Push(b []byte) ([]PathEvent, error) {
	if err := p.use.enter(); err != nil {
		return nil, err
	}
	defer p.use.leave()
	if p.ptr == nil {
		return nil, ErrClosed
	}
	p.state.events = nil
	ptr, n := bytesPtr(b)
	maybeGC()
	r := C.ssefold_partial_json_push(p.ptr, ptr, n)
	runtime.KeepAlive(b)
	if pv := p.state.panicked; pv != nil {
		p.state.panicked = nil
		panic(pv)
	}
	err := p.err(r)
	runtime.KeepAlive(p)
	ev := p.state.events
	p.state.events = nil
	return ev, err
}

// Value is the best-effort current value as compact JSON (open containers
// closed; the string being read included when partialStrings). ok is false
// when no value has begun.
func (p *PartialJSON) Value(partialStrings bool) (v json.RawMessage, ok bool, err error) {
	if err := p.use.enter(); err != nil {
		return nil, false, err
	}
	defer p.use.leave()
	if p.ptr == nil {
		return nil, false, ErrClosed
	}
	var has C.bool
	var s C.struct_ssefold_str
	maybeGC()
	r := C.ssefold_partial_json_value(p.ptr, C.bool(partialStrings), &has, &s)
	if r != 0 {
		return nil, false, p.err(r)
	}
	if has {
		v = json.RawMessage(goBytes(s))
	}
	runtime.KeepAlive(p)
	return v, bool(has), nil
}

// Finish is the strict end of the document: the complete value, or an
// error matching ErrIncomplete (or the sticky error).
func (p *PartialJSON) Finish() (json.RawMessage, error) {
	if err := p.use.enter(); err != nil {
		return nil, err
	}
	defer p.use.leave()
	if p.ptr == nil {
		return nil, ErrClosed
	}
	var s C.struct_ssefold_str
	maybeGC()
	r := C.ssefold_partial_json_finish(p.ptr, &s)
	if r != 0 {
		return nil, p.err(r)
	}
	v := json.RawMessage(goBytes(s))
	runtime.KeepAlive(p)
	return v, nil
}

// Reset makes the parser ready for a new document.
func (p *PartialJSON) Reset() error {
	if err := p.use.enter(); err != nil {
		return err
	}
	defer p.use.leave()
	if p.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_partial_json_reset(p.ptr)
	runtime.KeepAlive(p)
	return p.err(r)
}

// Status says whether a complete top-level value was parsed and how many
// bytes were accepted.
func (p *PartialJSON) Status() (complete bool, bytesPushed uint64) {
	if p.use.enter() != nil {
		return false, 0
	}
	defer p.use.leave()
	if p.ptr == nil {
		return false, 0
	}
	var c C.bool
	var n C.uint64_t
	maybeGC()
	C.ssefold_partial_json_status(p.ptr, &c, &n)
	runtime.KeepAlive(p)
	return bool(c), uint64(n)
}

// ParsePartialJSON is a one-shot best-effort parse of possibly incomplete
// JSON text. ok is false when no value has begun.
func ParsePartialJSON(text string, partialStrings bool) (v json.RawMessage, ok bool, err error) {
	p, err := NewPartialJSON(nil)
	if err != nil {
		return nil, false, err
	}
	defer p.Close()
	view, free := strView(text, true)
	defer free()
	var has C.bool
	var s C.struct_ssefold_str
	maybeGC()
	r := C.ssefold_partial_json_parse(p.ptr, view, C.bool(partialStrings), &has, &s)
	if r != 0 {
		return nil, false, p.err(r)
	}
	if has {
		v = json.RawMessage(goBytes(s))
	}
	runtime.KeepAlive(p)
	return v, bool(has), nil
}
