package ssefold

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// Hostile input and scale (the cases of tests/hostile.rs), generated here.

// longIDThenEvents is the reliability issue's reproducer: one idLen-byte
// id line, then n small events (1 MiB and 20 000: 1.2 MB of input).
func longIDThenEvents(idLen, n int) []byte {
	var b strings.Builder
	b.WriteString("id: ")
	b.WriteString(strings.Repeat("x", idLen))
	b.WriteString("\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: %d\n\n", i)
	}
	return []byte(b.String())
}

func feedAll(t *testing.T, d *Decoder, in []byte, chunk int) ([]Event, []error) {
	t.Helper()
	var evs []Event
	var errs []error
	for len(in) > 0 {
		n := min(chunk, len(in))
		got, err := d.Feed(in[:n])
		evs = append(evs, got...)
		if err != nil {
			errs = append(errs, err)
		}
		in = in[n:]
	}
	return evs, errs
}

func TestHostileLongIDIsRefusedByDefault(t *testing.T) {
	d, err := NewDecoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	evs, errs := feedAll(t, d, longIDThenEvents(1<<20, 20000), 64<<10)
	if len(evs) != 19999 {
		t.Fatalf("%d events", len(evs))
	}
	var e *Error
	if len(errs) != 1 || !errors.As(errs[0], &e) || e.Code != ResultSSEIDTooLong || !errors.Is(errs[0], ErrLimit) {
		t.Fatalf("errors %v", errs)
	}
	for _, ev := range evs {
		if ev.HasID {
			t.Fatal("the refused id is not in force")
		}
	}
}

func TestHostileIDIsSharedNotCopiedPerEvent(t *testing.T) {
	// Raised limit: the 1 MiB id is accepted and every event carries it.
	// Before, each event held its own copy (20 000 x 1 MiB: 6.6 GB peak).
	d, err := NewDecoder(&DecoderConfig{MaxIDLen: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := longIDThenEvents(1<<20, 20000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	evs, errs := feedAll(t, d, in, 64<<10)
	runtime.ReadMemStats(&after)
	if len(errs) != 0 || len(evs) != 20000 {
		t.Fatalf("%d events, errors %v", len(evs), errs)
	}
	first := unsafe.StringData(evs[0].ID)
	for i, ev := range evs {
		if !ev.HasID || len(ev.ID) != 1<<20 || unsafe.StringData(ev.ID) != first {
			t.Fatalf("event %d: id not shared", i)
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("allocated %d bytes for a 1.2 MB input", alloc)
	}
	// A new id is a new string; the decoder's id buffer is reused, so the
	// old strings must keep their bytes.
	evs, errs = feedAll(t, d, []byte("id: 1\ndata: a\n\nid: 2\ndata: b\n\ndata: c\n\n"), 5)
	if len(errs) != 0 || len(evs) != 3 || evs[0].ID != "1" || evs[1].ID != "2" || evs[2].ID != "2" {
		t.Fatalf("%+v %v", evs, errs)
	}
}

func TestHostileIDAtTheLimit(t *testing.T) {
	d, err := NewDecoder(&DecoderConfig{MaxIDLen: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	evs, errs := feedAll(t, d, []byte("id: abc\ndata: 1\n\nid: abcd\ndata: 2\n\ndata: 3\n\n"), 1024)
	if len(evs) != 2 || evs[1].Data != "3" || evs[1].ID != "abc" || len(errs) != 1 {
		t.Fatalf("%+v %v", evs, errs)
	}
}

func TestHostileHugeServerRetryIsCapped(t *testing.T) {
	if p := DefaultReconnectPolicy(); p.MaxServerRetry != 10*time.Minute {
		t.Fatalf("default %v", p.MaxServerRetry)
	}
	for _, text := range []string{"99999999999", "18446744073709551615", "99999999999999999999999999"} {
		d, err := NewDecoder(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Feed([]byte("retry: " + text + "\ndata: x\n\n")); err != nil {
			t.Fatal(err)
		}
		retry, ok := d.ReconnectionTime()
		d.Close()
		if !ok {
			t.Fatal("no retry")
		}
		for _, tc := range []struct {
			policy ReconnectPolicy
			want   time.Duration
		}{
			{DefaultReconnectPolicy(), 10 * time.Minute},
			{ReconnectPolicy{InitialDelay: time.Second, Growth: 2, MaxDelay: time.Minute, MaxRetries: 1}, 10 * time.Minute},
			{func() ReconnectPolicy { p := DefaultReconnectPolicy(); p.MaxServerRetry = 5 * time.Second; return p }(), 5 * time.Second},
		} {
			rc, err := NewReconnector(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			if err := rc.OnConnected(0); err != nil {
				t.Fatal(err)
			}
			if err := rc.OnEvent("", false, nil, &retry); err != nil {
				t.Fatal(err)
			}
			dec, err := rc.OnEnd(StreamEnd{Kind: EndEndedEarly})
			rc.Close()
			if err != nil || dec.Kind != DecisionReconnect || dec.Delay != tc.want {
				t.Fatalf("retry %s: %+v %v, want %v", text, dec, err, tc.want)
			}
		}
	}
	small := 250 * time.Millisecond
	if got, err := DefaultReconnectPolicy().NextDelay(3, &small, 0.5); err != nil || got != small {
		t.Fatalf("%v %v", got, err)
	}
}

// Lone surrogate escapes and stray terminal events (tests/hostile.rs).

func hostileAnthropic(lit string) string {
	return `event: message_start
data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + lit + `}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_stop
data: {"type":"message_stop"}

`
}

func hostileChat(lit string) string {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` +
			delta + `,"finish_reason":` + finish + "}]}\n\n"
	}
	return chunk(`{"role":"assistant","content":`+lit+`}`, "null") + chunk("{}", `"stop"`) + "data: [DONE]\n\n"
}

func hostileResponses(lit string) string {
	ev := func(ty, body string) string {
		return "event: " + ty + "\ndata: {\"type\":\"" + ty + "\"," + body + "}\n\n"
	}
	return ev("response.created", `"response":{"id":"r","object":"response","status":"in_progress","output":[]}`) +
		ev("response.output_item.added", `"output_index":0,"item":{"id":"i","type":"message","role":"assistant","content":[]}`) +
		ev("response.content_part.added", `"output_index":0,"content_index":0,"part":{"type":"output_text","text":""}`) +
		ev("response.output_text.delta", `"output_index":0,"content_index":0,"delta":`+lit) +
		ev("response.completed", `"response":{"id":"r","object":"response","status":"completed","output":[]}`)
}

// foldHostile folds body; returns the warning codes, the streamed text and
// Finish's error.
func foldHostile(t *testing.T, p Provider, body string) ([]string, string, error) {
	t.Helper()
	s, err := NewStream(p, &StreamOptions{EventJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Feed([]byte(body))
	if err != nil {
		t.Fatalf("%v: %v", p, err)
	}
	fin, ferr := s.Finish()
	var codes []string
	var text strings.Builder
	for _, e := range append(evs, fin...) {
		switch e.Kind {
		case KindWarning:
			var w struct{ Code string }
			if err := json.Unmarshal(e.JSON, &w); err != nil {
				t.Fatal(err)
			}
			codes = append(codes, w.Code)
		case KindTextDelta:
			text.WriteString(e.Text)
		}
	}
	return codes, text.String(), ferr
}

func count(codes []string, code string) int {
	n := 0
	for _, c := range codes {
		if c == code {
			n++
		}
	}
	return n
}

func TestHostileLoneSurrogateInATextDeltaIsReplacementCharacter(t *testing.T) {
	lit := `"broken emoji: \ud83d"`
	for _, c := range []struct {
		p    Provider
		body string
	}{
		{Anthropic, hostileAnthropic(lit)},
		{OpenAIChat, hostileChat(lit)},
		{OpenAIResponses, hostileResponses(lit)},
		{Auto, hostileResponses(lit)},
	} {
		codes, text, err := foldHostile(t, c.p, c.body)
		if err != nil || count(codes, "lone_surrogate") != 1 || text != "broken emoji: \uFFFD" {
			t.Errorf("%v: codes %v, text %q, err %v", c.p, codes, text, err)
		}
	}
}

func TestHostileStrayTerminalFirstIsAWarningNotTheEnd(t *testing.T) {
	stop := "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	for _, c := range []struct {
		p    Provider
		body string
	}{
		{Anthropic, stop + hostileAnthropic(`"hi"`)},
		{Auto, stop + hostileAnthropic(`"hi"`)},
		{OpenAIChat, "data: [DONE]\n\n" + hostileChat(`"hi"`)},
		{Auto, "data: [DONE]\n\n" + hostileAnthropic(`"hi"`)},
	} {
		codes, text, err := foldHostile(t, c.p, c.body)
		if err != nil || count(codes, "terminal_before_start") != 1 || text != "hi" {
			t.Errorf("%v: codes %v, text %q, err %v", c.p, codes, text, err)
		}
	}
	// Nothing but the stray terminal: incomplete, not an empty success.
	if _, _, err := foldHostile(t, OpenAIChat, "data: [DONE]\n\n"); err == nil {
		t.Error("a lone [DONE] finished cleanly")
	}
}
