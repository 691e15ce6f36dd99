package ssefold

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 26, item 17: two goroutines on one value (not allowed) must get a
// typed ResultBadState for the call that loses the race, never a data race
// (this file runs under the race detector in make go-test) or a corrupted
// handle. Decoder, Stream, PartialJSON and AgentTurn claim the value on the
// Go side; Relay (no Go state) is refused by the C handle's atomic claim.

// contend makes a pair of calls on one value with round (on the test's
// goroutine: the value is made there), runs long on another goroutine and
// short in a loop on this one until long returns, and does so until short
// was refused at least once. A long call refused because short held the
// value is tried again (a refused call changes nothing).
func contend(t *testing.T, round func() (long, short func() error)) {
	t.Helper()
	for attempt := 0; attempt < 40; attempt++ {
		long, short := round()
		var done atomic.Bool
		var longErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer done.Store(true)
			for {
				if longErr = long(); !errors.Is(longErr, ErrBadState) {
					return
				}
			}
		}()
		refused := 0
		for !done.Load() {
			err := short()
			var e *Error
			switch {
			case err == nil:
			case errors.Is(err, ErrBadState) && errors.As(err, &e) && e.Code == ResultBadState:
				refused++
			default:
				wg.Wait()
				t.Fatalf("the concurrent call failed with %v, not ResultBadState", err)
			}
		}
		wg.Wait()
		if longErr != nil {
			t.Fatalf("the long call: %v", longErr)
		}
		if refused > 0 {
			return
		}
	}
	t.Fatal("the two goroutines never overlapped")
}

// untilFree calls f until the other goroutine does not hold the value.
func untilFree(f func() error) error {
	for {
		if err := f(); !errors.Is(err, ErrBadState) {
			return err
		}
	}
}

// bigAnthropic is an Anthropic text answer of n deltas (one word each).
func bigAnthropic(n int) ([]byte, string) {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < n; i++ {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word \"}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(b.String()), strings.Repeat("word ", n)
}

func TestConcurrentDecoderUseIsBadState(t *testing.T) {
	d, err := NewDecoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const n = 60000
	long := []byte(strings.Repeat("data: a\n\n", n))
	contend(t, func() (func() error, func() error) {
		return func() error {
				evs, err := d.Feed(long)
				if err != nil {
					return err
				}
				if len(evs) != n {
					t.Errorf("%d events, want %d", len(evs), n)
				}
				for _, e := range evs {
					if e.Data != "a" {
						t.Errorf("an event of the other goroutine inside this call: %q", e.Data)
						break
					}
				}
				return nil
			}, func() error {
				evs, err := d.Feed([]byte("data: b\n\n"))
				if err == nil && (len(evs) != 1 || evs[0].Data != "b") {
					t.Errorf("short call: %+v", evs)
				}
				if err != nil && evs != nil {
					t.Errorf("a refused call returned events: %+v", evs)
				}
				return err
			}
	})
	if evs, err := d.Feed([]byte("data: c\n\n")); err != nil || len(evs) != 1 {
		t.Fatalf("the decoder is usable afterwards: %v %v", evs, err)
	}
}

func TestConcurrentStreamUseIsBadState(t *testing.T) {
	body, text := bigAnthropic(20000)
	contend(t, func() (func() error, func() error) {
		s, err := NewStream(Anthropic, &StreamOptions{EventJSON: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return func() error {
				evs, err := s.Feed(body)
				if err == nil {
					if len(evs) < 20000 {
						t.Errorf("%d events", len(evs))
					}
					var msg []byte
					err := untilFree(func() (err error) { msg, err = s.Message(); return })
					if err != nil || !strings.Contains(string(msg), text) {
						t.Errorf("the folded text is not whole after the race: %v %.200s", err, msg)
					}
				}
				return err
			}, func() error {
				_, err := s.Message()
				return err
			}
	})
}

func TestConcurrentPartialJSONUseIsBadState(t *testing.T) {
	doc := []byte("[" + strings.Repeat(`{"k":[1,"two"]},`, 20000) + "0]")
	contend(t, func() (func() error, func() error) {
		p, err := NewPartialJSON(&PartialJSONOptions{Events: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return func() error {
				evs, err := p.Push(doc)
				if err == nil {
					if len(evs) < 20000 {
						t.Errorf("%d events", len(evs))
					}
					var v []byte
					if err := untilFree(func() (err error) { v, err = p.Finish(); return }); err != nil || len(v) != len(doc) {
						t.Errorf("%v %d", err, len(v))
					}
				}
				return err
			}, func() error {
				_, _, err := p.Value(false)
				return err
			}
	})
}

func TestConcurrentAgentTurnUseIsBadState(t *testing.T) {
	body, text := bigAnthropic(20000)
	contend(t, func() (func() error, func() error) {
		turn, err := NewAgentTurn(&AgentTurnConfig{Provider: Anthropic})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { turn.Close() })
		if err := turn.Connected(0); err != nil {
			t.Fatal(err)
		}
		return func() error {
				if _, err := turn.Feed(body, 0); err != nil {
					return err
				}
				if err := untilFree(func() (err error) { _, err = turn.EndOfBody(0); return }); err != nil {
					t.Error(err)
				}
				var out TurnResult
				err := untilFree(func() (err error) { out, err = turn.Outcome(); return })
				if err != nil || !strings.Contains(string(out.Message), text) {
					t.Errorf("%v %.200s", err, out.Message)
				}
				return nil
			}, func() error {
				_, err := turn.Tick(0)
				return err
			}
	})
}

// A Relay's call returns bytes that point into the relay until Go copies
// them: the Go claim covers the copy (without it, the other goroutine's call
// could move the buffer under the copy), and refuses the other call.
func TestConcurrentRelayUseIsBadStateFromTheCHandle(t *testing.T) {
	body, _ := bigAnthropic(20000)
	contend(t, func() (func() error, func() error) {
		rl, err := NewRelayWithStream(Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rl.Close() })
		return func() error {
				out, err := rl.Feed(body)
				if err == nil {
					if !strings.Contains(string(out), "word") {
						t.Errorf("the body was not relayed: %.200s", out)
					}
				}
				return err
			}, func() error {
				_, err := rl.Log("info", "from the other goroutine", nil, time.Now(), "")
				return err
			}
	})
}
