//go:build !debug

package ssefold

// maybeGC is a no-op outside debug builds (see debug_on.go).
func maybeGC() {}

// gcStress is false outside debug builds (see debug_on.go).
const gcStress = false
