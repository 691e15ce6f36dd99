package ssefold

import (
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Go blocks of the READMEs, each a file without its package clause.
var readmes = []string{"../../README.md", "README.md"}

var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// readmeMain runs every function the README blocks declare against a local
// server that streams a recorded Anthropic answer.
const readmeMain = `package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
)

func main() {
	body, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, string(body)+"\n\n")
	}))
	defer srv.Close()
	get := func() *http.Response {
		resp, err := http.Get(srv.URL)
		if err != nil {
			panic(err)
		}
		return resp
	}
	msg, err := answer(get())
	fmt.Printf("answer: %s %v\n", msg, err)
	msg, err = fold(get())
	fmt.Printf("fold: %s %v\n", msg, err)
	fmt.Printf("printText: %v\n", printText(get()))
	msg, err = ask(context.Background(), srv.URL, "{}")
	fmt.Printf("ask: %s %v\n", msg, err)
}
`

// readmeModule writes the README blocks into a module of their own that
// requires this one the documented way (a replace directive).
func readmeModule(t *testing.T) string {
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, readme := range readmes {
		text, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goBlock.FindAllStringSubmatch(string(text), -1) {
			src := "package main\n\n" + m[1]
			if err := os.WriteFile(filepath.Join(dir, "block"+string(rune('a'+n))+".go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n < 2 {
		t.Fatalf("found %d Go blocks in %v", n, readmes)
	}
	gomod := "module readme\n\ngo 1.23\n\nrequire github.com/ssefold/ssefold/bindings/go v0.0.0\n\n" +
		"replace github.com/ssefold/ssefold/bindings/go => " + self + "\n"
	files := map[string]string{"go.mod": gomod, "main.go": readmeMain}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goIn runs the go command in dir with extra environment variables.
func goIn(t *testing.T, dir string, env []string, args ...string) string {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkReadmeRun checks the output of readmeMain.
func checkReadmeRun(t *testing.T, out string) {
	const text = `"content":[{"type":"text","text":"Hello there!"}]`
	for _, want := range []string{"answer: {", "fold: {", "Hello there!printText: <nil>", "ask: {"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, text) != 3 || strings.Count(out, "<nil>") != 4 {
		t.Errorf("want three folded messages and no error:\n%s", out)
	}
}

func readmeFixture(t *testing.T) string {
	fixture, err := filepath.Abs("../../tests/peer-fixtures/anthropic-sdk-python/basic_response.txt")
	if err != nil {
		t.Fatal(err)
	}
	return fixture
}

// TestReadmeGoBlocks vets the README blocks in their own module and runs
// them (the default way of finding the library: the checkout's).
func TestReadmeGoBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := readmeModule(t)
	goIn(t, dir, nil, "vet", ".")
	checkReadmeRun(t, goIn(t, dir, nil, "run", ".", readmeFixture(t)))
}

// TestReadmeGoBlocksWithPkgConfig builds and runs the README blocks with
// -tags ssefold_pkgconfig against the pkg-config file `make install`
// writes (bindings/c/ssefold.pc.in), here pointing into the checkout.
func TestReadmeGoBlocksWithPkgConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	if _, err := exec.LookPath("pkg-config"); err != nil {
		t.Skip("pkg-config is not installed")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The library under the names `make install` gives it (its SONAME is
	// libssefold.so.<major>).
	built := filepath.Join(root, "target", "capi", "libssefold.so")
	if _, err := os.Stat(built); err != nil {
		t.Fatalf("make capi first: %v", err)
	}
	// A fixed directory, not a temporary one: Go's build cache keeps the
	// package's link flags (the -L and RPATH pkg-config gives) between
	// runs, so they must point to a directory that is still there.
	libdir := filepath.Join(root, "target", "go-readme-pkgconfig")
	if err := os.MkdirAll(libdir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The SONAME's ABI version: the major, 0.<minor> before 1.0 (build.rs).
	parts := strings.SplitN(Version(), ".", 3)
	abi := parts[0]
	if abi == "0" && len(parts) > 1 {
		abi = "0." + parts[1]
	}
	for _, name := range []string{"libssefold.so", "libssefold.so." + abi} {
		link := filepath.Join(libdir, name)
		_ = os.Remove(link)
		if err := os.Symlink(built, link); err != nil {
			t.Fatal(err)
		}
	}
	tmpl, err := os.ReadFile("../c/ssefold.pc.in")
	if err != nil {
		t.Fatal(err)
	}
	pc := strings.NewReplacer("@PREFIX@", root, "@LIBDIR@", libdir, "@INCLUDEDIR@", filepath.Join(root, "include"),
		"@VERSION@", Version(), "@NATIVE_LIBS@", "", "@RPATH_FLAGS@", "-Wl,-rpath,${libdir}").Replace(string(tmpl))
	pcdir := t.TempDir()
	if err := os.WriteFile(filepath.Join(pcdir, "ssefold.pc"), []byte(pc), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := readmeModule(t)
	// Go's build cache does not key a cgo package on what pkg-config says:
	// a define naming this library directory keeps an entry built against
	// another directory (an earlier checkout or run) from being reused.
	h := fnv.New32a()
	h.Write([]byte(libdir))
	env := []string{"PKG_CONFIG_PATH=" + pcdir, "LD_LIBRARY_PATH=" + libdir,
		fmt.Sprintf("CGO_CFLAGS=-O2 -g -DSSEFOLD_README_LIBDIR=0x%08x", h.Sum32())}
	goIn(t, dir, env, "build", "-tags", "ssefold_pkgconfig", "-o", "readme", ".")
	cmd := exec.Command(filepath.Join(dir, "readme"), readmeFixture(t))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkReadmeRun(t, string(out))
	ldd, err := exec.Command("ldd", filepath.Join(dir, "readme")).CombinedOutput()
	if err == nil && !strings.Contains(string(ldd), "libssefold.so") {
		t.Errorf("not linked against the shared library:\n%s", ldd)
	}
}

// TestMissingLibraryIsExplained builds a copy of the package where the
// static library is not: the build fails with the package's own message.
func TestMissingLibraryIsExplained(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := filepath.Join(t.TempDir(), "bindings", "go")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ext := filepath.Ext(name); ext == ".go" || ext == ".c" || ext == ".h" || name == "go.mod" {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command("go", "build", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("the build succeeded without the library")
	}
	if !strings.Contains(string(out), "ssefold: the C library is missing: in a checkout, run `make capi`") {
		t.Errorf("unclear error:\n%s", out)
	}
	if strings.Contains(string(out), "undefined reference") || strings.Contains(string(out), "/usr/bin/ld") {
		t.Errorf("a linker error, not the package's message:\n%s", out)
	}
}
