package ssefold

import (
	"errors"
	"math"
	"testing"
)

// One semantics for every limit (the core's ssefold::config): a zero field
// is not set (the core's default), a set one means its number and the core
// checks it; what C's types cannot hold (a negative, more than 32 bits for
// an event-stream limit) is refused as an invalid argument.
func TestStreamOptionsLimits(t *testing.T) {
	s, err := NewStream(Anthropic, &StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for name, o := range map[string]StreamOptions{
		"MaxParts":      {MaxParts: -1},
		"MaxChoices":    {MaxChoices: -5},
		"SSE":           {SSE: DecoderConfig{MaxIDLen: -1}},
		"MaxHeadersLen": {EventStream: EventStreamLimits{MaxHeadersLen: math.MaxUint32 + 1}},
		"MaxMessageLen": {EventStream: EventStreamLimits{MaxMessageLen: -1}},
	} {
		_, err := NewStream(Anthropic, &o)
		var e *Error
		if !errors.As(err, &e) || e.Code != ResultInvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewDecoder(&DecoderConfig{MaxLineLen: -1}); err == nil {
		t.Error("a negative MaxLineLen was accepted")
	}
	// Negative MaxPathEventsPerFeed: the C 0, no path events.
	s, err = NewStream(Anthropic, &StreamOptions{MaxPathEventsPerFeed: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// The old names stay, as aliases, for a deprecation period.
func TestDeprecatedNamesAreAliases(t *testing.T) {
	var c Cursor = ResumeCursor{Kind: CursorLastEventID, LastEventID: "7"}
	var e End = EndOfStream{DiscardedBytes: 1}
	if c.LastEventID != "7" || e.DiscardedBytes != 1 {
		t.Fatal(c, e)
	}
}
