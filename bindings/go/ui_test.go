package ssefold

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

type uiSnapshot struct {
	Connection string `json:"connection"`
	Parts      []struct {
		Kind     string `json:"kind"`
		Status   string `json:"status"`
		Text     string `json:"text"`
		Segments []struct {
			Text string `json:"text"`
			AtMs uint64 `json:"at_ms"`
		} `json:"segments"`
		ToolCall *struct {
			Name  *string         `json:"name"`
			Args  json.RawMessage `json:"arguments"`
			Ready bool            `json:"ready"`
		} `json:"tool_call"`
	} `json:"parts"`
	ToolProgress map[string]json.RawMessage `json:"tool_progress"`
	Ended        bool                       `json:"ended"`
	Aborted      bool                       `json:"aborted"`
}

func snapshot(t *testing.T, s *Stream) uiSnapshot {
	t.Helper()
	raw, err := s.UISnapshot()
	if err != nil {
		t.Fatal(err)
	}
	var snap uiSnapshot
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return snap
}

func TestUISnapshotFollowsTheStream(t *testing.T) {
	body, err := os.ReadFile("../../tests/fixtures/anthropic/interleaved_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStream(Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.UISnapshot(); err == nil {
		t.Fatal("a snapshot before EnableUI must be refused")
	}
	if err := s.EnableUI(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetConnection(Connected); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i := 0; i < len(body); i += 97 {
		end := min(i+97, len(body))
		if err := s.SetTime(uint64(i)); err != nil {
			t.Fatal(err)
		}
		events, err := s.Feed(body[i:end])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Kind == KindTextDelta {
				text.WriteString(e.Text)
			}
		}
	}
	if _, err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, s)
	if snap.Connection != "connected" || !snap.Ended || snap.Aborted {
		t.Fatalf("state: %+v", snap)
	}
	var joined strings.Builder
	ready := 0
	for _, p := range snap.Parts {
		if p.Kind == "text" || p.Kind == "reasoning" {
			joined.WriteString(p.Text)
		}
		for i := 1; i < len(p.Segments); i++ {
			if p.Segments[i].AtMs <= p.Segments[i-1].AtMs {
				t.Fatalf("segments out of arrival order: %+v", p.Segments)
			}
		}
		if p.ToolCall != nil && p.ToolCall.Ready {
			ready++
			if p.Status != "complete" || len(p.ToolCall.Args) == 0 {
				t.Fatalf("ready call without complete arguments: %+v", p)
			}
		}
	}
	if joined.String() != text.String() {
		t.Fatalf("snapshot text %q != streamed text %q", joined.String(), text.String())
	}
	if ready == 0 {
		t.Fatal("the fixture's tool calls must be ready at the end")
	}
	if err := s.SetToolProgress("toolu_1", json.RawMessage(`{"done":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetToolProgress("toolu_1", json.RawMessage(`{not json`)); err == nil {
		t.Fatal("invalid progress JSON must be refused")
	}
	if got := string(snapshot(t, s).ToolProgress["toolu_1"]); got != `{"done":3}` {
		t.Fatalf("tool progress %s", got)
	}
}

func TestUISnapshotAfterAbort(t *testing.T) {
	body, err := os.ReadFile("../../tests/fixtures/anthropic/thinking_text_citations.sse")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStream(Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnableUI(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed(body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, s)
	if !snap.Aborted || !snap.Ended {
		t.Fatalf("after abort: %+v", snap)
	}
	for _, p := range snap.Parts {
		if p.Status == "streaming" {
			t.Fatalf("a part still streaming after abort: %+v", p)
		}
	}
	s.Close()
	if _, err := s.UISnapshot(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
