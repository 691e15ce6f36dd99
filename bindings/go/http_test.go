package ssefold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// withIDs re-encodes a fixture with ids 1..n and a retry field.
func withIDs(t *testing.T, path string) ([]string, json.RawMessage) {
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewDecoder(nil)
	defer d.Close()
	evs, _ := d.Feed(body)
	e, _ := NewEncoder()
	defer e.Close()
	var out []string
	for i, ev := range evs {
		e.Clear()
		ev.ID, ev.HasID = strconv.Itoa(i+1), true
		ev.RetryMS, ev.HasRetry = 5, i == 0
		if err := e.Event(ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(e.Bytes()))
	}
	want, _ := os.ReadFile(strings.TrimSuffix(path, ".sse") + ".json")
	return out, want
}

type server struct {
	mu       sync.Mutex
	events   []string
	requests []string // Last-Event-ID of each request
	dropAt   []int    // per request: cut after this many events (mid-event), -1 none
	honour   bool
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.requests)
	lid := r.Header.Get("Last-Event-ID")
	s.requests = append(s.requests, lid)
	drop := -1
	if n < len(s.dropAt) {
		drop = s.dropAt[n]
	}
	s.mu.Unlock()
	start := 0
	if s.honour && lid != "" {
		start, _ = strconv.Atoi(lid)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := start; i < len(s.events); i++ {
		if i-start == drop {
			half := s.events[i][:len(s.events[i])/2]
			w.Write([]byte(half))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // cut the connection mid-event
		}
		w.Write([]byte(s.events[i]))
	}
}

func runHTTP(t *testing.T, srv *server, ctx context.Context) (json.RawMessage, []StreamEvent, int, error) {
	return runHTTPAs(t, srv, ctx, Anthropic)
}

// runHTTPAs is runHTTP with the body folded as provider p.
func runHTTPAs(t *testing.T, srv *server, ctx context.Context, p Provider) (json.RawMessage, []StreamEvent, int, error) {
	return runHTTPWith(t, srv, ctx, p, nil)
}

// runHTTPWith is runHTTPAs with the policy changed by edit.
func runHTTPWith(t *testing.T, srv *server, ctx context.Context, p Provider, edit func(*ReconnectPolicy)) (json.RawMessage, []StreamEvent, int, error) {
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var evs []StreamEvent
	pol := DefaultReconnectPolicy()
	pol.InitialDelay = time.Millisecond
	if edit != nil {
		edit(&pol)
	}
	h := &HTTPStream{
		Provider: p,
		Policy:   &pol,
		OnEvent:  func(e StreamEvent) error { evs = append(evs, e); return nil },
		NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "POST", ts.URL, strings.NewReader("{}"))
		},
	}
	m, n, err := h.run(ctx)
	return m, evs, n, err
}

// wholeBody serves the fixture at path as one body, and its folded message.
func wholeBody(t *testing.T, path string) (*server, json.RawMessage) {
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(strings.TrimSuffix(path, ".sse") + ".json")
	return &server{events: []string{string(body)}}, want
}

// warningCodes are the codes of the warning events (JSON form).
func warningCodes(evs []StreamEvent) []string {
	var codes []string
	for _, e := range evs {
		var w struct{ Code string }
		if e.Kind == KindWarning && json.Unmarshal(e.JSON, &w) == nil {
			codes = append(codes, w.Code)
		}
	}
	return codes
}

// A Chat body that ends after its finish_reason without data: [DONE] (vLLM,
// TGI, proxies) is complete: the message, one request, no error, and the
// turn ended by Finish (a terminal_missing warning, then the turn end).
func TestHTTPChatWithoutDoneIsCompleteInOneRequest(t *testing.T) {
	srv, want := wholeBody(t, "../../tests/fixtures/openai_chat/no_done_vllm.sse")
	m, evs, n, err := runHTTPAs(t, srv, context.Background(), OpenAIChat)
	if err != nil || n != 1 || len(srv.requests) != 1 {
		t.Fatalf("err %v, %d connections, %d requests", err, n, len(srv.requests))
	}
	if !jsonEqual(t, m, want) {
		t.Fatalf("message\n got %s\nwant %s", m, want)
	}
	last := evs[len(evs)-1]
	if codes := warningCodes(evs); len(codes) != 1 || codes[0] != "terminal_missing" {
		t.Fatalf("warnings %q", codes)
	}
	if last.Kind != KindTurnEnd || last.Text != "stop" {
		t.Fatalf("last event %+v", last)
	}
}

// Gemini has no terminal event: a body that ends after every finishReason
// is complete at EOF, never an early end reconnected.
func TestHTTPGeminiBodyEndingAtEOFIsComplete(t *testing.T) {
	srv, want := wholeBody(t, "../../tests/fixtures/gemini/text.sse")
	m, evs, n, err := runHTTPAs(t, srv, context.Background(), Gemini)
	if err != nil || n != 1 || len(srv.requests) != 1 {
		t.Fatalf("err %v, %d connections, %d requests", err, n, len(srv.requests))
	}
	if !jsonEqual(t, m, want) {
		t.Fatalf("message\n got %s\nwant %s", m, want)
	}
	for _, e := range evs {
		if e.Kind == KindTurnReset {
			t.Fatal("restarted")
		}
	}
	if last := evs[len(evs)-1]; last.Kind != KindTurnEnd || last.Text != "STOP" {
		t.Fatalf("last event %+v", last)
	}
}

// A Chat body whose usage was announced ("usage": null) but never came is
// not whole: an early end. Its text was shown and Chat has no resume
// cursor, so it is not sent again (not_resumable), unless the policy
// restarts after output: then reconnected, then given up.
func TestHTTPChatMissingItsAnnouncedUsageIsReconnected(t *testing.T) {
	srv, _ := wholeBody(t, "../../tests/fixtures/openai_chat/no_done_usage_missing.sse")
	_, _, n, err := runHTTPAs(t, srv, context.Background(), OpenAIChat)
	var g *GiveUpError
	if !errors.As(err, &g) || g.LastEnd != EndEndedEarly || g.Reason != GiveUpNotResumable || n != 1 ||
		len(srv.requests) != 1 || !strings.Contains(err.Error(), "not_resumable") {
		t.Fatalf("want not_resumable after 1 connection, got %v (%d)", err, n)
	}
	srv, _ = wholeBody(t, "../../tests/fixtures/openai_chat/no_done_usage_missing.sse")
	_, _, n, err = runHTTPWith(t, srv, context.Background(), OpenAIChat, func(p *ReconnectPolicy) { p.RestartAfterOutput = true })
	if !errors.As(err, &g) || g.LastEnd != EndEndedEarly || g.Reason != GiveUpRetriesExhausted || n != 3 ||
		len(srv.requests) != 3 {
		t.Fatalf("want give up after 3 connections, got %v (%d)", err, n)
	}
}

func TestHTTPResumeWithLastEventID(t *testing.T) {
	events, want := withIDs(t, "../../tests/fixtures/anthropic/thinking_text_citations.sse")
	srv := &server{events: events, dropAt: []int{5, 3}, honour: true}
	m, evs, n, err := runHTTP(t, srv, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, m, want) {
		t.Fatalf("message\n got %s\nwant %s", m, want)
	}
	if n != 3 || srv.requests[0] != "" || srv.requests[1] != "5" || srv.requests[2] != "8" {
		t.Fatalf("connections %d, Last-Event-IDs %q", n, srv.requests)
	}
	for _, e := range evs {
		if e.Kind == KindTurnReset {
			t.Fatal("resume reported a turn reset")
		}
	}
}

func TestHTTPServerIgnoresLastEventID(t *testing.T) {
	events, want := withIDs(t, "../../tests/fixtures/anthropic/interleaved_tools.sse")
	srv := &server{events: events, dropAt: []int{6}, honour: false}
	m, evs, n, err := runHTTP(t, srv, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, m, want) {
		t.Fatalf("message\n got %s\nwant %s", m, want)
	}
	resets := 0
	for _, e := range evs {
		if e.Kind == KindTurnReset {
			resets++
		}
	}
	if n != 2 || srv.requests[1] != "6" || resets != 1 {
		t.Fatalf("connections %d, ids %q, resets %d", n, srv.requests, resets)
	}
}

func TestHTTPRestartWithoutIDs(t *testing.T) {
	body, _ := os.ReadFile("../../tests/fixtures/anthropic/thinking_text_citations.sse")
	want, _ := os.ReadFile("../../tests/fixtures/anthropic/thinking_text_citations.json")
	parts := strings.SplitAfter(string(body), "\n\n")
	// Without a cursor an answer already shown is not sent again...
	srv := &server{events: parts, dropAt: []int{4}}
	m, _, n, err := runHTTP(t, srv, context.Background())
	var g *GiveUpError
	if !errors.As(err, &g) || g.Reason != GiveUpNotResumable || n != 1 || !strings.Contains(string(m), "Let me think") {
		t.Fatalf("%v %d %q %s", err, n, srv.requests, m)
	}
	// ...unless the policy restarts after output (a turn_reset).
	srv = &server{events: parts, dropAt: []int{4}}
	restart := func(p *ReconnectPolicy) { p.RestartAfterOutput = true }
	m, _, n, err = runHTTPWith(t, srv, context.Background(), Anthropic, restart)
	if err != nil || n != 2 || srv.requests[1] != "" || !jsonEqual(t, m, want) {
		t.Fatalf("%v %d %q %s", err, n, srv.requests, m)
	}
}

func TestHTTPGiveUpAndProviderError(t *testing.T) {
	events, _ := withIDs(t, "../../tests/fixtures/anthropic/thinking_text_citations.sse")
	srv := &server{events: events, dropAt: []int{2, 0, 0, 0}, honour: true}
	_, _, n, err := runHTTP(t, srv, context.Background())
	var g *GiveUpError
	if !errors.As(err, &g) || n != 3 {
		t.Fatalf("want give up after 3 connections, got %v (%d)", err, n)
	}
	if !errors.Is(err, ErrIncompleteStream) || !errors.Is(err, ErrIncomplete) || errors.Is(err, ErrProviderError) {
		t.Fatalf("a give-up is an incomplete stream: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "end kind") || strings.HasSuffix(msg, ": ") ||
		!strings.HasSuffix(msg, "; gave up after 2 reconnection(s)") {
		t.Fatalf("unreadable: %q", msg)
	}
	errEvents, _ := withIDs(t, "../../tests/fixtures/anthropic/error_mid_stream.sse")
	srv = &server{events: errEvents, honour: true}
	m, _, n, err := runHTTP(t, srv, context.Background())
	if !errors.Is(err, ErrProviderError) || n != 1 || !strings.Contains(err.Error(), "overloaded_error") {
		t.Fatalf("%v %d", err, n)
	}
	if !errors.Is(err, ErrRetryableProviderError) || errors.Is(err, ErrIncompleteStream) {
		t.Fatalf("overloaded_error is retryable: %v", err)
	}
	if !strings.Contains(string(m), "Partial ans") {
		t.Fatalf("partial message lost: %s", m)
	}
	if _, _, _, err := runHTTP(t, &server{events: []string{"data: x"}}, context.Background()); err == nil {
		t.Fatal("bad body accepted")
	}
}

func TestHTTPStatusAndCancel(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", 400)
	}))
	defer ts.Close()
	h := &HTTPStream{Provider: Anthropic, NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
	}}
	_, err := h.Run(context.Background())
	var se *HTTPStatusError
	if !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("%v", err)
	}
	// A server that sends one event then stalls: cancelling aborts.
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer stall.Close()
	h.NewRequest = func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, "GET", stall.URL, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var last StreamEvent
	h.OnEvent = func(e StreamEvent) error { last = e; return nil }
	t0 := time.Now()
	_, err = h.Run(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 2*time.Second {
		t.Fatalf("%v after %v", err, time.Since(t0))
	}
	if last.Kind != KindTurnEnd || last.Text != "aborted" {
		t.Fatalf("cancel did not abort the turn: %+v", last)
	}
}

func TestHTTPResponsesStartingAfter(t *testing.T) {
	body, _ := os.ReadFile("../../tests/fixtures/openai_responses/reasoning_text_tool.sse")
	want, _ := os.ReadFile("../../tests/fixtures/openai_responses/reasoning_text_tool.json")
	events := strings.SplitAfter(string(body), "\n\n")
	var mu sync.Mutex
	var seen []string
	calls := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		after := r.URL.Query().Get("starting_after")
		seen = append(seen, after)
		mu.Unlock()
		start := 0
		if after != "" {
			a, _ := strconv.Atoi(after)
			start = a + 1 // event i carries sequence_number i
		}
		for i := start; i < len(events); i++ {
			if n == 1 && i == 7 {
				w.Write([]byte(events[i][:len(events[i])/2]))
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
			w.Write([]byte(events[i]))
		}
	}))
	defer ts.Close()
	pol := DefaultReconnectPolicy()
	pol.InitialDelay = time.Millisecond
	h := &HTTPStream{Provider: OpenAIResponses, Policy: &pol,
		NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
			u := ts.URL
			if c.Kind == CursorStartingAfter {
				u += "?starting_after=" + strconv.FormatUint(c.StartingAfter, 10)
			}
			return http.NewRequestWithContext(ctx, "GET", u, nil)
		}}
	m, err := h.Run(context.Background())
	if err != nil || !jsonEqual(t, m, want) {
		t.Fatalf("%v\n got %s\nwant %s", err, m, want)
	}
	if len(seen) != 2 || seen[0] != "" || seen[1] != "6" {
		t.Fatalf("starting_after %q", seen)
	}
}

func TestHTTPStatusErrorKinds(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		retryable bool
		typ, msg  string
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, true, "overloaded_error", "Overloaded"},
		{429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, true, "requests", "slow down"},
		{503, `upstream unavailable`, true, "http_error", "upstream unavailable"},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad model"}}`, false, "invalid_request_error", "bad model"},
	}
	for _, c := range cases {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			fmt.Fprint(w, c.body)
		}))
		h := &HTTPStream{Provider: Anthropic, NewRequest: func(ctx context.Context, _ ResumeCursor) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
		}}
		_, err := h.Run(context.Background())
		ts.Close()
		var se *HTTPStatusError
		if !errors.As(err, &se) || se.StatusCode != c.status || se.Body != c.body || se.ErrorType != c.typ || se.Message != c.msg {
			t.Fatalf("%d: %#v", c.status, err)
		}
		if !errors.Is(err, ErrProviderError) || errors.Is(err, ErrRetryableProviderError) != c.retryable ||
			errors.Is(err, ErrIncompleteStream) {
			t.Fatalf("%d: kinds of %v", c.status, err)
		}
		if want := fmt.Sprintf("ssefold: HTTP %d: %s: %s", c.status, c.typ, c.msg); err.Error() != want {
			t.Fatalf("%q, want %q", err.Error(), want)
		}
	}
}

func TestHTTPRefusedConnectionSaysSo(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nobody listens there now
	policy := DefaultReconnectPolicy()
	policy.InitialDelay, policy.MaxRetries = time.Millisecond, 1
	h := &HTTPStream{Provider: Anthropic, Policy: &policy,
		NewRequest: func(ctx context.Context, _ ResumeCursor) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "GET", url, nil)
		}}
	_, err := h.Run(context.Background())
	var g *GiveUpError
	if !errors.As(err, &g) || g.LastEnd != EndTransportError || g.Connected || !errors.Is(err, ErrIncompleteStream) {
		t.Fatalf("%#v", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "ssefold: could not connect: ") || !strings.Contains(msg, "connection refused") ||
		strings.Contains(msg, "terminal event") {
		t.Fatalf("%q", msg)
	}
}

func TestEndKindNames(t *testing.T) {
	want := []string{"completed", "ended_early", "transport_error", "idle_timeout", "provider_error", "aborted"}
	for i, w := range want {
		if got := EndKind(i).String(); got != w {
			t.Errorf("%d: %q", i, got)
		}
	}
}

// ---- idle timeout (issue 26, item 9) ----------------------------------------

// stallServer serves the fixture's events with ids; per request it stalls
// (holds the connection open, sending nothing) after stallAt[n] events, or
// before the headers when stallAt[n] is -2, or drips the rest one byte
// every drip; the stalls end when the test ends (release).
type stallServer struct {
	mu       sync.Mutex
	events   []string
	stallAt  []int
	drip     time.Duration
	requests []string
	release  chan struct{}
}

func (s *stallServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.requests)
	lid := r.Header.Get("Last-Event-ID")
	s.requests = append(s.requests, lid)
	stall := -1
	if n < len(s.stallAt) {
		stall = s.stallAt[n]
	}
	s.mu.Unlock()
	wait := func() {
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
	}
	if stall == -2 {
		wait() // no headers at all
		return
	}
	start, _ := strconv.Atoi(lid)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	for i := start; i < len(s.events); i++ {
		if i-start == stall {
			wait()
			return
		}
		if s.drip > 0 {
			for j := 0; j < len(s.events[i]); j++ {
				if _, err := w.Write([]byte{s.events[i][j]}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-time.After(s.drip):
				case <-r.Context().Done():
					return
				}
			}
			continue
		}
		w.Write([]byte(s.events[i]))
		w.(http.Flusher).Flush()
	}
}

func runIdle(t *testing.T, srv *stallServer, idle time.Duration, retries uint32, ctx context.Context) (json.RawMessage, int, time.Duration, error) {
	t.Helper()
	srv.release = make(chan struct{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer close(srv.release)
	pol := DefaultReconnectPolicy()
	pol.InitialDelay = time.Millisecond
	pol.MaxRetries = retries
	pol.IdleTimeout = idle
	h := &HTTPStream{
		Provider: Anthropic,
		Policy:   &pol,
		NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "POST", ts.URL, strings.NewReader("{}"))
		},
	}
	start := time.Now()
	m, n, err := h.run(ctx)
	return m, n, time.Since(start), err
}

func TestHTTPIdleTimeoutEndsAStalledConnectionAndGivesUp(t *testing.T) {
	events, _ := withIDs(t, "../../tests/fixtures/anthropic/thinking_text_citations.sse")
	srv := &stallServer{events: events, stallAt: []int{4, 0}}
	// No deadline on the context: before the fix this never returned.
	m, n, took, err := runIdle(t, srv, 250*time.Millisecond, 1, context.Background())
	var g *GiveUpError
	if !errors.As(err, &g) || g.LastEnd != EndIdleTimeout || !errors.Is(err, ErrIncompleteStream) {
		t.Fatalf("want an idle give-up, got %v", err)
	}
	if !strings.Contains(err.Error(), "the connection went idle: no data for 250 ms from the server") {
		t.Fatalf("message: %v", err)
	}
	if n != 2 || srv.requests[1] != "4" {
		t.Fatalf("%d connections, Last-Event-IDs %q", n, srv.requests)
	}
	if took < 500*time.Millisecond || took > 5*time.Second {
		t.Fatalf("took %v (two idle connections of 250 ms)", took)
	}
	if !strings.Contains(string(m), `"thinking"`) {
		t.Fatalf("the message so far is kept: %s", m)
	}
}

func TestHTTPIdleTimeoutReconnectsAndResumes(t *testing.T) {
	events, want := withIDs(t, "../../tests/fixtures/anthropic/thinking_text_citations.sse")
	srv := &stallServer{events: events, stallAt: []int{3, -1}}
	// The third event is a ping: it moves the cursor although it shows
	// nothing (it once did not when it came alone in a read: Last-Event-ID
	// "2"; the test then blamed the machine and waited 1 s, kept).
	m, n, _, err := runIdle(t, srv, time.Second, 2, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, m, want) {
		t.Fatalf("message\n got %s\nwant %s", m, want)
	}
	if n != 2 || srv.requests[1] != "3" {
		t.Fatalf("%d connections, Last-Event-IDs %q", n, srv.requests)
	}
}

func TestHTTPIdleTimeoutCoversTheWaitForHeaders(t *testing.T) {
	events, want := withIDs(t, "../../tests/fixtures/anthropic/thinking_text_citations.sse")
	srv := &stallServer{events: events, stallAt: []int{-2, -1}}
	m, n, _, err := runIdle(t, srv, 300*time.Millisecond, 1, context.Background())
	if err != nil || !jsonEqual(t, m, want) || n != 2 {
		t.Fatalf("%v, %d connections: %s", err, n, m)
	}
	srv = &stallServer{events: events, stallAt: []int{-2, -2}}
	_, _, _, err = runIdle(t, srv, 100*time.Millisecond, 1, context.Background())
	var g *GiveUpError
	if !errors.As(err, &g) || g.LastEnd != EndIdleTimeout || g.Connected ||
		!strings.Contains(err.Error(), "waiting for the response") {
		t.Fatalf("want an idle give-up before any response, got %v", err)
	}
}

func TestHTTPSlowDripIsActivityButSlowerThanIdleIsNot(t *testing.T) {
	// One byte every 2 ms with a 300 ms idle timeout: bytes keep it alive.
	body := "id: 1\nevent: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
	stop := "id: 2\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\nid: 3\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := &stallServer{events: []string{body, stop}, drip: 2 * time.Millisecond}
	_, n, _, err := runIdle(t, srv, 300*time.Millisecond, 0, context.Background())
	if err != nil || n != 1 {
		t.Fatalf("a steady drip is not idle: %v, %d connections", err, n)
	}
	// One byte every 200 ms with a 60 ms idle timeout: idle at the first gap.
	srv = &stallServer{events: []string{body, stop}, drip: 200 * time.Millisecond}
	_, n, took, err := runIdle(t, srv, 60*time.Millisecond, 1, context.Background())
	var g *GiveUpError
	if !errors.As(err, &g) || g.LastEnd != EndIdleTimeout || n != 2 || took > 3*time.Second {
		t.Fatalf("a drip slower than the idle timeout: %v, %d connections, %v", err, n, took)
	}
}

func TestHTTPCancelDuringAStallIsAnAbortNotIdle(t *testing.T) {
	events, _ := withIDs(t, "../../tests/fixtures/anthropic/thinking_text_citations.sse")
	srv := &stallServer{events: events, stallAt: []int{2}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, n, _, err := runIdle(t, srv, time.Minute, 2, ctx)
	if !errors.Is(err, context.DeadlineExceeded) || n != 1 {
		t.Fatalf("want the context's error, got %v (%d connections)", err, n)
	}
}
