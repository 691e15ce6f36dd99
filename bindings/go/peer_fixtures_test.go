package ssefold

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPeerFixtures folds every recorded stream of the official SDKs' test
// suites (tests/peer-fixtures/) through the Go binding: whole, byte by byte
// and in random chunkings give the same events, message and outcome, the
// io.Reader Fold agrees, and the folded message has the provider's shape.
// (What each SDK folds from these files is checked field by field by the
// Rust suite, tests/peer_fixtures.rs, on the same core.)
func TestPeerFixtures(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*/*.sse", "*/*.txt"} {
		found, _ := filepath.Glob(filepath.Join("../../tests/peer-fixtures", pattern))
		files = append(files, found...)
	}
	if len(files) != 45 {
		t.Fatalf("expected the 45 peer fixtures, found %d", len(files))
	}
	for _, f := range files {
		dir := filepath.Base(filepath.Dir(f))
		p := Anthropic
		if dir == "openai-python" {
			p = OpenAIChat
		}
		t.Run(dir+"/"+filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			wantEvs, wantMsg, wantErr := foldChunks(t, p, body, func() int { return len(body) })
			rng := rand.New(rand.NewSource(int64(len(body))))
			chunkings := map[string]func() int{
				"1-byte":  func() int { return 1 },
				"random":  func() int { return 1 + rng.Intn(97) },
				"4-bytes": func() int { return 4 },
			}
			if gcStress {
				delete(chunkings, "1-byte")
				delete(chunkings, "4-bytes")
			}
			for name, sizes := range chunkings {
				evs, msg, err := foldChunks(t, p, body, sizes)
				if !jsonEqual(t, msg, wantMsg) {
					t.Errorf("%s: message\n got %s\nwant %s", name, msg, wantMsg)
				}
				if (err == nil) != (wantErr == nil) {
					t.Errorf("%s: error %v, whole gave %v", name, err, wantErr)
				}
				if len(evs) != len(wantEvs) {
					t.Fatalf("%s: %d events, whole gave %d", name, len(evs), len(wantEvs))
				}
				for i := range evs {
					if !jsonEqual(t, evs[i], wantEvs[i]) {
						t.Fatalf("%s: event %d\n got %s\nwant %s", name, i, evs[i], wantEvs[i])
					}
				}
			}
			m, err := Fold(bytes.NewReader(body), p)
			if !jsonEqual(t, m, wantMsg) || (err == nil) != (wantErr == nil) {
				t.Errorf("Fold: %s, %v", m, err)
			}
			var msg map[string]any
			if err := json.Unmarshal(wantMsg, &msg); err != nil {
				t.Fatal(err)
			}
			switch p {
			case Anthropic:
				content, _ := msg["content"].([]any)
				if msg["type"] != "message" || msg["role"] != "assistant" || len(content) == 0 {
					t.Errorf("not an Anthropic Message with content: %s", wantMsg)
				}
				// A string, or null where the stream never said (out_of_order_response.txt,
				// which the SDK folds with stop_reason None too).
				reason, ok := msg["stop_reason"]
				if s, isString := reason.(string); !ok || (reason != nil && (!isString || s == "")) {
					t.Errorf("no stop_reason member: %s", wantMsg)
				}
			case OpenAIChat:
				choices, _ := msg["choices"].([]any)
				if msg["object"] != "chat.completion" || len(choices) == 0 {
					t.Errorf("not a ChatCompletion with choices: %s", wantMsg)
				}
				for _, c := range choices {
					if reason, _ := c.(map[string]any)["finish_reason"].(string); reason == "" {
						t.Errorf("choice without finish_reason: %s", wantMsg)
					}
				}
			}
			// A clean end: these are complete recordings (the Anthropic files
			// without a final blank line end with a complete message_stop).
			if wantErr != nil && !strings.Contains(f, "incomplete") {
				t.Errorf("unexpected error: %v", wantErr)
			}
		})
	}
}
