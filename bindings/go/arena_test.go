package ssefold

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// closingContainers returns the ValueComplete events of closing containers
// by depth.
func closingContainers(evs []StreamEvent) map[int]*StreamPathEvent {
	out := map[int]*StreamPathEvent{}
	for _, ev := range evs {
		if pe := ev.PathEvent; pe != nil && pe.Kind == ValueComplete && pe.IsContainer {
			out[pe.Depth] = pe
		}
	}
	return out
}

func TestStreamLargeContainerSharesTheCopyOfItsEnclosingOne(t *testing.T) {
	inner := `[ "` + strings.Repeat("x", bigShared) + `" ]`
	args := `{"a": ` + inner + `}`
	s, err := NewStream(Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Feed(anthropicToolStream(args, 4096))
	if err != nil {
		t.Fatal(err)
	}
	c := closingContainers(evs)
	root, a := c[0], c[1]
	if root == nil || a == nil {
		t.Fatalf("closing containers %v", c)
	}
	if string(root.Value) != args || string(a.Value) != inner {
		t.Fatalf("values of %d and %d bytes", len(root.Value), len(a.Value))
	}
	off := strings.Index(args, inner)
	if unsafe.SliceData(a.Value) != &root.Value[off] {
		t.Fatal("the array's text is a copy of its own")
	}
	if cap(a.Value) != len(a.Value) || cap(root.Value) != len(root.Value) {
		t.Fatalf("capacities %d, %d", cap(a.Value), cap(root.Value))
	}
	// An append to the inner value must not write into the outer one.
	_ = append(a.Value, "!!"...)
	if string(root.Value) != args {
		t.Fatal("an append to the inner value changed the outer one")
	}
}

func TestStreamLargeContainersAcrossFeedsAreCopiesOfTheirOwn(t *testing.T) {
	inner := `[["` + strings.Repeat("y", bigShared) + `"]]`
	args := `{"a": ` + inner + `, "b": ` + inner + `}`
	body := anthropicToolStream(args, 1000)
	for _, chunk := range []int{len(body), 4096, 977} {
		s, err := NewStream(Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		var evs []StreamEvent
		for rest := body; len(rest) > 0; {
			n := min(chunk, len(rest))
			got, err := s.Feed(rest[:n])
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, got...)
			rest = rest[n:]
		}
		s.Close()
		values := map[string]int{}
		for _, ev := range evs {
			if pe := ev.PathEvent; pe != nil && pe.Kind == ValueComplete && pe.IsContainer {
				values[strings.Join(pathKeys(pe.Path()), "/")+"="+string(pe.Value)]++
			}
		}
		want := map[string]int{
			"=" + args: 1, "a=" + inner: 1, "b=" + inner: 1,
			"a/0=" + inner[1:len(inner)-1]: 1, "b/0=" + inner[1:len(inner)-1]: 1,
		}
		if len(values) != len(want) {
			t.Fatalf("chunk %d: %d distinct closing containers", chunk, len(values))
		}
		for k, n := range want {
			if values[k] != n {
				t.Fatalf("chunk %d: %.40q… seen %d times", chunk, k, values[k])
			}
		}
	}
}

// pathKeys renders a path's segments ("a", "0", …).
func pathKeys(p []PathSegment) []string {
	out := make([]string, len(p))
	for i, s := range p {
		if s.IsIndex {
			out[i] = strconv.Itoa(s.Index)
		} else {
			out[i] = s.Key
		}
	}
	return out
}

func TestStreamSmallValuesAreTheirOwnToAppendTo(t *testing.T) {
	s, err := NewStream(Anthropic, &StreamOptions{EventJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Feed(anthropicToolStream(`{"a": [1, 22, "s", [], {"k": true}]}`, 3))
	if err != nil {
		t.Fatal(err)
	}
	type value struct {
		e   *StreamPathEvent
		was string
	}
	var values []value
	for _, ev := range evs {
		if cap(ev.JSON) != len(ev.JSON) {
			t.Fatalf("%s: JSON capacity %d", ev.JSON, cap(ev.JSON))
		}
		if pe := ev.PathEvent; pe != nil && pe.Kind == ValueComplete {
			values = append(values, value{pe, string(pe.Value)})
		}
	}
	if len(values) != 8 {
		t.Fatalf("%d values", len(values))
	}
	// Values share chunks: an append to one must not write into the next.
	for _, v := range values {
		_ = append(v.e.Value, "garbage"...)
	}
	for _, v := range values {
		if string(v.e.Value) != v.was {
			t.Fatalf("%s became %s", v.was, v.e.Value)
		}
	}
}

func TestStreamEventBufferFitsEachFeed(t *testing.T) {
	s, err := NewStream(Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := anthropicToolStream(`{"a": [`+strings.Repeat("0,", 5000)+`0]}`, 64)
	cut := bytes.Index(body, []byte("content_block_stop"))
	big, err := s.Feed(body[:cut])
	if err != nil || len(big) < 5000 {
		t.Fatalf("%d events, %v", len(big), err)
	}
	small, err := s.Feed(body[cut:])
	if err != nil || len(small) == 0 || len(small) > 10 {
		t.Fatalf("%d events, %v", len(small), err)
	}
	if cap(small) > 2*len(small) || cap(big) > 2*len(big) {
		t.Fatalf("capacities %d for %d, %d for %d events", cap(big), len(big), cap(small), len(small))
	}
}
