package ssefold

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestDecoderBasics(t *testing.T) {
	d, err := NewDecoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := "event: a\ndata: x\ndata: y\nid: 7\nretry: 250\n\n: c\ndata: é"
	var got []Event
	for i := 0; i < len(in); i++ { // split everywhere, even inside é
		evs, err := d.Feed([]byte(in[i : i+1]))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs...)
	}
	want := []Event{{Type: "a", Data: "x\ny", ID: "7", HasID: true, RetryMS: 250, HasRetry: true}}
	if len(got) != 1 || got[0] != want[0] {
		t.Fatalf("got %#v", got)
	}
	if id, ok := d.LastEventID(); !ok || id != "7" {
		t.Errorf("last id %q %v", id, ok)
	}
	if ms, ok := d.ReconnectionTime(); !ok || ms != 250 {
		t.Errorf("retry %d %v", ms, ok)
	}
	end, err := d.Finish()
	if err != nil || end.Unterminated == nil || end.Unterminated.Data != "é" || end.DiscardedBytes == 0 {
		t.Fatalf("end %#v %v", end, err)
	}
	if err := d.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.LastEventID(); ok {
		t.Error("reset kept the id")
	}
}

func TestDecoderLimitError(t *testing.T) {
	d, _ := NewDecoder(&DecoderConfig{MaxLineLen: 8})
	defer d.Close()
	evs, err := d.Feed([]byte("data: 0123456789\n\ndata: ok\n\n"))
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != ResultSSELineTooLong || e.Message == "" {
		t.Fatalf("%#v", err)
	}
	if len(evs) != 1 || evs[0].Data != "ok" {
		t.Fatalf("decoding did not go on: %#v", evs)
	}
}

func TestEncoderRoundTrip(t *testing.T) {
	e, _ := NewEncoder()
	defer e.Close()
	in := []Event{
		{Type: "delta", Data: "line1\nline2", ID: "1", HasID: true},
		{Data: "", ID: "", HasID: true, RetryMS: 10, HasRetry: true},
	}
	for _, ev := range in {
		if err := e.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Comment("hi"); err != nil {
		t.Fatal(err)
	}
	if err := e.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	b := e.Bytes()
	if !bytes.Contains(b, []byte("data: line1\ndata: line2\n")) {
		t.Fatalf("%q", b)
	}
	d, _ := NewDecoder(nil)
	defer d.Close()
	got, err := d.Feed(b)
	if err != nil || len(got) != 2 || got[0].Type != "delta" || got[0].Data != "line1\nline2" ||
		got[1].Type != "message" || got[1].ID != "" || got[1].RetryMS != 10 {
		t.Fatalf("%#v %v", got, err)
	}
	if err := e.Event(Event{Type: "a\nb"}); err == nil || err.(*Error).Code != ResultEncodeLineBreak {
		t.Fatalf("line break accepted: %v", err)
	}
	e.Clear()
	if len(e.Bytes()) != 0 {
		t.Fatal("clear")
	}
}

func TestPartialJSON(t *testing.T) {
	p, _ := NewPartialJSON(&PartialJSONOptions{Events: true})
	defer p.Close()
	doc := `{"city": "Par\u00e9is", "days": [1, 2]}`
	var evs []PathEvent
	for i := 0; i < len(doc); i += 3 {
		got, err := p.Push([]byte(doc[i:min(i+3, len(doc))]))
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, got...)
		if i == 12 {
			v, ok, _ := p.Value(true)
			if !ok || !strings.HasPrefix(string(v), `{"city":"Par`) {
				t.Errorf("partial value %s", v)
			}
		}
	}
	var text string
	var sawIndex bool
	for _, e := range evs {
		if e.Kind == StringAppend && len(e.Path) == 1 && e.Path[0].Key == "city" {
			text += e.Text
		}
		if e.Kind == ValueComplete && len(e.Path) == 2 && e.Path[1].IsIndex && e.Path[1].Index == 1 {
			sawIndex = string(e.Value) == "2"
		}
	}
	if text != "Paréis" || !sawIndex {
		t.Fatalf("text %q index %v events %#v", text, sawIndex, evs)
	}
	v, err := p.Finish()
	if err != nil || string(v) != `{"city":"Paréis","days":[1,2]}` {
		t.Fatalf("%s %v", v, err)
	}
	p.Reset()
	p.Push([]byte(`[1,`))
	if _, err := p.Finish(); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("want incomplete, got %v", err)
	}
	if _, err := p.Push([]byte(`}`)); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("want invalid, got %v", err)
	}
	v, ok, err := ParsePartialJSON(`{"a": [1, {"b": "x`, true)
	if err != nil || !ok || string(v) != `{"a":[1,{"b":"x"}]}` {
		t.Fatalf("%s %v %v", v, ok, err)
	}
	if _, ok, _ := ParsePartialJSON("  ", false); ok {
		t.Fatal("value from blanks")
	}
}

func TestReconnectPolicy(t *testing.T) {
	p := DefaultReconnectPolicy()
	if p.InitialDelay != time.Second || p.Growth != 1.5 || p.MaxRetries != 2 || p.MaxDelay != 30*time.Second {
		t.Fatalf("%+v", p)
	}
	d0, _ := p.NextDelay(0, nil, 0.5)
	d1, _ := p.NextDelay(1, nil, 0.5)
	if d0 != time.Second || d1 != 1500*time.Millisecond {
		t.Fatalf("%v %v", d0, d1)
	}
	srv := 42 * time.Millisecond
	if d, _ := p.NextDelay(5, &srv, 0.9); d != srv {
		t.Fatalf("server retry ignored: %v", d)
	}
	if !IsRetryableErrorType("overloaded_error") || IsRetryableErrorType("invalid_request_error") {
		t.Fatal("retryable")
	}
	bad := p
	bad.Growth = 0.5
	if _, err := bad.NextDelay(0, nil, 0.5); err == nil {
		t.Fatal("growth < 1 accepted")
	}
}

func TestReconnector(t *testing.T) {
	rc, _ := NewReconnector(DefaultReconnectPolicy())
	defer rc.Close()
	rc.OnConnected(0)
	if s, _ := rc.State(); s != Connected || s.String() != "connected" {
		t.Fatalf("state %v", s)
	}
	retry := uint64(300)
	rc.OnEvent("e5", true, nil, &retry)
	d, err := rc.OnEnd(StreamEnd{Kind: EndTransportError, Message: "reset"})
	if err != nil || d.Kind != DecisionReconnect || d.Attempt != 1 || d.Delay != 300*time.Millisecond ||
		d.Cursor.Kind != CursorLastEventID || d.Cursor.LastEventID != "e5" {
		t.Fatalf("%+v %v", d, err)
	}
	rc.OnConnected(1000)
	d, _ = rc.OnEnd(StreamEnd{Kind: EndProviderError, ErrorType: "overloaded_error", Message: "busy"})
	if d.Kind != DecisionFail || d.ErrorType != "overloaded_error" || d.Message != "busy" || !d.Retryable {
		t.Fatalf("%+v", d)
	}
}

func TestStreamErrorsAndClose(t *testing.T) {
	body, _ := os.ReadFile("../../tests/fixtures/anthropic/error_mid_stream.sse")
	s, _ := NewStream(Anthropic, nil)
	_, err := s.Feed(body)
	if !errors.Is(err, ErrProviderError) {
		t.Fatalf("%v", err)
	}
	if _, err := s.Feed([]byte("data: {}\n\n")); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed stream fed: %v", err)
	}
	if m, err := s.Message(); err != nil || !json.Valid(m) {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := s.Feed(nil); err != ErrClosed {
		t.Fatal(err)
	}
	if _, err := s.Message(); err != ErrClosed {
		t.Fatal(err)
	}
	if _, err := NewStream(Provider(99), nil); err == nil {
		t.Fatal("bad provider accepted")
	}
	// The wrong dialect: refused at the first event, naming the one seen.
	chat, _ := NewStream(OpenAIChat, nil)
	defer chat.Close()
	body, _ = os.ReadFile("../../tests/fixtures/anthropic/interleaved_tools.sse")
	_, err = chat.Feed(body)
	var e *Error
	if !errors.Is(err, ErrDialectMismatch) || !errors.Is(err, ErrInvalidInput) || !errors.As(err, &e) ||
		e.Code != ResultStreamDialectMismatch || !strings.Contains(e.Message, "anthropic") {
		t.Fatalf("%v", err)
	}
}

// TestNoLeak checks the handle count and RSS stay flat over many
// create/use/close cycles, and that finalizers free forgotten handles.
func TestNoLeak(t *testing.T) {
	body, _ := os.ReadFile("../../tests/fixtures/anthropic/interleaved_tools.sse")
	cycle := func() {
		s, _ := NewStream(Anthropic, &StreamOptions{EventJSON: true})
		s.Feed(body)
		s.Finish()
		s.Message()
		s.Close()
		d, _ := NewDecoder(nil)
		d.Feed(body)
		d.Close()
		p, _ := NewPartialJSON(&PartialJSONOptions{Events: true})
		p.Push([]byte(`{"a":[1,2,"xyz"]}`))
		p.Close()
		e, _ := NewEncoder()
		e.Event(Event{Data: "x"})
		e.Close()
		r, _ := NewReconnector(DefaultReconnectPolicy())
		r.Close()
	}
	// The leak measure is the normal build's; the GC-stress build (a
	// collection before every C call) runs a few cycles for KeepAlive.
	warm, cycles := 2000, 20000
	if gcStress {
		warm, cycles = 50, 200
	}
	base := LiveHandles()
	for i := 0; i < warm; i++ {
		cycle()
	}
	// Two windows of cycles: a leak grows the RSS in each, while the
	// runtime's one-off growth (heap pacing, the race detector's shadow
	// memory, under a loaded machine up to 16 MiB once in CI) does not.
	rss0 := rssKB(t)
	for i := 0; i < cycles; i++ {
		cycle()
	}
	rss1 := rssKB(t)
	for i := 0; i < cycles; i++ {
		cycle()
	}
	rss2 := rssKB(t)
	if LiveHandles() != base {
		t.Fatalf("live handles %d, want %d", LiveHandles(), base)
	}
	if rss0 > 0 && rss1-rss0 > 8*1024 && rss2-rss1 > 8*1024 {
		t.Fatalf("RSS grew %d then %d KiB over two windows of %d cycles", rss1-rss0, rss2-rss1, cycles)
	}
	// Forgotten handles are freed by the finalizer.
	for i := 0; i < 100; i++ {
		NewStream(Anthropic, nil)
	}
	for i := 0; i < 20 && LiveHandles() != base; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if LiveHandles() != base {
		t.Fatalf("finalizers left %d handles", LiveHandles()-base)
	}
}

func rssKB(t *testing.T) int64 {
	runtime.GC()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res int64
	_, _ = fmtSscan(string(b), &size, &res)
	return res * int64(os.Getpagesize()) / 1024
}
