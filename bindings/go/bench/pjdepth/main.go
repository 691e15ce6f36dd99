// Command pjdepth measures the standalone PartialJSON's cost per byte
// against nesting depth (issue 26, item 11): {"a":[U,U,...]} with U = "["
// x depth, "0", "]" x depth (tools/hostile_args.py deep's document), pushed
// in 64 KiB fragments, every path event returned (and dropped), best of
// -runs. The same document as python/bench/partial_json_depth.py.
//
//	(cd bindings/go/bench && go run ./pjdepth [-bytes 2000000] [-runs 3] [-access] [-lazy] [-siblings] 2 500)
//
// -access also reads each event's FullPath (what a host that walks the
// paths pays). -lazy sets PartialJSONOptions.LazyPaths. -siblings puts the elements inside one deep container instead
// ({"a":[[...[0,0,0,...]...]]}: every event a sibling at the full depth).
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	ssefold "github.com/ssefold/ssefold/bindings/go"
)

func document(depth, n int, siblings bool) []byte {
	if siblings {
		open, close := strings.Repeat("[", depth), strings.Repeat("]", depth)
		return []byte(`{"a":` + open + strings.Repeat("0,", max(1, (n-2*depth)/2)) + "0" + close + "}")
	}
	unit := strings.Repeat("[", depth) + "0" + strings.Repeat("]", depth)
	units := make([]string, max(1, n/(len(unit)+1)))
	for i := range units {
		units[i] = unit
	}
	return []byte(`{"a":[` + strings.Join(units, ",") + "]}")
}

func run(doc []byte, access, lazy bool) (time.Duration, int, int) {
	start := time.Now()
	p, err := ssefold.NewPartialJSON(&ssefold.PartialJSONOptions{Events: true, MaxDepth: 4096, LazyPaths: lazy})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	events, segs := 0, 0
	for i := 0; i < len(doc); i += 64 << 10 {
		evs, err := p.Push(doc[i:min(len(doc), i+64<<10)])
		if err != nil {
			panic(err)
		}
		events += len(evs)
		if access {
			for _, e := range evs {
				path := e.FullPath()
				segs += len(path)
				for _, s := range path {
					segs += s.Index
				}
			}
		}
	}
	if _, err := p.Finish(); err != nil {
		panic(err)
	}
	return time.Since(start), events, segs
}

func main() {
	bytes := flag.Int("bytes", 2_000_000, "document size")
	runs := flag.Int("runs", 3, "best of")
	access := flag.Bool("access", false, "read every event's Path")
	siblings := flag.Bool("siblings", false, "every element inside one deep container")
	lazy := flag.Bool("lazy", false, "PartialJSONOptions.LazyPaths (Depth and Last; FullPath on demand)")
	flag.Parse()
	var base float64
	for _, a := range flag.Args() {
		depth, err := strconv.Atoi(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "usage: pjdepth [flags] DEPTH...")
			os.Exit(2)
		}
		doc := document(depth, *bytes, *siblings)
		best, events := time.Duration(1<<62), 0
		for r := 0; r < *runs; r++ {
			took, n, _ := run(doc, *access, *lazy)
			best, events = min(best, took), n
		}
		perByte := best.Seconds() / float64(len(doc))
		if base == 0 {
			base = perByte
		}
		fmt.Printf("depth %d: %d bytes, %d events, %.3f s, %.1f ns/byte, %.2fx\n", depth, len(doc), events,
			best.Seconds(), perByte*1e9, perByte/base)
	}
}
