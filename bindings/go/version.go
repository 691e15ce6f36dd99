package ssefold

// BindingVersion is the ssefold release this package was written for: the
// version of the repository's Cargo workspace, which the C library it links
// reports through [Version]. The two differ only when the package links
// another build of the library than its own (TestVersionMatchesTheLibrary).
const BindingVersion = "0.1.0"
