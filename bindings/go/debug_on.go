//go:build debug

package ssefold

import "runtime"

// maybeGC forces a collection before each C call in debug builds
// (go test -tags debug), so a missing runtime.KeepAlive shows up as a
// use-after-free instead of hiding.
func maybeGC() { runtime.GC() }
