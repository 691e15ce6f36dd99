//go:build debug

package ssefold

import "runtime"

// maybeGC forces a collection before each C call in debug builds
// (go test -tags debug), so a missing runtime.KeepAlive shows up as a
// use-after-free instead of hiding.
func maybeGC() { runtime.GC() }

// gcStress is true in debug builds: tests whose point is chunking invariance
// (proved by the normal build) skip their one-byte chunkings here, where a
// collection before every C call would make them cost minutes.
const gcStress = true
