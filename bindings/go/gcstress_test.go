package ssefold

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cCall matches a statement that calls into the C library.
var cCall = regexp.MustCompile(`^\s*(if r := |r := |return |return C\.GoString\()?C\.ssefold_[a-z_]+\(`)

// anyCCall matches a call into the C library anywhere in a line.
var anyCCall = regexp.MustCompile(`C\.ssefold_[a-z_]+\(`)

// TestEveryCCallIsGCStressed keeps the GC-stress build (go test -tags debug)
// complete: every call into the C library is preceded by maybeGC(), which
// forces a collection there, so a missing runtime.KeepAlive before any call
// shows up as a use-after-free under that build.
func TestEveryCCallIsGCStressed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		for i, line := range lines {
			if anyCCall.MatchString(line) && !cCall.MatchString(line) &&
				!strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d: a C call inside an expression: put it on its own statement after maybeGC(): %s", name, i+1, strings.TrimSpace(line))
				continue
			}
			if !cCall.MatchString(line) {
				continue
			}
			calls++
			if i == 0 || strings.TrimSpace(lines[i-1]) != "maybeGC()" {
				t.Errorf("%s:%d: C call without maybeGC() on the line before: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
	if calls < 60 {
		t.Fatalf("found only %d C calls: the scanner no longer matches the sources", calls)
	}
}
