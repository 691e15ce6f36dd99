package ssefold

import (
	"errors"
	"io"
	"iter"
	"sync"
)

// ChunkSize is the read size of ReadEvents and Fold: one cgo call per
// network-sized chunk, never one per event.
const ChunkSize = 64 << 10

// ReadEvents feeds r to a new Stream for provider in ChunkSize chunks and
// calls fn for each normalized event. It returns fn's first error, a read
// error, or the stream's error (errors.Is with ErrProviderError,
// ErrIncomplete, ErrLimit, ErrInvalidInput).
func ReadEvents(r io.Reader, provider Provider, fn func(StreamEvent) error) error {
	s, err := NewStream(provider, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	return pump(r, s, fn)
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, ChunkSize); return &b }}

func pump(r io.Reader, s *Stream, fn func(StreamEvent) error) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	for {
		n, rerr := io.ReadAtLeast(r, buf, 1)
		if n > 0 {
			evs, err := s.Feed(buf[:n])
			for _, e := range evs {
				if fn != nil {
					if ferr := fn(e); ferr != nil {
						return ferr
					}
				}
			}
			if err != nil {
				return err
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
				evs, err := s.Finish()
				for _, e := range evs {
					if fn != nil {
						if ferr := fn(e); ferr != nil {
							return ferr
						}
					}
				}
				return err
			}
			return rerr
		}
	}
}

// Events is the iterator form of ReadEvents: it yields each event with a
// nil error, and a final zero event with the error if one happened.
func Events(r io.Reader, provider Provider) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		stop := errors.New("stop")
		err := ReadEvents(r, provider, func(e StreamEvent) error {
			if !yield(e, nil) {
				return stop
			}
			return nil
		})
		if err != nil && err != stop {
			yield(StreamEvent{}, err)
		}
	}
}

// Fold reads r to its end and returns the folded message (no per-event
// callbacks: the fastest path). The message so far is returned with the
// error too.
func Fold(r io.Reader, provider Provider) ([]byte, error) {
	s, err := NewStream(provider, &StreamOptions{NoEvents: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	perr := pump(r, s, nil)
	m, err := s.Message()
	if err != nil {
		return nil, err
	}
	return m, perr
}
