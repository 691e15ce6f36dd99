package ssefold

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestStreamAbortAndReconnect(t *testing.T) {
	body, _ := os.ReadFile("../../tests/fixtures/anthropic/thinking_text_citations.sse")
	want, _ := os.ReadFile("../../tests/fixtures/anthropic/thinking_text_citations.json")
	events := strings.SplitAfter(string(body), "\n\n")
	var withIDs []string
	for i, e := range events {
		if strings.TrimSpace(e) == "" {
			continue
		}
		withIDs = append(withIDs, "id: "+strconv.Itoa(i+1)+"\nretry: 7\n"+e)
	}
	// Resume: cut mid-event after 4 events, reconnect, send the rest.
	s, _ := NewStream(Anthropic, nil)
	defer s.Close()
	first := strings.Join(withIDs[:4], "") + withIDs[4][:len(withIDs[4])/2]
	if _, err := s.Feed([]byte(first)); err != nil {
		t.Fatal(err)
	}
	c, err := s.ResumeCursor()
	if err != nil || c.Kind != CursorLastEventID || c.LastEventID != "4" {
		t.Fatalf("cursor %+v %v", c, err)
	}
	if ms, ok := s.ReconnectionTime(); !ok || ms != 7 {
		t.Fatalf("retry %d %v", ms, ok)
	}
	if err := s.Reconnect(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed([]byte(strings.Join(withIDs[4:], ""))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	m, _ := s.Message()
	if !jsonEqual(t, m, want) {
		t.Fatalf("resumed message\n got %s\nwant %s", m, want)
	}
	// Restart: the server starts over after the reconnection.
	r, _ := NewStream(Anthropic, nil)
	defer r.Close()
	r.Feed([]byte(first))
	r.Reconnect()
	evs, err := r.Feed([]byte(strings.Join(withIDs, "")))
	if err != nil || len(evs) == 0 || evs[0].Kind != KindTurnReset {
		t.Fatalf("restart: %v %+v", err, evs[:min(1, len(evs))])
	}
	r.Finish()
	m, _ = r.Message()
	if !jsonEqual(t, m, want) {
		t.Fatalf("restarted message\n got %s\nwant %s", m, want)
	}
	// Abort: one turn end "aborted", then closed; idempotent.
	a, _ := NewStream(Anthropic, nil)
	defer a.Close()
	a.Feed([]byte(first))
	evs, err = a.Abort()
	if err != nil || len(evs) != 1 || evs[0].Kind != KindTurnEnd || evs[0].Text != "aborted" || !a.IsAborted() {
		t.Fatalf("abort: %v %+v", err, evs)
	}
	if evs, err := a.Abort(); err != nil || len(evs) != 0 {
		t.Fatalf("second abort: %v %+v", err, evs)
	}
	if _, err := a.Feed([]byte(withIDs[5])); err == nil {
		t.Fatal("fed after abort")
	}
}

// IsCompleteAtEnd: a Chat body without data: [DONE] is complete at its end
// once every choice has its finish_reason, and Finish then ends the turn.
func TestStreamIsCompleteAtEnd(t *testing.T) {
	body, err := os.ReadFile("../../tests/fixtures/openai_chat/no_done_vllm.sse")
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.LastIndex(body, []byte("data: "))
	s, _ := NewStream(OpenAIChat, nil)
	defer s.Close()
	if s.IsCompleteAtEnd() {
		t.Fatal("complete before any event")
	}
	s.Feed(body[:cut])
	if s.IsCompleteAtEnd() {
		t.Fatal("complete before the finish_reason")
	}
	s.Feed(body[cut:])
	if _, terminated := s.Status(); !s.IsCompleteAtEnd() || terminated {
		t.Fatalf("after the finish_reason: complete %v, terminated %v", s.IsCompleteAtEnd(), terminated)
	}
	evs, err := s.Finish()
	if err != nil || len(evs) != 2 || evs[0].Kind != KindWarning || evs[1].Kind != KindTurnEnd || evs[1].Text != "stop" {
		t.Fatalf("finish: %v %+v", err, evs)
	}
	if !s.IsCompleteAtEnd() {
		t.Fatal("not complete after a normal finish")
	}
	missing, _ := NewStream(Auto, nil)
	defer missing.Close()
	usage, _ := os.ReadFile("../../tests/fixtures/openai_chat/no_done_usage_missing.sse")
	missing.Feed(usage)
	if missing.IsCompleteAtEnd() {
		t.Fatal("complete without the announced usage")
	}
	if _, err := missing.Finish(); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("finish: %v", err)
	}
	s.Close()
	if s.IsCompleteAtEnd() {
		t.Fatal("complete after Close")
	}
}
