//go:build !ssefold_pkgconfig && !ssefold_prebuilt

package ssefold

// The static library of the checkout this package sits in (`make capi`).
// ${SRCDIR}/../../target/capi is on the include path only so that
// ssefold_go.h can tell whether libssefold.a exists.

/*
#cgo CFLAGS: -I${SRCDIR}/../../include -I${SRCDIR}/../../target/capi
#cgo LDFLAGS: ${SRCDIR}/../../target/capi/libssefold.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
*/
import "C"
