// Package ssefold is the Go binding of ssefold: the LLM streaming pipeline
// (bytes → SSE events → provider events → normalized deltas → folded
// message) done once in Rust, reached through its C ABI.
//
// Every handle (Decoder, Encoder, Stream, PartialJSON, Reconnector,
// ToolScheduler, Relay, AgentTurn) owns C memory: call Close when done (a
// finalizer is only a safety net). A handle must not be used from several
// goroutines at once. Every string the C library lends is copied before the
// call returns.
//
// Finding the C library: the released module (`go get`) links the static
// library prebuilt for the platform inside it (lib/GOOS_GOARCH;
// cgo_prebuilt.go), so neither Rust nor make is needed. In a checkout the
// package links the static target/capi/libssefold.a of the repository it
// sits in (run `make capi` at the repository root first; cgo_local.go).
// With the build tag ssefold_pkgconfig it asks pkg-config for "ssefold"
// instead (after `make install`; cgo_pkgconfig.go). Without the library the
// build stops with a message saying so (ssefold_go.h).
package ssefold

/*
#include <stdlib.h>
#include "ssefold_go.h"

ssefold_result ssefold_go_decoder_set_callback(struct ssefold_sse_decoder *d, uintptr_t h);
ssefold_result ssefold_go_stream_set_callback(struct ssefold_stream *s, uintptr_t h, bool event_json);
ssefold_result ssefold_go_partial_json_set_callback(struct ssefold_partial_json *p, uintptr_t h, bool container_values);
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// Version returns the version of the linked C library ("0.1.0").
func Version() string {
	maybeGC()
	return C.GoString(C.ssefold_version())
}

// liveHandles counts C handles not yet freed (for leak tests).
var liveHandles atomic.Int64

// LiveHandles reports how many C handles are allocated and not yet freed.
func LiveHandles() int64 { return liveHandles.Load() }

// goString copies a borrowed view; an absent view gives "", false.
func goString(s C.struct_ssefold_str) (string, bool) {
	if s.ptr == nil {
		return "", false
	}
	if s.len == 0 {
		return "", true
	}
	return C.GoStringN(s.ptr, C.int(s.len)), true
}

// goBytes copies a borrowed view into a new byte slice.
func goBytes(s C.struct_ssefold_str) []byte {
	if s.ptr == nil || s.len == 0 {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(s.ptr), C.int(s.len))
}

// cStr makes a view of a Go string; the memory must be pinned by the call
// (cgo pins arguments only when passed directly, so use withStr).
func bytesPtr(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

// strView returns a C view of s held in C memory plus a free function, or
// an absent view when !present.
func strView(s string, present bool) (C.struct_ssefold_str, func()) {
	if !present {
		return C.struct_ssefold_str{}, func() {}
	}
	if len(s) == 0 {
		p := C.malloc(1)
		return C.struct_ssefold_str{ptr: (*C.char)(p), len: 0}, func() { C.free(p) }
	}
	p := C.CBytes([]byte(s))
	return C.struct_ssefold_str{ptr: (*C.char)(p), len: C.size_t(len(s))}, func() { C.free(p) }
}
