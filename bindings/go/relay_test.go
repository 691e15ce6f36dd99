package ssefold

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

const relayFixture = "../../tests/fixtures/anthropic/interleaved_tools.sse"

// relayFeed relays body in chunk-byte pieces, then finishes.
func relayFeed(t *testing.T, format RelayFormat, body []byte, chunk int) []byte {
	t.Helper()
	rl, err := NewRelayWithStream(Auto, &RelayOptions{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	var out bytes.Buffer
	for at := 0; at < len(body); at += chunk {
		b, err := rl.Feed(body[at:min(at+chunk, len(body))])
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	for _, step := range []func() ([]byte, error){rl.EndOfInput, func() ([]byte, error) { return rl.Finish(nil) }} {
		b, err := step()
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	return out.Bytes()
}

// uiChunks parses the data lines of AI SDK bytes ("[DONE]" as nil).
func uiChunks(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			out = append(out, nil)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		out = append(out, m)
	}
	return out
}

func TestRelayFeedInAnyChunking(t *testing.T) {
	body, err := os.ReadFile(relayFixture)
	if err != nil {
		t.Fatal(err)
	}
	whole := relayFeed(t, RelayAISDK, body, len(body))
	for _, chunk := range []int{1, 17, 256} {
		if got := relayFeed(t, RelayAISDK, body, chunk); !bytes.Equal(got, whole) {
			t.Fatalf("chunk %d: bytes differ", chunk)
		}
	}
	chunks := uiChunks(t, whole)
	if chunks[0]["type"] != "start" || chunks[len(chunks)-1] != nil {
		t.Fatalf("bad framing: %v ... %v", chunks[0], chunks[len(chunks)-1])
	}
	calls := 0
	for _, c := range chunks {
		if c != nil && c["type"] == "tool-input-available" {
			calls++
		}
	}
	if calls != 4 { // two host tools, a server tool, an MCP tool
		t.Fatalf("%d tool-input-available chunks, want 4", calls)
	}
	catalog := relayFeed(t, RelayCatalog, body, 64)
	if !bytes.Contains(catalog, []byte("event: tool-call\n")) {
		t.Fatalf("no tool-call in the catalog bytes: %s", catalog)
	}
	// Every event the catalog sent is one of its listed names.
	names := CatalogEventNames()
	if len(names) != 12 {
		t.Fatalf("CatalogEventNames: %q", names)
	}
	for _, line := range strings.Split(string(catalog), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok && !slices.Contains(names, name) {
			t.Fatalf("event %q is not in CatalogEventNames %q", name, names)
		}
	}
}

func TestRelayPushGivesTheBytesOfFeed(t *testing.T) {
	body, err := os.ReadFile(relayFixture)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStream(Auto, &StreamOptions{EventJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	events, err := s.Feed(body)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	rl, err := NewRelay(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	var out bytes.Buffer
	for _, ev := range append(events, rest...) {
		b, err := rl.Push(ev)
		if err != nil {
			t.Fatalf("%s: %v", ev.JSON, err)
		}
		out.Write(b)
	}
	b, err := rl.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(b)
	if want := relayFeed(t, RelayAISDK, body, 100); !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("pushed bytes differ from fed bytes:\n%s\n---\n%s", out.Bytes(), want)
	}
	if _, err := rl.Feed(body); !errors.Is(err, ErrNoStream) {
		t.Fatalf("Feed on a push relay: %v", err)
	}
}

func TestRelayHostEventsReplayKeepAliveAndErrors(t *testing.T) {
	rl, err := NewRelay(&RelayOptions{Format: RelayCatalog, KeepAlive: time.Second, ReplayBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	b, err := rl.ToolResult("call_1", map[string]int{"temp": 21}, false, 12*time.Millisecond)
	// The seed's catalog payloads, member for member (a call never shown
	// has no name).
	want := "id: 1\nevent: tool-result\ndata: {\"id\":\"call_1\",\"name\":\"\",\"result\":{\"temp\":21},\"duration\":12}\n\n"
	if err != nil || string(b) != want {
		t.Fatalf("%q, %v", b, err)
	}
	b, err = rl.ApprovalRequired("ap1", "call_2", "rm", json.RawMessage(`{"path":"/"}`), "")
	want = "id: 2\nevent: approval-required\ndata: {\"approvalId\":\"ap1\",\"toolName\":\"rm\",\"input\":{\"path\":\"/\"}," +
		"\"message\":\"Allow rm to run?\",\"toolCallId\":\"call_2\"}\n\n"
	if err != nil || string(b) != want {
		t.Fatalf("%q, %v", b, err)
	}
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	b, err = rl.Log("info", "a line", map[string]string{"pageId": "p1"}, at, "trace-abc")
	want = "id: 3\nevent: log\ndata: {\"level\":\"info\",\"message\":\"a line\",\"metadata\":{\"pageId\":\"p1\"}," +
		"\"timestamp\":\"2025-01-15T10:30:00.000Z\",\"traceId\":\"trace-abc\"}\n\n"
	if err != nil || string(b) != want {
		t.Fatalf("%q, %v", b, err)
	}
	b, err = rl.ErrorEvent("tool failed", "tool_error", true)
	want = "id: 4\nevent: error\ndata: {\"error\":\"tool failed\",\"code\":\"tool_error\",\"recoverable\":true}\n\n"
	if err != nil || string(b) != want {
		t.Fatalf("%q, %v", b, err)
	}
	// No provider turn opened a step: none is closed.
	if b, err = rl.FinishStep(); err != nil || len(b) != 0 {
		t.Fatalf("%q, %v", b, err)
	}
	t0 := time.UnixMilli(1_000_000)
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{0, ""}, {999 * time.Millisecond, ""}, {time.Second, ": keep-alive\n\n"}} {
		if b, err = rl.KeepAlive(t0.Add(c.at)); err != nil || string(b) != c.want {
			t.Fatalf("keep-alive at %v: %q, %v", c.at, b, err)
		}
	}
	if b, err = rl.ReplayAfter("3"); err != nil || !bytes.HasPrefix(b, []byte("id: 4\n")) {
		t.Fatalf("replay: %q, %v", b, err)
	}
	if _, err = rl.ReplayAfter("1"); !errors.Is(err, ErrReplayTooOld) {
		t.Fatalf("replay of a dropped id: %v", err)
	}
	if _, err = rl.ReplayAfter("77"); !errors.Is(err, ErrUnknownEventID) {
		t.Fatalf("replay of an unknown id: %v", err)
	}
	if _, err = rl.PushJSON([]byte(`{"event":"text_delta"}`)); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("invalid event: %v", err)
	}
	if _, err = rl.ToolResult("c", func() {}, false, -1); err == nil {
		t.Fatal("an output json cannot marshal was accepted")
	}
	if b, err = rl.Finish(map[string]int{"input_tokens": 3}); err != nil ||
		!bytes.Contains(b, []byte(`{"finishReason":"stop","usage":{"promptTokens":3,"completionTokens":0,"totalTokens":3},"stepCount":0}`)) {
		t.Fatalf("%q, %v", b, err)
	}
	// 4 events, then finish (no step was open: no step-completed).
	if id, finished := rl.LastEventID(); id != 5 || !finished {
		t.Fatalf("status %d %v", id, finished)
	}
	if _, err = rl.Log("info", "late", nil, at, "t"); !errors.Is(err, ErrRelayFinished) {
		t.Fatalf("after finish: %v", err)
	}
	if _, err = NewRelay(&RelayOptions{Format: 9}); err == nil {
		t.Fatal("an unknown format was accepted")
	}
	rl.Close()
	if _, err = rl.Log("info", "closed", nil, at, "t"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestRelayStreamFailureComesWithItsErrorEvent(t *testing.T) {
	rl, err := NewRelayWithStream(Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	b, err := rl.Feed([]byte("event: message_start\ndata: {not json}\n\n"))
	if !errors.Is(err, ErrInvalidInput) || !bytes.Contains(b, []byte(`"type":"error"`)) {
		t.Fatalf("%q, %v", b, err)
	}
	headers := rl.Headers()
	found := false
	for _, h := range headers {
		found = found || (h.Name == "x-vercel-ai-ui-message-stream" && h.Value == "v1")
	}
	if !found {
		t.Fatalf("headers %v", headers)
	}
}

// Each call's frames, stored by id, are its output; a store resuming after
// an id (ResumePoint) sends what ReplayAfter sends.
func TestRelayFramesAndResumePoint(t *testing.T) {
	body, err := os.ReadFile(relayFixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []RelayFormat{RelayAISDK, RelayCatalog} {
		rl, err := NewRelayWithStream(Auto, &RelayOptions{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		var store [][]byte // frame of id i+1 at index i
		record := func(out []byte, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			var joined []byte
			for _, f := range rl.Frames() {
				if f.ID != uint64(len(store)+1) {
					t.Fatalf("frame id %d after %d frames", f.ID, len(store))
				}
				store = append(store, f.Bytes)
				joined = append(joined, f.Bytes...)
			}
			if _, finished := rl.LastEventID(); finished {
				joined = append(joined, rl.Trailer()...)
			}
			if !bytes.Equal(joined, out) {
				t.Fatalf("frames %q != output %q", joined, out)
			}
		}
		for at := 0; at < len(body); at += 80 {
			record(rl.Feed(body[at:min(at+80, len(body))]))
		}
		record(rl.EndOfInput())
		record(rl.Finish(nil))
		after, err := ResumePoint("5", 1, uint64(len(store)))
		if err != nil || after != 5 {
			t.Fatalf("%d, %v", after, err)
		}
		served := append(bytes.Join(store[after:], nil), rl.Trailer()...)
		if replay, err := rl.ReplayAfter("5"); err != nil || !bytes.Equal(replay, served) {
			t.Fatalf("replay %q != served %q (%v)", replay, served, err)
		}
		if len(rl.Frames()) != 0 {
			t.Fatal("a replay writes no frame")
		}
		rl.Close()
	}
	if _, err := ResumePoint("2", 4, 9); !errors.Is(err, ErrReplayTooOld) {
		t.Fatal(err)
	}
	if _, err := ResumePoint("2", 0, 0); !errors.Is(err, ErrReplayTooOld) {
		t.Fatal(err)
	}
	if _, err := ResumePoint("10", 1, 9); !errors.Is(err, ErrUnknownEventID) {
		t.Fatal(err)
	}
}

// toolInputDeltas concatenates the inputTextDelta of every tool-input-delta.
func toolInputDeltas(t *testing.T, b []byte) (string, int) {
	t.Helper()
	var text strings.Builder
	n := 0
	for _, c := range uiChunks(t, b) {
		if c != nil && c["type"] == "tool-input-delta" {
			text.WriteString(c["inputTextDelta"].(string))
			n++
		}
	}
	return text.String(), n
}

func TestRelayToolInputCoalescingAndTick(t *testing.T) {
	// A call whose arguments come in several deltas in a row.
	body, err := os.ReadFile("../../tests/fixtures/openai_responses/reasoning_text_tool.sse")
	if err != nil {
		t.Fatal(err)
	}
	relayWith := func(opts *RelayOptions, ticks bool) []byte {
		rl, err := NewRelayWithStream(Auto, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer rl.Close()
		var out bytes.Buffer
		start := time.UnixMilli(1000)
		if b, err := rl.Tick(start); err != nil || len(b) != 0 {
			t.Fatalf("tick before anything: %q %v", b, err)
		}
		for at := 0; at < len(body); at += 40 {
			b, err := rl.Feed(body[at:min(at+40, len(body))])
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
			if ticks {
				b, err = rl.Tick(start.Add(5 * time.Millisecond)) // not due yet
				if err != nil {
					t.Fatal(err)
				}
				out.Write(b)
			}
		}
		for _, step := range []func() ([]byte, error){rl.Flush, rl.EndOfInput, func() ([]byte, error) { return rl.Finish(nil) }} {
			b, err := step()
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
		}
		return out.Bytes()
	}
	plain, many := toolInputDeltas(t, relayWith(&RelayOptions{ToolInputCoalesceBytes: -1}, false))
	held, few := toolInputDeltas(t, relayWith(&RelayOptions{ToolInputCoalesceBytes: 1 << 20, ToolInputCoalesce: 10 * time.Millisecond}, true))
	byDefault, _ := toolInputDeltas(t, relayWith(nil, true))
	if plain == "" || held != plain || byDefault != plain {
		t.Fatalf("rebuilt input differs:\n%q\n%q\n%q", plain, held, byDefault)
	}
	if few == 0 || few >= many {
		t.Fatalf("%d deltas coalesced, %d without", few, many)
	}
	var closed Relay
	if _, err := closed.Tick(time.Now()); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if _, err := closed.Flush(); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}

func TestRelayAbortEndsTheRunWithAbort(t *testing.T) {
	body, err := os.ReadFile(relayFixture)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := NewRelayWithStream(Auto, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	out, err := rl.Feed(body[:len(body)/2])
	if err != nil {
		t.Fatal(err)
	}
	end, err := rl.Abort()
	if err != nil {
		t.Fatal(err)
	}
	chunks := uiChunks(t, append(out, end...))
	if n := len(chunks); n < 3 || chunks[n-2]["type"] != "abort" || chunks[n-1] != nil {
		t.Fatalf("ends %v", chunks[max(0, n-3):])
	}
	for _, c := range chunks {
		if c != nil && c["type"] == "finish" {
			t.Fatal("an aborted run has no finish")
		}
	}
	if _, err := rl.Abort(); !errors.Is(err, ErrRelayFinished) {
		t.Fatal(err)
	}
}

func TestRelayMessageMetadataFromTheHost(t *testing.T) {
	rl, err := NewRelay(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	out, err := rl.MessageMetadata(map[string]any{"timings": map[string]int{"ttfc_ms": 12}})
	if err != nil || !bytes.Contains(out, []byte(`{"type":"message-metadata","messageMetadata":{"timings":{"ttfc_ms":12}}}`)) {
		t.Fatalf("%q %v", out, err)
	}
	var e *Error
	if _, err := rl.MessageMetadata([]int{1}); !errors.As(err, &e) || e.Code != ResultInvalidArgument {
		t.Fatalf("a list: %v", err)
	}
}
