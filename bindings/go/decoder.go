package ssefold

/*
#include "ssefold_go.h"
ssefold_result ssefold_go_decoder_set_callback(struct ssefold_sse_decoder *d, uintptr_t h);
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
)

// Event is one dispatched SSE event (copied into Go memory).
type Event struct {
	// Type is the event type ("message" when the block had none).
	Type string
	// Data is the data lines joined with LF.
	Data string
	// ID is the last event ID in force; valid when HasID.
	ID    string
	HasID bool
	// RetryMS is the block's retry field in milliseconds; valid when HasRetry.
	RetryMS  uint64
	HasRetry bool
}

// UTF8Mode says how invalid UTF-8 in field values is handled.
type UTF8Mode uint32

const (
	// UTF8Replace replaces invalid sequences with U+FFFD (the spec).
	UTF8Replace UTF8Mode = 0
	// UTF8Strict refuses the event (Feed reports ResultSSEInvalidUTF8).
	UTF8Strict UTF8Mode = 1
)

// DecoderConfig holds the decoder's limits; a zero field is not set and
// takes the core's default (16 MiB lines and events, 4 KiB ids), a negative
// one is refused (see StreamOptions).
type DecoderConfig struct {
	MaxLineLen   int
	MaxEventSize int
	// MaxIDLen is the longest id accepted (a longer one is reported as
	// ResultSSEIDTooLong and the id in force is kept).
	MaxIDLen int
	UTF8Mode UTF8Mode
}

func (c *DecoderConfig) toC() (C.struct_ssefold_sse_decoder_config, error) {
	var out C.struct_ssefold_sse_decoder_config
	maybeGC()
	C.ssefold_sse_decoder_config_default(&out)
	if c != nil {
		if err := setSize("MaxLineLen", c.MaxLineLen, &out.max_line_len); err != nil {
			return out, err
		}
		if err := setSize("MaxEventSize", c.MaxEventSize, &out.max_event_size); err != nil {
			return out, err
		}
		if err := setSize("MaxIDLen", c.MaxIDLen, &out.max_id_len); err != nil {
			return out, err
		}
		out.utf8_mode = C.uint32_t(c.UTF8Mode)
	}
	return out, nil
}

type decoderState struct {
	events   []Event
	panicked any
	// The id of the last event, converted once and shared by every event
	// until the C side's id_generation changes (the id is repeated on every
	// event and may be up to MaxIDLen bytes).
	id       string
	hasID    bool
	idGen    uint64
	idCached bool
}

// eventID returns the id of ev, reusing the last Go string while the
// decoder's id generation is unchanged.
func (d *decoderState) eventID(ev *C.struct_ssefold_sse_event) (string, bool) {
	gen := uint64(ev.id_generation)
	if !d.idCached || gen != d.idGen {
		d.id, d.hasID = goString(ev.id)
		d.idGen, d.idCached = gen, true
	}
	return d.id, d.hasID
}

// Decoder is an incremental SSE decoder.
type Decoder struct {
	ptr    *C.struct_ssefold_sse_decoder
	handle cgo.Handle
	state  *decoderState
	use    inUse
}

// NewDecoder creates a decoder; cfg may be nil for the defaults.
func NewDecoder(cfg *DecoderConfig) (*Decoder, error) {
	c, err := cfg.toC()
	if err != nil {
		return nil, err
	}
	var ptr *C.struct_ssefold_sse_decoder
	maybeGC()
	if r := C.ssefold_sse_decoder_new(&c, &ptr); r != 0 {
		return nil, &Error{Code: Result(r)}
	}
	d := &Decoder{ptr: ptr, state: &decoderState{}}
	d.handle = cgo.NewHandle(d.state)
	maybeGC()
	C.ssefold_go_decoder_set_callback(ptr, C.uintptr_t(d.handle))
	return track(d, (*Decoder).Close), nil
}

// Close frees the decoder. It is idempotent.
func (d *Decoder) Close() error {
	if err := d.use.enter(); err != nil {
		return err
	}
	defer d.use.leave()
	if d.ptr == nil {
		return nil
	}
	maybeGC()
	C.ssefold_sse_decoder_free(d.ptr)
	d.ptr = nil
	untrack(d, &d.handle)
	return nil
}

func (d *Decoder) lastError() string {
	var s C.struct_ssefold_str
	maybeGC()
	C.ssefold_sse_decoder_last_error(d.ptr, &s)
	m, _ := goString(s)
	return m
}

// Feed decodes a chunk and returns the events it completed. Decoding
// errors (line too long, event too large, invalid UTF-8 in strict mode)
// do not stop it: the rest of the chunk is decoded and the first error is
// returned with every event.
func (d *Decoder) Feed(b []byte) ([]Event, error) {
	if err := d.use.enter(); err != nil {
		return nil, err
	}
	defer d.use.leave()
	if d.ptr == nil {
		return nil, ErrClosed
	}
	d.state.events = d.state.events[:0]
	var first error
	for len(b) > 0 {
		p, n := bytesPtr(b)
		var consumed C.size_t
		maybeGC()
		r := C.ssefold_sse_decoder_feed(d.ptr, p, n, &consumed)
		if pv := d.state.panicked; pv != nil {
			d.state.panicked = nil
			panic(pv)
		}
		if r == 0 {
			break
		}
		if r >= 100 && r < 200 {
			return nil, &Error{Code: Result(r), Message: d.lastError()}
		}
		if r != 1 && first == nil {
			first = &Error{Code: Result(r), Message: d.lastError()}
		}
		if consumed == 0 && r != 1 {
			break
		}
		b = b[int(consumed):]
	}
	runtime.KeepAlive(b)
	runtime.KeepAlive(d)
	out := make([]Event, len(d.state.events))
	copy(out, d.state.events)
	return out, first
}

// EndOfStream reports what Finish found (Rust sse::EndOfStream, C
// ssefold_sse_end).
type EndOfStream struct {
	// DiscardedBytes after the last event boundary (0 for a clean end).
	DiscardedBytes uint64
	// Unterminated is the event that was not dispatched, if any.
	Unterminated *Event
}

// End is the old name of EndOfStream.
//
// Deprecated: use EndOfStream, the name every binding uses.
type End = EndOfStream

// Finish ends the stream (the decoder is then ready for a reconnection;
// the last event ID and reconnection time are kept).
func (d *Decoder) Finish() (EndOfStream, error) {
	if err := d.use.enter(); err != nil {
		return EndOfStream{}, err
	}
	defer d.use.leave()
	if d.ptr == nil {
		return EndOfStream{}, ErrClosed
	}
	var out C.struct_ssefold_sse_end
	maybeGC()
	r := C.ssefold_sse_decoder_finish(d.ptr, &out)
	defer runtime.KeepAlive(d)
	if r != 0 {
		return EndOfStream{}, &Error{Code: Result(r), Message: d.lastError()}
	}
	end := EndOfStream{DiscardedBytes: uint64(out.discarded_bytes)}
	if out.has_unterminated {
		e := Event{}
		e.Type, _ = goString(out.unterminated.event)
		e.Data, _ = goString(out.unterminated.data)
		e.ID, e.HasID = goString(out.unterminated.id)
		e.HasRetry = bool(out.unterminated.has_retry)
		e.RetryMS = uint64(out.unterminated.retry_ms)
		end.Unterminated = &e
	}
	return end, nil
}

// Reset forgets everything, last event ID and reconnection time included.
func (d *Decoder) Reset() error {
	if err := d.use.enter(); err != nil {
		return err
	}
	defer d.use.leave()
	if d.ptr == nil {
		return ErrClosed
	}
	maybeGC()
	r := C.ssefold_sse_decoder_reset(d.ptr)
	runtime.KeepAlive(d)
	return newError(r, "")
}

// LastEventID is the ID to send as Last-Event-ID (ok false before any id).
func (d *Decoder) LastEventID() (id string, ok bool) {
	if d.use.enter() != nil {
		return "", false
	}
	defer d.use.leave()
	if d.ptr == nil {
		return "", false
	}
	var s C.struct_ssefold_str
	maybeGC()
	C.ssefold_sse_decoder_last_event_id(d.ptr, &s)
	id, ok = goString(s)
	runtime.KeepAlive(d)
	return id, ok
}

// ReconnectionTime is the last valid retry field in milliseconds.
func (d *Decoder) ReconnectionTime() (ms uint64, ok bool) {
	if d.use.enter() != nil {
		return 0, false
	}
	defer d.use.leave()
	if d.ptr == nil {
		return 0, false
	}
	var has C.bool
	var v C.uint64_t
	maybeGC()
	C.ssefold_sse_decoder_reconnection_time(d.ptr, &has, &v)
	runtime.KeepAlive(d)
	return uint64(v), bool(has)
}
