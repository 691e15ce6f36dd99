//go:build ssefold_pkgconfig

package ssefold

// The installed library (`make install PREFIX=...`), found by pkg-config:
// set PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig when PREFIX is not a system
// prefix, and LD_LIBRARY_PATH=$PREFIX/lib to run (it links libssefold.so).

/*
#cgo pkg-config: ssefold
#cgo CFLAGS: -DSSEFOLD_GO_PKGCONFIG
*/
import "C"
