package ssefold

/*
#include "ssefold_go.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
)

// EnableUI attaches the streaming-UI state model (the core's UiState) to
// the stream: from then on every event that Feed, Finish and Abort produce
// updates it, stamped with the time last given to SetTime; a turn_reset
// clears it. Read it with UISnapshot.
func (s *Stream) EnableUI() error {
	if err := s.use.enter(); err != nil {
		return err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_stream_enable_ui(s.ptr)
	err := s.err(r)
	runtime.KeepAlive(s)
	return err
}

// SetTime sets the host time (milliseconds) stamped on the text segments
// of the events that follow (for fade-in animation).
func (s *Stream) SetTime(nowMs uint64) error {
	if err := s.use.enter(); err != nil {
		return err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_stream_set_time(s.ptr, C.uint64_t(nowMs))
	err := s.err(r)
	runtime.KeepAlive(s)
	return err
}

// UISnapshot is the UI state as JSON: connection, parts (text segments with
// arrival times, status, tool calls in progress with partial arguments and
// readiness, committed content), tool progress, usage, stop reason, error,
// ended, aborted. The bytes are a copy.
func (s *Stream) UISnapshot() (json.RawMessage, error) {
	if err := s.use.enter(); err != nil {
		return nil, err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return nil, ErrClosed
	}
	var out C.struct_ssefold_str
	maybeGC()
	r := C.ssefold_stream_ui_snapshot_json(s.ptr, &out)
	if r != 0 {
		return nil, s.err(r)
	}
	snap := json.RawMessage(goBytes(out))
	runtime.KeepAlive(s)
	return snap, nil
}

// SetConnection sets the connection state the UI shows (the host owns the
// connection; e.g. Reconnector.State).
func (s *Stream) SetConnection(state ConnectionState) error {
	if err := s.use.enter(); err != nil {
		return err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_stream_set_connection(s.ptr, C.uint32_t(state))
	err := s.err(r)
	runtime.KeepAlive(s)
	return err
}

// SetToolProgress records the host's progress report for the running tool
// call id (any JSON value, shown as is in the snapshot).
func (s *Stream) SetToolProgress(id string, progress json.RawMessage) error {
	if err := s.use.enter(); err != nil {
		return err
	}
	defer s.use.leave()
	if s.ptr == nil {
		return ErrClosed
	}
	idView, freeID := strView(id, true)
	defer freeID()
	jsonView, freeJSON := strView(string(progress), true)
	defer freeJSON()
	maybeGC()
	r := C.ssefold_stream_set_tool_progress(s.ptr, idView, jsonView)
	err := s.err(r)
	runtime.KeepAlive(s)
	return err
}
