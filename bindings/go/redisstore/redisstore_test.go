package redisstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	ssefold "github.com/ssefold/ssefold/bindings/go"
)

const fixture = "../../../tests/fixtures/anthropic/interleaved_tools.sse"

// redisAddr is the throwaway redis-server of this test binary.
var redisAddr string

// TestMain starts a redis-server (no persistence) on a free port, or, in a
// child started by TestTwoServerProcessesOneKilledMidStream, runs an HTTP
// server that serves streams from it.
func TestMain(m *testing.M) {
	if addr := os.Getenv("REDISSTORE_TEST_SERVE"); addr != "" {
		serveHelper(addr)
		return
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis-server not found: tools/setup.sh installs Debian's redis-server")
		os.Exit(1)
	}
	port := freePort()
	dir, err := os.MkdirTemp("", "redisstore")
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	redisAddr = fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", redisAddr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			panic(err)
		}
	}
	code := m.Run()
	cmd.Process.Kill()
	cmd.Wait()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func newStore(t *testing.T, opts *Options) (*Store, *redis.Client) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { client.Close() })
	if opts == nil {
		opts = &Options{}
	}
	if opts.Prefix == "" {
		opts.Prefix = fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())
	}
	return New(client, opts), client
}

// relayCalls relays the fixture one SSE event per call: each call's frames,
// the trailer, and every byte the relay wrote.
func relayCalls(t *testing.T, format ssefold.RelayFormat) ([][]ssefold.RelayFrame, []byte, []byte) {
	t.Helper()
	body, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := ssefold.NewRelayWithStream(ssefold.Auto, &ssefold.RelayOptions{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	var calls [][]ssefold.RelayFrame
	var out []byte
	add := func(b []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
		calls = append(calls, rl.Frames())
	}
	for _, event := range bytes.Split(body, []byte("\n\n")) {
		add(rl.Feed(append(event, "\n\n"...)))
	}
	add(rl.EndOfInput())
	add(rl.Finish(nil))
	return calls, rl.Trailer(), out
}

func collect(t *testing.T, s *Store, streamID, lastEventID string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []byte
	err := s.After(ctx, streamID, lastEventID, func(frame []byte) error {
		out = append(out, frame...)
		return nil
	})
	return out, err
}

func TestEveryFrameAfterAnyIDExactlyOnce(t *testing.T) {
	ctx := context.Background()
	for _, format := range []ssefold.RelayFormat{ssefold.RelayAISDK, ssefold.RelayCatalog} {
		calls, trailer, out := relayCalls(t, format)
		s, _ := newStore(t, nil)
		var frames []ssefold.RelayFrame
		for _, call := range calls {
			n, err := s.Append(ctx, "t", call)
			if err != nil || n != len(call) {
				t.Fatalf("stored %d of %d: %v", n, len(call), err)
			}
			frames = append(frames, call...)
		}
		// A producer appending a call again stores nothing twice.
		if n, err := s.Append(ctx, "t", calls[3]); err != nil || n != 0 {
			t.Fatalf("re-append stored %d: %v", n, err)
		}
		if err := s.Finish(ctx, "t", trailer); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Append(ctx, "t", []ssefold.RelayFrame{{ID: uint64(len(frames) + 1), Bytes: []byte("late")}}); n != 0 {
			t.Fatal("a frame was stored after the finished marker")
		}
		if got, err := collect(t, s, "t", ""); err != nil || !bytes.Equal(got, out) {
			t.Fatalf("whole stream: %v\n%q\n%q", err, got, out)
		}
		for _, last := range []int{1, 2, len(frames) / 2, len(frames) - 1, len(frames)} {
			var want []byte
			for _, f := range frames[last:] {
				want = append(want, f.Bytes...)
			}
			want = append(want, trailer...)
			if got, err := collect(t, s, "t", strconv.Itoa(last)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("after %d: %v\n%q\n%q", last, err, got, want)
			}
		}
		if _, err := collect(t, s, "t", strconv.Itoa(len(frames)+1)); !errors.Is(err, ssefold.ErrUnknownEventID) {
			t.Fatalf("newer id: %v", err)
		}
		if _, err := collect(t, s, "gone", "3"); !errors.Is(err, ssefold.ErrReplayTooOld) {
			t.Fatalf("expired stream: %v", err)
		}
	}
}

func TestAReaderFollowsFramesAsTheyAreAppended(t *testing.T) {
	calls, trailer, out := relayCalls(t, ssefold.RelayAISDK)
	s, _ := newStore(t, &Options{Block: 50 * time.Millisecond})
	got := make(chan []byte)
	go func() {
		b, err := collect(t, s, "t", "")
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	ctx := context.Background()
	for _, call := range calls {
		if _, err := s.Append(ctx, "t", call); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(120 * time.Millisecond) // the reader idles (an empty send)
	if err := s.Finish(ctx, "t", trailer); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, out) {
		t.Fatalf("%q\n%q", b, out)
	}
}

func TestEntriesExpireAfterTheLastWrite(t *testing.T) {
	ctx := context.Background()
	s, client := newStore(t, &Options{TTL: 100 * time.Second})
	if _, err := s.Append(ctx, "t", []ssefold.RelayFrame{{ID: 1, Bytes: []byte("id: 1\n\n")}}); err != nil {
		t.Fatal(err)
	}
	if ttl := client.TTL(ctx, s.Key("t")).Val(); ttl <= 0 || ttl > 100*time.Second {
		t.Fatalf("ttl %v", ttl)
	}
	client.Expire(ctx, s.Key("t"), 5*time.Second)
	if err := s.Finish(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}
	if ttl := client.TTL(ctx, s.Key("t")).Val(); ttl <= 5*time.Second {
		t.Fatalf("the finish did not refresh the expiry: %v", ttl)
	}
	client.XDel(ctx, s.Key("t"), "0-1")
	client.Del(ctx, s.Key("t"))
	if _, err := collect(t, s, "t", "1"); !errors.Is(err, ssefold.ErrReplayTooOld) {
		t.Fatalf("expired: %v", err)
	}
}

// serveHelper is a server process: GET /stream/<id> from Redis, honouring
// Last-Event-ID, with the catalog's headers and keep-alive comments.
func serveHelper(addr string) {
	client := redis.NewClient(&redis.Options{Addr: addr})
	store := New(client, &Options{Block: 200 * time.Millisecond})
	rl, _ := ssefold.NewRelay(&ssefold.RelayOptions{Format: ssefold.RelayCatalog})
	headers := rl.Headers()
	rl.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Printf("http://%s/\n", l.Addr())
	http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/stream/")
		flusher := w.(http.Flusher)
		started := false
		err := store.After(r.Context(), id, r.Header.Get("Last-Event-ID"), func(frame []byte) error {
			if !started {
				for _, h := range headers {
					w.Header().Set(h.Name, h.Value)
				}
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, "retry: 200\n\n")
				started = true
			}
			if len(frame) == 0 {
				frame = []byte(": keep-alive\n\n")
			}
			_, err := w.Write(frame)
			flusher.Flush()
			return err
		})
		if !started && (errors.Is(err, ssefold.ErrReplayTooOld) || errors.Is(err, ssefold.ErrUnknownEventID)) {
			w.WriteHeader(http.StatusNoContent) // EventSource stops; reload the message
		}
	}))
}

type event struct{ id, name, data string }

// readEvents reads SSE events from body until `until` is seen or the body
// ends; only complete events count (what a browser's Last-Event-ID says).
func readEvents(body io.Reader, until string) []event {
	var out []event
	var cur event
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.id != "" {
				out = append(out, cur)
				if cur.name == until {
					return out
				}
			}
			cur = event{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return out
}

func startServer(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REDISSTORE_TEST_SERVE="+redisAddr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return cmd, strings.TrimSpace(url)
}

// The producer relays into Redis (paced); server process A serves a plain
// HTTP client until A is SIGKILLed mid-stream; the client reconnects with
// Last-Event-ID to process B, which never saw the stream: every event once,
// in order, ending with finish.
func TestTwoServerProcessesOneKilledMidStream(t *testing.T) {
	a, urlA := startServer(t)
	_, urlB := startServer(t)
	s, _ := newStore(t, &Options{Prefix: DefaultPrefix})
	streamID := fmt.Sprintf("turn-%d", time.Now().UnixNano())
	body, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	produced := make(chan error, 1)
	go func() {
		rl, err := ssefold.NewRelayWithStream(ssefold.Auto, &ssefold.RelayOptions{Format: ssefold.RelayCatalog})
		if err != nil {
			produced <- err
			return
		}
		defer rl.Close()
		ctx := context.Background()
		for _, ev := range bytes.Split(body, []byte("\n\n")) {
			if _, err := rl.Feed(append(ev, "\n\n"...)); err != nil {
				produced <- err
				return
			}
			if _, err := s.Save(ctx, streamID, rl); err != nil {
				produced <- err
				return
			}
			time.Sleep(40 * time.Millisecond)
		}
		rl.EndOfInput()
		s.Save(ctx, streamID, rl)
		rl.Finish(nil)
		_, err = s.Save(ctx, streamID, rl)
		produced <- err
	}()

	resp, err := http.Get(urlA + "stream/" + streamID)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("content-type") != "text/event-stream" {
		t.Fatalf("headers %v", resp.Header)
	}
	seen := readEvents(resp.Body, "tool-call")
	a.Process.Kill() // SIGKILL, mid-stream
	a.Wait()
	resp.Body.Close()
	if len(seen) == 0 || seen[len(seen)-1].name != "tool-call" {
		t.Fatalf("before the kill: %v", seen)
	}
	req, _ := http.NewRequest("GET", urlB+"stream/"+streamID, nil)
	req.Header.Set("Last-Event-ID", seen[len(seen)-1].id)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rest := readEvents(resp.Body, "finish")
	resp.Body.Close()
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	written, err := collect(t, s, streamID, "")
	if err != nil {
		t.Fatal(err)
	}
	want := readEvents(bytes.NewReader(written), "finish")
	got := append(seen, rest...)
	if len(seen) >= len(want) {
		t.Fatalf("A was not killed mid-stream: %d of %d events", len(seen), len(want))
	}
	for i, e := range got {
		if e.id != strconv.Itoa(i+1) {
			t.Fatalf("event %d has id %s: %v", i, e.id, got)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || got[len(got)-1].name != "finish" {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// A producer that died never finishes: once the stream expires, its readers
// end, and a reconnection is told it is too old.
func TestAFollowedStreamThatExpiresEndsItsReaders(t *testing.T) {
	s, _ := newStore(t, &Options{TTL: time.Second, Block: 50 * time.Millisecond})
	frame := []byte("id: 1\ndata: x\n\n")
	if _, err := s.Append(context.Background(), "t", []ssefold.RelayFrame{{ID: 1, Bytes: frame}}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if got, err := collect(t, s, "t", ""); err != nil || !bytes.Equal(got, frame) {
		t.Fatalf("%q, %v", got, err)
	}
	if time.Since(started) < 500*time.Millisecond {
		t.Fatal("the reader ended before the stream expired")
	}
	if _, err := collect(t, s, "t", "1"); !errors.Is(err, ssefold.ErrReplayTooOld) {
		t.Fatalf("reconnection after the expiry: %v", err)
	}
}
