package ssefold

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
)

// A media part's bytes come as KindMediaDelta events with MimeType and Data
// (decoded from the provider's base64, however its text was cut); the
// folded message keeps the base64 text, and the JSON form carries it too.
func TestMediaDeltaBytes(t *testing.T) {
	body, err := os.ReadFile("../../tests/fixtures/openai_chat/audio_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{len(body), 1, 5} {
		s, err := NewStream(OpenAIChat, &StreamOptions{EventJSON: true})
		if err != nil {
			t.Fatal(err)
		}
		var data []byte
		var all []StreamEvent
		for rest := body; len(rest) > 0; {
			n := min(size, len(rest))
			evs, err := s.Feed(rest[:n])
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, evs...)
			rest = rest[n:]
		}
		evs, err := s.Finish()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, evs...)
		for _, e := range all {
			if e.Kind != KindMediaDelta {
				if e.Data != nil || e.MimeType != "" {
					t.Fatalf("%s event with media fields", e.Name)
				}
				continue
			}
			if e.Name != "media_delta" || e.MimeType != "audio/pcm" || e.Part != 0 || len(e.Data) == 0 {
				t.Fatalf("media event %+v", e)
			}
			var j struct {
				Data []byte `json:"data"` // base64 in the JSON form
			}
			if err := json.Unmarshal(e.JSON, &j); err != nil || !bytes.Equal(j.Data, e.Data) {
				t.Fatalf("JSON form %s differs from Data %x: %v", e.JSON, e.Data, err)
			}
			data = append(data, e.Data...)
		}
		m, err := s.Message()
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Choices []struct {
				Message struct {
					Audio struct {
						Data string `json:"data"`
					} `json:"audio"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(m, &msg); err != nil {
			t.Fatal(err)
		}
		want, err := base64.StdEncoding.DecodeString(msg.Choices[0].Message.Audio.Data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Fatalf("chunk %d: bytes %x, want %x", size, data, want)
		}
		s.Close()
	}
}
