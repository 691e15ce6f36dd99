package ssefold

import (
	"os"
	"path/filepath"
	"testing"
)

func seed(f *testing.F) {
	files, _ := filepath.Glob("../../tests/fixtures/*/*.sse")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b, uint8(7))
	}
	f.Add([]byte("data: \xff\xfe\r\n\r\nid: \x00\nretry: 99999999999999999999\n\n"), uint8(1))
}

// FuzzDecoder: no input crashes the process, and the events do not depend
// on how the input is chunked.
func FuzzDecoder(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		whole, _ := NewDecoder(&DecoderConfig{MaxLineLen: 512, MaxEventSize: 1024})
		defer whole.Close()
		a, errA := whole.Feed(b)
		split, _ := NewDecoder(&DecoderConfig{MaxLineLen: 512, MaxEventSize: 1024})
		defer split.Close()
		var c []Event
		var errC error
		step := int(chunk%32) + 1
		for i := 0; i < len(b); i += step {
			evs, err := split.Feed(b[i:min(i+step, len(b))])
			c = append(c, evs...)
			if errC == nil {
				errC = err
			}
		}
		whole.Finish()
		split.Finish()
		if (errA == nil) != (errC == nil) || len(a) != len(c) {
			t.Fatalf("chunking changed the result: %d/%v vs %d/%v", len(a), errA, len(c), errC)
		}
		for i := range a {
			if a[i] != c[i] {
				t.Fatalf("event %d: %#v vs %#v", i, a[i], c[i])
			}
		}
	})
}

// FuzzStream: no input crashes, and the folded message does not depend on
// the chunking.
func FuzzStream(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		fold := func(step int) string {
			s, _ := NewStream(Auto, &StreamOptions{EventJSON: true})
			defer s.Close()
			for i := 0; i < len(b); i += step {
				if _, err := s.Feed(b[i:min(i+step, len(b))]); err != nil {
					break
				}
			}
			s.Finish()
			m, err := s.Message()
			if err != nil {
				t.Fatal(err)
			}
			return string(m)
		}
		if a, c := fold(len(b)+1), fold(int(chunk%32)+1); a != c {
			t.Fatalf("chunking changed the message:\n%s\n%s", a, c)
		}
	})
}

// FuzzPartialJSON: no input crashes; a prefix never errors where the whole
// document parses.
func FuzzPartialJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":"\u00e9\ud83d\ude00"}],"c":-1.5e3,"d":null}`))
	f.Add([]byte(`[[[[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, _ := NewPartialJSON(&PartialJSONOptions{Events: true, ContainerValues: true, MaxDepth: 64})
		defer p.Close()
		for i := 0; i < len(b); i++ {
			if _, err := p.Push(b[i : i+1]); err != nil {
				return
			}
			p.Value(true)
		}
		p.Finish()
		ParsePartialJSON(string(b), true)
	})
}
