package ssefold

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var dialects = map[string]Provider{
	"anthropic":        Anthropic,
	"openai_chat":      OpenAIChat,
	"openai_responses": OpenAIResponses,
	"gemini":           Gemini,
	"ollama":           Ollama,
	"bedrock":          Bedrock,
	"bedrock_converse": BedrockConverse,
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("unmarshal %q: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("unmarshal %q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// foldChunks feeds body in the given chunk sizes and returns the events'
// JSON forms, the message and the first error.
func foldChunks(t *testing.T, p Provider, body []byte, sizes func() int) ([]json.RawMessage, json.RawMessage, error) {
	t.Helper()
	s, err := NewStream(p, &StreamOptions{EventJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var evs []json.RawMessage
	var first error
	for len(body) > 0 && first == nil {
		n := min(sizes(), len(body))
		got, err := s.Feed(body[:n])
		for _, e := range got {
			evs = append(evs, e.JSON)
		}
		first = err
		body = body[n:]
	}
	if first == nil {
		got, err := s.Finish()
		for _, e := range got {
			evs = append(evs, e.JSON)
		}
		first = err
	}
	m, err := s.Message()
	if err != nil {
		t.Fatal(err)
	}
	return evs, m, first
}

func TestGoldenFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../tests/fixtures/*/*.sse")
	lines, _ := filepath.Glob("../../tests/fixtures/*/*.ndjson")
	frames, _ := filepath.Glob("../../tests/fixtures/*/*.bin")
	files = append(append(files, lines...), frames...)
	if len(files) < 20 {
		t.Fatalf("fixtures not found: %d", len(files))
	}
	perDialect := map[string]int{}
	for _, f := range files {
		d := filepath.Base(filepath.Dir(f))
		if _, ok := dialects[d]; !ok {
			t.Fatalf("%s: no provider for the directory %s", f, d)
		}
		perDialect[d]++
	}
	for d := range dialects {
		if perDialect[d] == 0 {
			t.Errorf("no fixtures for %s", d)
		}
	}
	for _, f := range files {
		dialect := filepath.Base(filepath.Dir(f))
		name := strings.TrimSuffix(f, filepath.Ext(f))
		t.Run(dialect+"/"+filepath.Base(name), func(t *testing.T) {
			body, _ := os.ReadFile(f)
			wantMsg, err := os.ReadFile(name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			jl, _ := os.ReadFile(name + ".jsonl")
			lines := strings.Split(strings.TrimSpace(string(jl)), "\n")
			var end struct {
				End string `json:"end"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &end); err != nil {
				t.Fatal(err)
			}
			wantEvents := lines[:len(lines)-1]
			// A provider error's type, from the error event before the end.
			providerError := strings.HasPrefix(end.End, "Provider(")
			var last struct {
				Event     string `json:"event"`
				ErrorType string `json:"error_type"`
			}
			if providerError {
				if err := json.Unmarshal([]byte(wantEvents[len(wantEvents)-1]), &last); err != nil || last.Event != "error" {
					t.Fatalf("no error event before %s", end.End)
				}
			}
			rng := rand.New(rand.NewSource(int64(len(body))))
			chunkings := map[string]func() int{
				"whole":  func() int { return len(body) },
				"1-byte": func() int { return 1 },
			}
			for i := 0; i < 5; i++ {
				chunkings["random"+string(rune('0'+i))] = func() int { return 1 + rng.Intn(64) }
			}
			if gcStress {
				delete(chunkings, "1-byte")
			}
			for _, p := range []Provider{dialects[dialect], Auto} {
				for cname, sizes := range chunkings {
					evs, msg, err := foldChunks(t, p, body, sizes)
					if !jsonEqual(t, msg, wantMsg) {
						t.Errorf("%v/%s: message\n got %s\nwant %s", p, cname, msg, wantMsg)
					}
					if (end.End == "ok") != (err == nil) {
						t.Errorf("%v/%s: end %q, err %v", p, cname, end.End, err)
					}
					if err != nil {
						var e *Error
						if !errors.As(err, &e) || e.Message == "" {
							t.Errorf("error is not a typed *Error with message: %#v", err)
						}
						if strings.HasPrefix(end.End, "Provider(") != errors.Is(err, ErrProviderError) {
							t.Errorf("%s: ErrProviderError mismatch: %v", end.End, err)
						}
						if strings.HasPrefix(end.End, "Incomplete") != errors.Is(err, ErrIncomplete) {
							t.Errorf("%s: ErrIncomplete mismatch: %v", end.End, err)
						}
						if providerError && IsRetryableErrorType(last.ErrorType) != errors.Is(err, ErrRetryableProviderError) {
							t.Errorf("%q: ErrRetryableProviderError mismatch: %v", last.ErrorType, err)
						}
					}
					if len(evs) != len(wantEvents) {
						t.Fatalf("%v/%s: %d events, want %d", p, cname, len(evs), len(wantEvents))
					}
					for i := range evs {
						if !jsonEqual(t, evs[i], []byte(wantEvents[i])) {
							t.Fatalf("%v/%s: event %d\n got %s\nwant %s", p, cname, i, evs[i], wantEvents[i])
						}
					}
				}
			}
			// The io.Reader helpers agree with the handle.
			m, err := Fold(bytes.NewReader(body), dialects[dialect])
			if !jsonEqual(t, m, wantMsg) || (end.End == "ok") != (err == nil) {
				t.Errorf("Fold: %s, %v", m, err)
			}
			n := 0
			for e, err := range Events(bytes.NewReader(body), dialects[dialect]) {
				if err != nil {
					break
				}
				if e.Name == "" {
					t.Errorf("event without name")
				}
				n++
			}
			if n != len(wantEvents) {
				t.Errorf("Events yielded %d, want %d", n, len(wantEvents))
			}
		})
	}
}
