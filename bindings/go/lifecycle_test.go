package ssefold

import (
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
