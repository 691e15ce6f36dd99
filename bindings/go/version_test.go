package ssefold

import "testing"

// The linked C library is the release this package was written for.
func TestVersionMatchesTheLibrary(t *testing.T) {
	if got := Version(); got != BindingVersion {
		t.Fatalf("linked library %q, package %q", got, BindingVersion)
	}
}
