package ssefold

/*
#include <stdlib.h>
#include "ssefold_go.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Encoder writes SSE events into a buffer it owns.
type Encoder struct {
	ptr *C.struct_ssefold_sse_encoder
}

// NewEncoder creates an encoder with an empty buffer.
func NewEncoder() (*Encoder, error) {
	var ptr *C.struct_ssefold_sse_encoder
	maybeGC()
	if r := C.ssefold_sse_encoder_new(&ptr); r != 0 {
		return nil, &Error{Code: Result(r)}
	}
	return track(&Encoder{ptr: ptr}, (*Encoder).Close), nil
}

// Close frees the encoder. It is idempotent.
func (e *Encoder) Close() error {
	if e.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_sse_encoder_free(e.ptr)
	e.ptr = nil
	untrack(e, nil)
	return nil
}

func (e *Encoder) err(r C.ssefold_result) error {
	if r == 0 {
		return nil
	}
	var m C.struct_ssefold_str
	maybeGC()
	C.ssefold_sse_encoder_last_error(e.ptr, &m)
	msg, _ := goString(m)
	return &Error{Code: Result(r), Message: msg}
}

// Event appends one event: Type "" writes no event field, HasID controls
// the id field (an empty ID resets the client's last event ID), HasRetry
// the retry field; line breaks in Data split it into data lines.
func (e *Encoder) Event(ev Event) error {
	if e.ptr == nil {
		return ErrClosed
	}
	typ, f1 := strView(ev.Type, ev.Type != "")
	defer f1()
	data, f2 := strView(ev.Data, true)
	defer f2()
	id, f3 := strView(ev.ID, ev.HasID)
	defer f3()
	var retry *C.uint64_t
	if ev.HasRetry {
		retry = (*C.uint64_t)(C.malloc(8))
		defer C.free(unsafe.Pointer(retry))
		*retry = C.uint64_t(ev.RetryMS)
	}
	maybeGC()
	r := C.ssefold_sse_encoder_event(e.ptr, typ, data, id, retry)
	runtime.KeepAlive(e)
	return e.err(r)
}

// Comment appends a comment (one ':' line per line of text).
func (e *Encoder) Comment(text string) error {
	if e.ptr == nil {
		return ErrClosed
	}
	v, f := strView(text, true)
	defer f()
	maybeGC()
	r := C.ssefold_sse_encoder_comment(e.ptr, v)
	runtime.KeepAlive(e)
	return e.err(r)
}

// KeepAlive appends an empty comment line.
func (e *Encoder) KeepAlive() error {
	if e.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_sse_encoder_keep_alive(e.ptr)
	runtime.KeepAlive(e)
	return e.err(r)
}

// Retry appends a standalone retry field block.
func (e *Encoder) Retry(ms uint64) error {
	if e.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_sse_encoder_retry(e.ptr, C.uint64_t(ms))
	runtime.KeepAlive(e)
	return e.err(r)
}

// Bytes returns a copy of the bytes written since the last Clear.
func (e *Encoder) Bytes() []byte {
	if e.ptr == nil {
		return nil
	}
	var b C.struct_ssefold_bytes
	maybeGC()
	C.ssefold_sse_encoder_bytes(e.ptr, &b)
	var out []byte
	if b.len > 0 {
		out = C.GoBytes(unsafe.Pointer(b.ptr), C.int(b.len))
	}
	runtime.KeepAlive(e)
	return out
}

// Clear forgets the bytes written so far.
func (e *Encoder) Clear() error {
	if e.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_sse_encoder_clear(e.ptr)
	runtime.KeepAlive(e)
	return e.err(r)
}
