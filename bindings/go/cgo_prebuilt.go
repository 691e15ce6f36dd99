//go:build ssefold_prebuilt && !ssefold_pkgconfig

package ssefold

// The static library prebuilt for each platform inside the module
// (lib/GOOS_GOARCH/libssefold.a, the release's Go module: tools/dist.sh),
// so that `go get` and `go build` need neither Rust nor make. In the
// released module this file is the default (its build line is
// `!ssefold_pkgconfig`, and cgo_local.go is not there); in a checkout the tag
// ssefold_prebuilt selects it, once lib/ holds a library. A platform with no
// library in lib/ stops the build with ssefold_go.h's message.
// The system libraries are those `rustc --print native-static-libs` lists
// for each target.

/*
#cgo CFLAGS: -I${SRCDIR}/include -DSSEFOLD_GO_PREBUILT
#cgo linux,amd64 CFLAGS: -I${SRCDIR}/lib/linux_amd64
#cgo linux,amd64 LDFLAGS: ${SRCDIR}/lib/linux_amd64/libssefold.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
#cgo linux,arm64 CFLAGS: -I${SRCDIR}/lib/linux_arm64
#cgo linux,arm64 LDFLAGS: ${SRCDIR}/lib/linux_arm64/libssefold.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
#cgo darwin,arm64 CFLAGS: -I${SRCDIR}/lib/darwin_arm64
#cgo darwin,arm64 LDFLAGS: ${SRCDIR}/lib/darwin_arm64/libssefold.a -framework CoreFoundation -liconv -lSystem -lc -lm
#cgo windows,amd64 CFLAGS: -I${SRCDIR}/lib/windows_amd64
#cgo windows,amd64 LDFLAGS: ${SRCDIR}/lib/windows_amd64/libssefold.a -lkernel32 -ladvapi32 -lntdll -luserenv -lws2_32 -lbcrypt -ldbghelp
*/
import "C"
