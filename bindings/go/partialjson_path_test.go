package ssefold

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// Issue 26, item 11: a PathEvent's path costs O(1) however deep (shared
// between events, or with LazyPaths built on demand). These tests check
// that every event's path is right (it leads, in the finished document, to
// the value the event describes), never changes after the event was
// returned (a later event writing into a shared array), and is the same
// with and without LazyPaths, in every fragmentation.

// at walks path in v (a document decoded by encoding/json).
func at(v any, path []PathSegment) (any, bool) {
	for _, s := range path {
		switch c := v.(type) {
		case map[string]any:
			if s.IsIndex {
				return nil, false
			}
			var ok bool
			if v, ok = c[s.Key]; !ok {
				return nil, false
			}
		case []any:
			if !s.IsIndex || s.Index >= len(c) {
				return nil, false
			}
			v = c[s.Index]
		default:
			return nil, false
		}
	}
	return v, true
}

func copyPath(p []PathSegment) []PathSegment {
	if p == nil {
		return nil
	}
	return append([]PathSegment{}, p...)
}

// pathEvents pushes doc in fragments of size (a rand.Rand's choice when 0)
// and returns the events with a copy of each path taken when it came.
func pathEvents(t *testing.T, doc string, size int, lazy bool, r *rand.Rand) ([]PathEvent, [][]PathSegment, string) {
	t.Helper()
	p, err := NewPartialJSON(&PartialJSONOptions{Events: true, LazyPaths: lazy, MaxDepth: 2048})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var evs []PathEvent
	var snaps [][]PathSegment
	for rest := doc; rest != ""; {
		n := size
		if n == 0 {
			n = 1 + r.Intn(40)
		}
		n = min(n, len(rest))
		got, err := p.Push([]byte(rest[:n]))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			evs = append(evs, e)
			snaps = append(snaps, copyPath(e.FullPath()))
		}
		rest = rest[n:]
	}
	v, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return evs, snaps, string(v)
}

func checkPaths(t *testing.T, name, doc string) {
	t.Helper()
	var want any
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var whole []string // the paths of the events but string appends (their number depends on the fragments)
	eager := map[int][][]PathSegment{}
	for _, lazy := range []bool{false, true} {
		r := rand.New(rand.NewSource(int64(len(doc))))
		for _, size := range []int{len(doc), 1, 7, 0} {
			evs, snaps, _ := pathEvents(t, doc, size, lazy, r)
			var paths [][]PathSegment
			var structural []string
			for i, e := range evs {
				path := e.FullPath()
				where := fmt.Sprintf("%s lazy=%v size=%d event %d (%+v)", name, lazy, size, i, e)
				if !reflect.DeepEqual(path, snaps[i]) {
					t.Fatalf("%s: the path changed after the event: %v, was %v", where, path, snaps[i])
				}
				if len(path) != e.Depth || (e.Depth > 0 && path[e.Depth-1] != e.Last) {
					t.Fatalf("%s: depth %d last %+v path %v", where, e.Depth, e.Last, path)
				}
				if e.Depth > 0 && lazy != (e.Path == nil) {
					t.Fatalf("%s: Path filled %v", where, e.Path != nil)
				}
				v, ok := at(want, path)
				if !ok {
					t.Fatalf("%s: the path %v leads nowhere", where, path)
				}
				switch e.Kind {
				case ContainerStart:
					_, isObj := v.(map[string]any)
					_, isArr := v.([]any)
					if (e.Container == Object) != isObj || (e.Container == Array) != isArr {
						t.Fatalf("%s: a %v start at a %T", where, e.Container, v)
					}
				case ValueComplete:
					if e.Value != nil {
						var got any
						if json.Unmarshal(e.Value, &got) != nil || !reflect.DeepEqual(got, v) {
							t.Fatalf("%s: value %s, the document has %v", where, e.Value, v)
						}
					}
				case StringAppend:
					if s, ok := v.(string); !ok || !strings.Contains(s, e.Text) {
						t.Fatalf("%s: text %q of %v", where, e.Text, v)
					}
				}
				paths = append(paths, path)
				if e.Kind != StringAppend {
					structural = append(structural, fmt.Sprint(e.Kind, path))
				}
			}
			if whole == nil {
				whole = structural
			} else if !reflect.DeepEqual(structural, whole) {
				t.Fatalf("%s lazy=%v size=%d: other events than whole", name, lazy, size)
			}
			if !lazy {
				eager[size] = paths
			} else if !reflect.DeepEqual(paths, eager[size]) {
				t.Fatalf("%s size=%d: lazy paths differ from eager", name, size)
			}
		}
	}
}

// randomJSON is a document of nested objects, arrays and scalars.
func randomJSON(r *rand.Rand, depth int) string {
	if depth == 0 || r.Intn(4) == 0 {
		switch r.Intn(5) {
		case 0:
			return fmt.Sprint(r.Intn(1000) - 500)
		case 1:
			return `"s` + strings.Repeat("é", r.Intn(3)) + fmt.Sprint(r.Intn(9)) + `"`
		case 2:
			return "null"
		case 3:
			return "[]"
		default:
			return "{}"
		}
	}
	n := r.Intn(4)
	items := make([]string, n)
	if r.Intn(2) == 0 {
		for i := range items {
			items[i] = randomJSON(r, depth-1)
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	for i := range items {
		items[i] = fmt.Sprintf(`"k%d%s": %s`, i, strings.Repeat("ü", r.Intn(2)), randomJSON(r, depth-1))
	}
	return "{" + strings.Join(items, ",") + "}"
}

func TestPartialJSONPathsAreRightSharedAndStable(t *testing.T) {
	deep := func(d int, inner string) string { return strings.Repeat("[", d) + inner + strings.Repeat("]", d) }
	docs := map[string]string{
		"object":         `{"city": "Par\u00e9is", "days": [1, 2, {"x": [true, false]}], "e": {}, "f": []}`,
		"deep units":     `{"a":[` + deep(40, "0") + "," + deep(40, "0") + "," + deep(3, "1") + "]}",
		"deep siblings":  `{"a":` + deep(30, `0,1,"two",{"k":[3,4]},[5]`) + `,"b":2}`,
		"keys deep":      strings.Repeat(`{"k":`, 30) + `{"x":1,"y":"z","w":[1,{"v":2}]}` + strings.Repeat("}", 30),
		"long string":    `{"s":"` + strings.Repeat("abc", 100) + `","t":[` + deep(5, `"`+strings.Repeat("x", 50)+`"`) + "]}",
		"scalar root":    `"just a string"`,
		"back and forth": `[[[1],[2]],[[3],[4,[5,[6]]]],7,{"a":{"b":{"c":[8]}},"d":9}]`,
	}
	for name, doc := range docs {
		checkPaths(t, name, doc)
	}
	r := rand.New(rand.NewSource(26))
	for i := 0; i < 60; i++ {
		checkPaths(t, fmt.Sprintf("random %d", i), randomJSON(r, 6))
	}
}

func TestPartialJSONPathsAfterReset(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		p, err := NewPartialJSON(&PartialJSONOptions{Events: true, LazyPaths: lazy})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Push([]byte(`{"a":[[[1,`)); err != nil {
			t.Fatal(err)
		}
		if err := p.Reset(); err != nil {
			t.Fatal(err)
		}
		evs, err := p.Push([]byte(`{"b":[2]}`))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, fmt.Sprint(e.FullPath()))
		}
		want := []string{"[]", "[{b false 0}]", "[{b false 0} { true 0}]", "[{b false 0}]", "[]"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("lazy=%v: %v", lazy, got)
		}
		p.Close()
	}
}
