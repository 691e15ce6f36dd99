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
	s.add(s.event(ev))
}

//export goAgentEvent
func goAgentEvent(h C.uintptr_t, sev *C.struct_ssefold_stream_event, tev *C.struct_ssefold_tool_event) {
	t := cgo.Handle(h).Value().(*turnState)
	defer func() {
		if p := recover(); p != nil {
			t.panicked = p
		}
	}()
	if sev != nil {
		e := t.stream.event(sev)
		t.events = append(t.events, TurnEvent{Stream: &e})
	} else if tev != nil {
		e := toolEventFromC(tev)
		t.events = append(t.events, TurnEvent{Tool: &e})
	}
}

// event copies a borrowed normalized event into Go memory.
func (s *streamState) event(ev *C.struct_ssefold_stream_event) StreamEvent {
	e := StreamEvent{Kind: EventKind(ev.kind), Part: -1, content: bool(ev.is_content)}
	if ev.part != C.uint32_t(0xFFFFFFFF) {
		e.Part = int(ev.part)
	}
	e.Name = s.name(ev.name)
	e.Text = s.arena.str(ev.text)
	if ev.json.ptr != nil {
		e.JSON = s.arena.raw(ev.json)
	}
	switch e.Kind {
	case KindToolArgsPath:
		e.PathEvent = s.pathEvent(e.Part, ev)
	case KindMediaDelta:
		e.MimeType = s.name(ev.mime_type)
		if ev.data.ptr != nil && ev.data.len > 0 {
			e.Data = C.GoBytes(unsafe.Pointer(ev.data.ptr), C.int(ev.data.len))
		}
	case KindPartEnd:
		e.Outcome = PartOutcome(ev.outcome)
	}
	if tc := &ev.tool_call; bool(tc.present) {
		c := &ToolCall{
			ID:               s.arena.str(tc.id),
			IDSynthesized:    bool(tc.id_synthesized),
			Name:             s.arena.str(tc.name),
			InputFormat:      ToolInputFormat(tc.input_format),
			ProviderExecuted: bool(tc.provider_executed),
		}
		if tc.arguments.ptr != nil {
			c.Arguments = s.arena.str(tc.arguments)
			if c.InputFormat == ToolInputJSON {
				c.Input = json.RawMessage(c.Arguments)
			}
		}
		e.ToolCall = c
	}
	return e
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
	var segs []C.struct_ssefold_path_segment
	if n := int(ev.path_len); n > 0 {
		segs = unsafe.Slice(ev.path, n)
	}
	p.path(&e, segs)
	e.Text, _ = goString(ev.text)
	if ev.value_json.ptr != nil {
		e.Value = json.RawMessage(goBytes(ev.value_json))
	}
	p.events = append(p.events, e)
}
