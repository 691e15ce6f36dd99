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
	"unsafe"
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
	// Path from the root (nil for the root); nil with
	// PartialJSONOptions.LazyPaths (FullPath builds it). Consecutive events
	// share their paths' backing arrays (read-only: never write to a
	// Path): an event costs O(1) however deep, except a sibling of an
	// element whose path an event already holds (the next array index, the
	// next key), whose path is a copy (O(depth); LazyPaths avoids it).
	Path []PathSegment
	// Depth is the number of path segments (0: the root).
	Depth int
	// Last is the last path segment (zero at the root).
	Last PathSegment
	// Container (ContainerStart only).
	Container ContainerKind
	// Text (StringAppend only).
	Text string
	// Value as compact JSON (ValueComplete: scalars, and containers when
	// PartialJSONOptions.ContainerValues).
	Value json.RawMessage
	// parent holds the segments before Last with LazyPaths (nil at depth 0
	// and 1, and without LazyPaths).
	parent *pathNode
}

// FullPath is the path from the root: Path, or with LazyPaths the path
// built from the segments the event shares with its neighbours (O(Depth),
// a new slice on each call).
func (e *PathEvent) FullPath() []PathSegment {
	if e.Path != nil || e.Depth == 0 {
		return e.Path
	}
	return pathOf(e.Depth, e.Last, e.parent)
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
	// LazyPaths leaves PathEvent.Path nil: each event has its Depth and
	// Last segment, and FullPath builds the path on demand, so every event
	// costs O(1) whatever the depth (siblings in a deep container
	// included).
	LazyPaths bool
}

type partialState struct {
	events   []PathEvent
	panicked any
	lazy     bool
	// lastLen is how many events the previous push returned.
	lastLen int
	// The current path, mirrored from the C events (see path): with
	// LazyPaths as linked nodes, else in buf, whose first hwm positions are
	// held by events already made (copied before they would change).
	nodes []*pathNode
	buf   []PathSegment
	hwm   int
}

// sameSegment says whether the C segment c is s.
func sameSegment(c *C.struct_ssefold_path_segment, s PathSegment) bool {
	if c.key.ptr == nil {
		return s.IsIndex && s.Index == int(c.index)
	}
	return !s.IsIndex && string(unsafe.Slice((*byte)(unsafe.Pointer(c.key.ptr)), int(c.key.len))) == s.Key
}

// segmentOf copies a C segment into Go memory.
func segmentOf(c *C.struct_ssefold_path_segment) PathSegment {
	if c.key.ptr == nil {
		return PathSegment{IsIndex: true, Index: int(c.index)}
	}
	k, _ := goString(c.key)
	return PathSegment{Key: k}
}

// reset forgets the path (a new document).
func (st *partialState) reset() {
	clear(st.nodes)
	st.nodes, st.buf, st.hwm = st.nodes[:0], nil, 0
}

// depth is the length of the mirrored path.
func (st *partialState) depth() int {
	if st.lazy {
		return len(st.nodes)
	}
	return len(st.buf)
}

// segment is segment i of the mirrored path.
func (st *partialState) segment(i int) PathSegment {
	if st.lazy {
		return st.nodes[i].seg
	}
	return st.buf[i]
}

// path sets e's path from the C event's path in O(1): consecutive events
// of a document share all but the last segment of the shorter path (the
// parser emits an event at every container start and end), so only the
// last two segments are compared; a path that breaks the rule is rebuilt
// (O(depth)).
func (st *partialState) path(e *PathEvent, cpath []C.struct_ssefold_path_segment) {
	n := len(cpath)
	e.Depth = n
	if n > 0 {
		e.Last = segmentOf(&cpath[n-1])
	}
	cur := st.depth()
	parentSame := n < 2 || (cur >= n-1 && sameSegment(&cpath[n-2], st.segment(n-2)))
	switch {
	case n == 0:
		// The root: the path is empty.
		if st.lazy {
			st.reset()
		} else {
			st.buf = st.buf[:0]
		}
		return
	case cur >= n && parentSame && sameSegment(&cpath[n-1], st.segment(n-1)):
		// A prefix of the current path (a container closing, a string's appends).
	case parentSame && cur >= n-1:
		// The last segment is new (a first child, the next index or key).
		if st.lazy {
			clear(st.nodes[n-1:])
			st.nodes = st.nodes[:n-1]
			var up *pathNode
			if n >= 2 {
				up = st.nodes[n-2]
			}
			st.nodes = append(st.nodes, &pathNode{parent: up, seg: e.Last})
		} else {
			if n-1 < st.hwm {
				// An event holds that position: copy the prefix into a new array.
				fresh := make([]PathSegment, n-1, n+3)
				copy(fresh, st.buf[:n-1])
				st.buf, st.hwm = fresh, 0
			}
			st.buf = append(st.buf[:n-1], e.Last)
		}
	default:
		// The rule broke: rebuild from the C path.
		if st.lazy {
			st.reset()
			var up *pathNode
			for i := range cpath {
				up = &pathNode{parent: up, seg: segmentOf(&cpath[i])}
				st.nodes = append(st.nodes, up)
			}
		} else {
			st.buf = make([]PathSegment, n, max(2*n, 16))
			for i := range cpath {
				st.buf[i] = segmentOf(&cpath[i])
			}
			st.hwm = 0
		}
	}
	if st.lazy {
		clear(st.nodes[n:])
		st.nodes = st.nodes[:n]
		if n >= 2 {
			e.parent = st.nodes[n-2]
		}
		return
	}
	st.buf = st.buf[:n]
	e.Path = st.buf[:n:n]
	st.hwm = max(st.hwm, n)
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
	p := &PartialJSON{ptr: ptr, state: &partialState{lazy: o.LazyPaths}}
	if o.Events {
		p.handle = cgo.NewHandle(p.state)
		maybeGC()
		C.ssefold_go_partial_json_set_callback(ptr, C.uintptr_t(p.handle), C.bool(o.ContainerValues))
	}
	return track(p, (*PartialJSON).Close), nil
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
	untrack(p, &p.handle)
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
	if p.handle != 0 {
		// Sized from the previous push's count: no growing copies of the events.
		p.state.events = make([]PathEvent, 0, max(8, p.state.lastLen+p.state.lastLen/8))
	}
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
	p.state.events, p.state.lastLen = nil, len(ev)
	if len(ev) == 0 {
		ev = nil
	}
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
	if r == 0 {
		p.state.reset()
	}
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
