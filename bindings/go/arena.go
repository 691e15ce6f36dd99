package ssefold

/*
#include "ssefold_go.h"
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// Chunked storage for the events a Stream returns. A hostile tool call makes
// millions of path events, a few bytes each; allocating each event's path
// event, path node and text on its own multiplied the Go heap a feed leaves
// behind (and the collector's headroom on top). Small things are carved out
// of shared chunks instead: a chunk is never written again where it was
// handed out, so what an event holds stays valid however long it is kept
// (keeping one event keeps its chunks, at most a few tens of KiB, alive).

const (
	// slabLen is how many path events one chunk holds. (Path nodes are
	// allocated one by one: a node points at its parent, so nodes sharing
	// chunks would keep every older chunk alive through one another.)
	slabLen = 512
	// byteChunk is the size of a text chunk; byteAlone is the longest text
	// copied into one (longer texts get an allocation of their own).
	byteChunk = 16 << 10
	byteAlone = 1 << 10
	// bigShared is the shortest container text worth sharing with the
	// container enclosing it (containerValue); bigSlack is the room left on
	// each side of its copy for the enclosing container's other bytes.
	bigShared = 1 << 20
	bigSlack  = 4 << 10
)

// eventArena hands out the memory of a stream's events.
type eventArena struct {
	paths []StreamPathEvent // the unused rest of the current slab
	strs  []byte            // string chunk: strings alias it, so it is append-only
	raws  []byte            // json.RawMessage chunk (each value capped at its length)
	// big is the last large container text copied, kept until the events
	// are returned (containerValue).
	big bigValue
}

// bigValue is a large container text copied from C: the C range it came
// from, the event holding the copy, and the buffer around it (the copy is
// buf[front:front+n]).
type bigValue struct {
	from  uintptr
	n     int
	part  int
	owner *StreamPathEvent
	buf   []byte
	front int
}

// pathEvent returns a zeroed path event from the current slab.
func (a *eventArena) pathEvent() *StreamPathEvent {
	if len(a.paths) == 0 {
		a.paths = make([]StreamPathEvent, slabLen)
	}
	e := &a.paths[0]
	a.paths = a.paths[1:]
	return e
}

// view is the bytes of a borrowed C view (valid until the callback returns).
func view(v C.struct_ssefold_str) []byte {
	if v.ptr == nil || v.len == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(v.ptr)), int(v.len))
}

// str copies a borrowed view into a Go string ("" when absent or empty).
func (a *eventArena) str(v C.struct_ssefold_str) string {
	b := view(v)
	if len(b) == 0 {
		return ""
	}
	if len(b) > byteAlone {
		return string(b)
	}
	if cap(a.strs)-len(a.strs) < len(b) {
		a.strs = make([]byte, 0, byteChunk)
	}
	off := len(a.strs)
	a.strs = append(a.strs, b...)
	// The bytes are never written again: the chunk only grows past them.
	return unsafe.String(&a.strs[off], len(b))
}

// raw copies a borrowed view into a json.RawMessage (nil when absent or
// empty) whose capacity is its length, so an append by the caller
// reallocates instead of writing into its neighbour.
func (a *eventArena) raw(v C.struct_ssefold_str) json.RawMessage {
	b := view(v)
	if len(b) == 0 {
		return nil
	}
	if len(b) > byteAlone {
		return json.RawMessage(bytes.Clone(b))
	}
	if cap(a.raws)-len(a.raws) < len(b) {
		a.raws = make([]byte, 0, byteChunk)
	}
	off := len(a.raws)
	a.raws = append(a.raws, b...)
	return json.RawMessage(a.raws[off : off+len(b) : off+len(b)])
}

// containerValue copies the text of a closing container of part into e.Value.
// A large text is copied with slack on both sides, so that the container
// enclosing it, closing next in the same feed ({"a":[…16 MB…]} closes the
// array, then the object around it), is the same copy widened by the few
// bytes around it instead of a second one: the inner value's bytes are not
// touched, only slack that no value covers yet.
func (a *eventArena) containerValue(part int, e *StreamPathEvent, v C.struct_ssefold_str) {
	b := view(v)
	if len(b) < bigShared {
		e.Value = a.raw(v)
		return
	}
	from := uintptr(unsafe.Pointer(v.ptr))
	if old := a.big; old.owner != nil && old.part == part && old.from >= from &&
		old.from-from+uintptr(old.n) <= uintptr(len(b)) {
		pre := int(old.from - from)
		post := len(b) - pre - old.n
		// The C buffer may have moved since: the bytes decide.
		if pre <= old.front && old.front+old.n+post <= len(old.buf) &&
			bytes.Equal(b[pre:pre+old.n], old.owner.Value) {
			start := old.front - pre
			w := old.buf[start : start+len(b) : start+len(b)]
			copy(w[:pre], b[:pre])
			copy(w[pre+old.n:], b[pre+old.n:])
			e.Value = w
			a.big = bigValue{from: from, n: len(b), part: part, owner: e, buf: old.buf, front: start}
			return
		}
	}
	buf := make([]byte, len(b)+2*bigSlack)
	copy(buf[bigSlack:], b)
	e.Value = buf[bigSlack : bigSlack+len(b) : bigSlack+len(b)]
	a.big = bigValue{from: from, n: len(b), part: part, owner: e, buf: buf, front: bigSlack}
}

// returned forgets the large copy once its event is the caller's: the
// stream must not keep it alive.
func (a *eventArena) returned() {
	a.big = bigValue{}
}
