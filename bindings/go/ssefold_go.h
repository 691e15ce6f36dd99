/* Included by every cgo preamble of the package instead of ssefold.h: it
 * finds the C library the way the build chose (see cgo_local.go,
 * cgo_prebuilt.go and cgo_pkgconfig.go) and stops the build with a readable message, instead of
 * a long compiler or linker error, when it is not there. */
#ifndef SSEFOLD_GO_H
#define SSEFOLD_GO_H

#if defined(SSEFOLD_GO_PKGCONFIG)
#include <ssefold.h>
#elif defined(SSEFOLD_GO_PREBUILT)
#if !__has_include(<libssefold.a>)
#error "ssefold: this module holds no prebuilt C library for this platform (lib/ has linux_amd64 and the release's other platforms): build the library from the repository (`make install`) and build with -tags ssefold_pkgconfig (see README.md)"
#endif
#include "ssefold.h"
#else
#if !__has_include("ssefold.h") || !__has_include(<libssefold.a>)
#error "ssefold: the C library is missing: in a checkout, run `make capi` at the repository root (builds target/capi/libssefold.a); elsewhere, `make install` it and build with -tags ssefold_pkgconfig (see bindings/go/README.md)"
#endif
#include "ssefold.h"
#endif

#endif
