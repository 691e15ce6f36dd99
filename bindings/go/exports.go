package ssefold

/*
#include "ssefold_go.h"
*/
import "C"

import (
	"encoding/json"
	"runtime/cgo"
	"unsafe"
)

// The exported callbacks only copy the borrowed event into Go memory and
// append it to the handle's buffer; user code runs after C returns. A panic
// in a callback is recovered (it must not unwind through Rust frames),
// stored, and re-raised by the Go caller once C has returned.

//export goSseEvent
func goSseEvent(h C.uintptr_t, ev *C.struct_ssefold_sse_event) C.int {
	d := cgo.Handle(h).Value().(*decoderState)
	defer func() {
		if p := recover(); p != nil {
			d.panicked = p
		}
	}()
	e := Event{}
	e.Type, _ = goString(ev.event)
	e.Data, _ = goString(ev.data)
	e.ID, e.HasID = d.eventID(ev)
	e.HasRetry = bool(ev.has_retry)
	e.RetryMS = uint64(ev.retry_ms)
	d.events = append(d.events, e)
	return 0
}

//export goStreamEvent
func goStreamEvent(h C.uintptr_t, ev *C.struct_ssefold_stream_event) {
	s := cgo.Handle(h).Value().(*streamState)
	defer func() {
		if p := recover(); p != nil {
			s.panicked = p
		}
	}()
	e := StreamEvent{Kind: EventKind(ev.kind), Part: -1}
	if ev.part != C.uint32_t(0xFFFFFFFF) {
		e.Part = int(ev.part)
	}
	e.Name = s.name(ev.name)
	e.Text = s.arena.str(ev.text)
	if ev.json.ptr != nil {
		e.JSON = s.arena.raw(ev.json)
	}
	if e.Kind == KindToolArgsPath {
		e.PathEvent = s.pathEvent(e.Part, &ev.path_event)
	}
	if e.Kind == KindMediaDelta {
		e.MimeType = s.name(ev.mime_type)
		if ev.data.ptr != nil && ev.data.len > 0 {
			e.Data = C.GoBytes(unsafe.Pointer(ev.data.ptr), C.int(ev.data.len))
		}
	}
	s.add(e)
}

//export goPathEvent
func goPathEvent(h C.uintptr_t, ev *C.struct_ssefold_path_event) {
	p := cgo.Handle(h).Value().(*partialState)
	defer func() {
		if r := recover(); r != nil {
			p.panicked = r
		}
	}()
	e := PathEvent{Kind: PathEventKind(ev.kind), Container: ContainerKind(ev.container)}
	n := int(ev.path_len)
	if n > 0 {
		segs := unsafe.Slice(ev.path, n)
		e.Path = make([]PathSegment, n)
		for i, s := range segs {
			if s.key.ptr != nil {
				e.Path[i].Key, _ = goString(s.key)
			} else {
				e.Path[i].IsIndex = true
				e.Path[i].Index = int(s.index)
			}
		}
	}
	e.Text, _ = goString(ev.text)
	if ev.value_json.ptr != nil {
		e.Value = json.RawMessage(goBytes(ev.value_json))
	}
	p.events = append(p.events, e)
}
