// Command rss folds one provider stream read from a file in 64 KiB chunks
// (as an HTTP body arrives), every event returned and dropped, then the
// folded message: the peak RSS figures of BENCHMARKS.md ("Hostile input and
// scale") come from running it under /usr/bin/time -v.
//
//	go build -o /tmp/gorss ./rss && /usr/bin/time -v /tmp/gorss FILE [json] [paths=N]
//
// With `json`, every event carries its JSON form (StreamOptions.EventJSON).
// `paths=N` sets StreamOptions.MaxPathEventsPerFeed (default 16,384; a
// negative N: none). It prints the events, the most one Feed returned and
// the message's size.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	ssefold "github.com/ssefold/ssefold/bindings/go"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rss FILE [json] [paths=N]")
		os.Exit(2)
	}
	var opts ssefold.StreamOptions
	for _, a := range os.Args[2:] {
		switch {
		case a == "json":
			opts.EventJSON = true
		case strings.HasPrefix(a, "paths="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "paths="))
			if err != nil {
				panic(err)
			}
			opts.MaxPathEventsPerFeed = n
		}
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	defer f.Close()
	s, err := ssefold.NewStream(ssefold.Auto, &opts)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	start := time.Now()
	buf := make([]byte, 64<<10)
	events, most := 0, 0
	for err == nil {
		var n int
		n, err = f.Read(buf)
		if n > 0 {
			evs, ferr := s.Feed(buf[:n])
			events += len(evs)
			most = max(most, len(evs))
			if ferr != nil {
				err = ferr
			}
		}
	}
	if errors.Is(err, io.EOF) {
		var evs []ssefold.StreamEvent
		evs, err = s.Finish()
		events += len(evs)
		most = max(most, len(evs))
	}
	m, _ := s.Message()
	fmt.Fprintf(os.Stderr, "%v; %d events, at most %d in one call; message %d bytes; %.2fs\n", err, events, most, len(m),
		time.Since(start).Seconds())
}
