// Command rss folds one provider stream read from a file in 64 KiB chunks
// (as an HTTP body arrives), every event returned and dropped, then the
// folded message: the peak RSS figures of BENCHMARKS.md ("Hostile input and
// scale") come from running it under /usr/bin/time -v.
//
//	go build -o /tmp/gorss ./rss && /usr/bin/time -v /tmp/gorss FILE [json]
//
// With `json`, every event carries its JSON form (StreamOptions.EventJSON).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	ssefold "github.com/ssefold/ssefold/bindings/go"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rss FILE [json]")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	defer f.Close()
	s, err := ssefold.NewStream(ssefold.Auto, &ssefold.StreamOptions{EventJSON: len(os.Args) > 2 && os.Args[2] == "json"})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	start := time.Now()
	buf := make([]byte, 64<<10)
	events := 0
	for err == nil {
		var n int
		n, err = f.Read(buf)
		if n > 0 {
			evs, ferr := s.Feed(buf[:n])
			events += len(evs)
			if ferr != nil {
				err = ferr
			}
		}
	}
	if errors.Is(err, io.EOF) {
		var evs []ssefold.StreamEvent
		evs, err = s.Finish()
		events += len(evs)
	}
	m, _ := s.Message()
	fmt.Fprintf(os.Stderr, "%v; %d events; message %d bytes; %.2fs\n", err, events, len(m), time.Since(start).Seconds())
}
