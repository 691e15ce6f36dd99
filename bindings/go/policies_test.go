package ssefold

// Issue 27's production policies end to end, over loopback: a server that
// misbehaves on purpose (refuses, resets, stalls, cuts answers, stops with
// length) and counts the POSTs it gets, against RunTurnHTTP (the turn owns
// its requests) and HTTPStream. The decisions are the core's; these tests
// check that the Go IO carries them out.

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// chat builds an OpenAI Chat body from its chunks' choice JSON.
func chat(choices ...string) string {
	var b strings.Builder
	for _, c := range choices {
		b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","choices":[` + c + "]}\n\n")
	}
	return b.String()
}

func chatText(text string) string {
	return `{"index":0,"delta":{"content":` + strconv.Quote(text) + `}}`
}

func chatToolCall(index int, id, name, args string) string {
	return `{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(index) + `,"id":"` + id +
		`","type":"function","function":{"name":"` + name + `","arguments":` + strconv.Quote(args) + `}}]}}`
}

func chatFinish(reason string) string {
	return `{"index":0,"delta":{},"finish_reason":"` + reason + `"}`
}

const chatDone = "data: [DONE]\n\n"

// helloChat is a whole answer, "Hello world".
var helloChat = chat(chatText("Hello"), chatText(" world"), chatFinish("stop")) + chatDone

// misbehaving serves each POST with the next of its steps (the last one
// repeats), counting the POSTs and keeping each one's Last-Event-ID.
type misbehaving struct {
	mu    sync.Mutex
	steps []func(w http.ResponseWriter, r *http.Request)
	ids   []string
}

func (m *misbehaving) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	n := len(m.ids)
	m.ids = append(m.ids, r.Header.Get("Last-Event-ID"))
	step := m.steps[min(n, len(m.steps)-1)]
	m.mu.Unlock()
	step(w, r)
}

func (m *misbehaving) posts() (int, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.ids), append([]string(nil), m.ids...)
}

// refuse answers status with headers and a JSON error body.
func refuse(status int, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
		w.Write([]byte(`{"error":{"type":"rate_limit_error","message":"slow down"}}`))
	}
}

// serve answers a 200 event stream with body.
func serve(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(body))
	}
}

// resetAtOnce closes the connection (RST) before any byte of a response.
func resetAtOnce(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	conn.Close()
}

// cutAfter sends body, then drops the connection (the chunked body never
// ends: the client reads unexpected EOF).
func cutAfter(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(body))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}

// pingForever sends a keep-alive comment every 20 ms until the client goes.
func pingForever(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for {
		if _, err := w.Write([]byte(": ping\n\n")); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// fastPolicy retries after 5 ms, without jitter.
func fastPolicy() *ReconnectPolicy {
	p := DefaultReconnectPolicy()
	p.InitialDelay = 5 * time.Millisecond
	p.Jitter = 0
	return &p
}

// turnOver runs RunTurnHTTP against srv (POST, a JSON body) and collects
// its events; edit changes the options.
func turnOver(t *testing.T, srv *misbehaving, tools map[string]Tool, edit func(*TurnOptions)) (TurnResult, error, []TurnEvent) {
	t.Helper()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	opts := &TurnOptions{Policy: fastPolicy(), NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{"stream":true}`))
	}}
	if edit != nil {
		edit(opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	turn := RunTurnHTTP(ctx, OpenAIChat, tools, opts)
	evs := collect(turn)
	res, err := turn.Wait()
	return res, err, evs
}

// streamOver runs HTTPStream against srv.
func streamOver(t *testing.T, srv *misbehaving, p Provider, edit func(*ReconnectPolicy)) (string, error) {
	t.Helper()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	pol := fastPolicy()
	if edit != nil {
		edit(pol)
	}
	h := &HTTPStream{Provider: p, Policy: pol, NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{"stream":true}`))
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := h.Run(ctx)
	return string(m), err
}

func TestPolicy429ThenOKIsRetriedAfterItsRetryAfter(t *testing.T) {
	srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){
		refuse(429, "retry-after-ms", "30"), serve(helloChat)}}
	began := time.Now()
	res, err, _ := turnOver(t, srv, nil, func(o *TurnOptions) { o.Policy.InitialDelay = 10 * time.Second })
	if n, _ := srv.posts(); err != nil || n != 2 || res.Failure != nil || res.StopReason != "stop" ||
		!strings.Contains(string(res.Message), "Hello world") {
		t.Fatalf("%d POSTs, %v, %+v", n, err, res.Failure)
	}
	// The wait was the server's 30 ms, not the 10 s backoff.
	if took := time.Since(began); took < 30*time.Millisecond || took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
	a := res.Timings.Attempts
	if len(a) != 2 || a[0].Outcome != "http_status" || a[0].Status != 429 || a[1].Outcome != "completed" ||
		res.GaveUp != nil || !res.OutputStarted || res.Timings.TimeToFirstContent == nil {
		t.Fatalf("timings %+v gave up %v", res.Timings, res.GaveUp)
	}

	srv = &misbehaving{steps: []func(http.ResponseWriter, *http.Request){
		refuse(529, "retry-after", "0"), serve(helloChat)}}
	m, err := streamOver(t, srv, OpenAIChat, nil)
	if n, _ := srv.posts(); err != nil || n != 2 || !strings.Contains(m, "Hello world") {
		t.Fatalf("HTTPStream: %d POSTs, %v", n, err)
	}
}

func TestPolicyRefusalsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name    string
		step    func(http.ResponseWriter, *http.Request)
		status  int
		posts   int
		reason  GiveUpReason
		retried bool
	}{
		{"x-should-retry false", refuse(503, "x-should-retry", "false"), 503, 1, GiveUpNotRetryable, false},
		{"400", refuse(400), 400, 1, GiveUpNotRetryable, false},
		{"x-should-retry true on 400", refuse(400, "x-should-retry", "true"), 400, 3, GiveUpRetriesExhausted, true},
		{"429 three times", refuse(429, "retry-after-ms", "1"), 429, 3, GiveUpRetriesExhausted, true},
	} {
		srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){tc.step}}
		res, err, _ := turnOver(t, srv, nil, nil)
		var he *HTTPStatusError
		n, _ := srv.posts()
		if !errors.As(err, &he) || he.StatusCode != tc.status || n != tc.posts || !errors.Is(err, ErrProviderError) ||
			res.Failure == nil || res.Failure.Kind != "http" || res.Failure.Status != tc.status ||
			res.GaveUp == nil || *res.GaveUp != tc.reason || he.ErrorType != "rate_limit_error" {
			t.Fatalf("%s: %d POSTs, %v, %+v, gave up %v", tc.name, n, err, res.Failure, res.GaveUp)
		}
		srv = &misbehaving{steps: []func(http.ResponseWriter, *http.Request){tc.step}}
		_, err = streamOver(t, srv, OpenAIChat, nil)
		if n, _ := srv.posts(); !errors.As(err, &he) || he.StatusCode != tc.status || n != tc.posts {
			t.Fatalf("HTTPStream %s: %d POSTs, %v", tc.name, n, err)
		}
	}
}

func TestPolicyResetBeforeTheFirstByteIsRetried(t *testing.T) {
	srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){resetAtOnce, serve(helloChat)}}
	res, err, _ := turnOver(t, srv, nil, nil)
	if n, _ := srv.posts(); err != nil || n != 2 || res.Failure != nil || !strings.Contains(string(res.Message), "Hello world") {
		t.Fatalf("%d POSTs, %v", n, err)
	}
	if a := res.Timings.Attempts; len(a) != 2 || a[0].Outcome != "transport_error" {
		t.Fatalf("attempts %+v", a)
	}
	srv = &misbehaving{steps: []func(http.ResponseWriter, *http.Request){resetAtOnce, serve(helloChat)}}
	m, err := streamOver(t, srv, OpenAIChat, nil)
	if n, _ := srv.posts(); err != nil || n != 2 || !strings.Contains(m, "Hello world") {
		t.Fatalf("HTTPStream: %d POSTs, %v", n, err)
	}
}

func TestPolicyResetAfterOutputWithoutIDsIsNotSentAgain(t *testing.T) {
	cut := cutAfter(chat(chatText("Hello"), chatText(" wor")))
	srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){cut, serve(helloChat)}}
	res, err, _ := turnOver(t, srv, nil, nil)
	var g *GiveUpError
	var tf *TurnFailure
	if n, _ := srv.posts(); n != 1 || !errors.As(err, &g) || g.Reason != GiveUpNotResumable ||
		g.LastEnd != EndTransportError || !errors.Is(err, ErrIncompleteStream) || !errors.As(err, &tf) ||
		!strings.Contains(err.Error(), "not_resumable") {
		t.Fatalf("%d POSTs, %v", n, err)
	}
	if res.GaveUp == nil || *res.GaveUp != GiveUpNotResumable || !res.OutputStarted || res.Failure == nil ||
		res.Failure.Kind != "transport" || !strings.Contains(string(res.Message), "Hello wor") {
		t.Fatalf("%+v gave up %v: %s", res.Failure, res.GaveUp, res.Message)
	}

	srv = &misbehaving{steps: []func(http.ResponseWriter, *http.Request){cut, serve(helloChat)}}
	m, err := streamOver(t, srv, OpenAIChat, nil)
	if n, _ := srv.posts(); n != 1 || !errors.As(err, &g) || g.Reason != GiveUpNotResumable ||
		!strings.Contains(m, "Hello wor") {
		t.Fatalf("HTTPStream: %d POSTs, %v", n, err)
	}
}

func TestPolicyResetAfterOutputWithIDsResumesWithLastEventID(t *testing.T) {
	events, want := withIDs(t, "../../tests/fixtures/anthropic/thinking_text_citations.sse")
	resume := func(w http.ResponseWriter, r *http.Request) {
		from, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
		serve(strings.Join(events[from:], ""))(w, r)
	}
	newSrv := func() *misbehaving {
		return &misbehaving{steps: []func(http.ResponseWriter, *http.Request){cutAfter(strings.Join(events[:5], "")), resume}}
	}
	srv := newSrv()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	turn := RunTurnHTTP(context.Background(), Anthropic, nil, &TurnOptions{NoEvents: true, Policy: fastPolicy(),
		NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{}`))
		}})
	res, err := turn.Wait()
	n, ids := srv.posts()
	if err != nil || n != 2 || ids[0] != "" || ids[1] != "5" || !jsonEqual(t, res.Message, want) {
		t.Fatalf("%d POSTs, Last-Event-IDs %q, %v", n, ids, err)
	}
	if a := res.Timings.Attempts; len(a) != 2 || a[0].Outcome != "transport_error" || a[1].Outcome != "completed" {
		t.Fatalf("attempts %+v", a)
	}

	srv = newSrv()
	m, err := streamOver(t, srv, Anthropic, nil)
	n, ids = srv.posts()
	if err != nil || n != 2 || ids[1] != "5" || !jsonEqual(t, []byte(m), want) {
		t.Fatalf("HTTPStream: %d POSTs, Last-Event-IDs %q, %v", n, ids, err)
	}
}

func TestPolicyKeepAlivesOnlyStallAtTheFirstContentTimeout(t *testing.T) {
	stall := func(p *ReconnectPolicy) {
		p.FirstContentTimeout = 200 * time.Millisecond
		p.MaxRetries = 0
	}
	srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){pingForever}}
	began := time.Now()
	res, err, _ := turnOver(t, srv, nil, func(o *TurnOptions) { stall(o.Policy) })
	took := time.Since(began)
	var g *GiveUpError
	var tf *TurnFailure
	if n, _ := srv.posts(); n != 1 || !errors.As(err, &g) || g.LastEnd != EndIdleTimeout || g.Stall != StallFirstContent ||
		!errors.As(err, &tf) || tf.Kind != "idle_timeout" || tf.Stall != StallFirstContent ||
		tf.After != 200*time.Millisecond || !strings.Contains(err.Error(), "no content for 200 ms") {
		t.Fatalf("%d POSTs, %v", n, err)
	}
	if res.Failure == nil || res.Failure.Stall != StallFirstContent || res.OutputStarted || took < 200*time.Millisecond ||
		took > 5*time.Second {
		t.Fatalf("%+v after %v", res.Failure, took)
	}

	srv = &misbehaving{steps: []func(http.ResponseWriter, *http.Request){pingForever}}
	_, err = streamOver(t, srv, OpenAIChat, stall)
	if n, _ := srv.posts(); n != 1 || !errors.As(err, &g) || g.LastEnd != EndIdleTimeout || g.Stall != StallFirstContent ||
		!strings.Contains(err.Error(), "no content for 200 ms before the first") {
		t.Fatalf("HTTPStream: %d POSTs, %v", n, err)
	}

	// RunTurn reads one body: its stall is found through Tick too, and the
	// stalled body is closed.
	pr, pw := net.Pipe()
	go func() {
		for {
			if _, err := pw.Write([]byte(": ping\n\n")); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	pol := fastPolicy()
	stall(pol)
	turn := RunTurn(context.Background(), pr, OpenAIChat, nil, &TurnOptions{NoEvents: true, Policy: pol})
	res, err = turn.Wait()
	pw.Close()
	if !errors.As(err, &tf) || tf.Kind != "idle_timeout" || tf.Stall != StallFirstContent || res.Failure == nil {
		t.Fatalf("RunTurn: %v", err)
	}
}

func TestPolicyChatWithoutDoneAfterFinishReasonIsComplete(t *testing.T) {
	body := chat(chatText("Hello"), chatText(" world"), chatFinish("stop"))
	srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){serve(body)}}
	res, err, evs := turnOver(t, srv, nil, nil)
	if n, _ := srv.posts(); err != nil || n != 1 || res.Failure != nil || res.GaveUp != nil || res.StopReason != "stop" {
		t.Fatalf("%d POSTs, %v, %+v", n, err, res)
	}
	warned := false
	for _, e := range evs {
		warned = warned || e.Stream != nil && e.Stream.Kind == KindWarning && strings.Contains(string(e.Stream.JSON), "terminal_missing")
	}
	if !warned {
		t.Fatal("no terminal_missing warning")
	}
	srv = &misbehaving{steps: []func(http.ResponseWriter, *http.Request){serve(body)}}
	m, err := streamOver(t, srv, OpenAIChat, nil)
	if n, _ := srv.posts(); err != nil || n != 1 || !strings.Contains(m, "Hello world") {
		t.Fatalf("HTTPStream: %d POSTs, %v", n, err)
	}
}

func TestPolicyLengthStopSkipsATurnEndTool(t *testing.T) {
	var writes atomic.Int32
	tools := map[string]Tool{
		// Side effects: only after a normal or tool-use stop.
		"write_file": {Start: ToolStartTurnEnd, Fn: func(ctx context.Context, c ToolCall) (string, error) {
			writes.Add(1)
			return "written", nil
		}},
		// Read-only, started as soon as ready: still running at the stop.
		"slow_read": {Start: ToolStartReady, Fn: func(ctx context.Context, c ToolCall) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}},
	}
	body := chat(chatToolCall(0, "call_r", "slow_read", `{"path":"a"}`), chatToolCall(1, "call_w", "write_file", `{"path":"b"}`),
		chatFinish("length")) + chatDone
	srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){serve(body)}}
	res, err, evs := turnOver(t, srv, tools, func(o *TurnOptions) { o.CancelRunningOnBadStop = true })
	if n, _ := srv.posts(); err != nil || n != 1 || res.StopReason != "length" || len(res.Results) != 2 {
		t.Fatalf("%d POSTs, %v, %+v", n, err, res)
	}
	r, w := res.Results[0], res.Results[1]
	if writes.Load() != 0 || w.Kind != ToolSkipped || !w.IsError || !strings.HasPrefix(w.Output, "Not run: the answer stopped with length") {
		t.Fatalf("write_file ran %d times: %+v", writes.Load(), w)
	}
	if r.Kind != ToolCancelled || r.Output != "Cancelled by the host" {
		t.Fatalf("slow_read %+v", r)
	}
	var after *ToolExecutionEvent
	for _, e := range evs {
		if e.Tool != nil && e.Tool.Name == ToolEventRunningAfterStop {
			after = e.Tool
		}
	}
	if after == nil || after.CallID != "call_r" || after.StopReason != "length" || after.ToolName != "slow_read" {
		t.Fatalf("tool_running_after_stop %+v", after)
	}
}

func TestPolicyApprovals(t *testing.T) {
	var deployed, deleted atomic.Int32
	var asked sync.Map
	approveProd := func(ctx context.Context, c ToolCall) (bool, string) {
		asked.Store(c.ID, c.Arguments)
		return string(c.Input) == `{"env":"prod"}`, "too risky"
	}
	tools := map[string]Tool{
		"deploy": {NeedsApproval: true, Approve: approveProd, Fn: func(ctx context.Context, c ToolCall) (string, error) {
			deployed.Add(1)
			return "deployed", nil
		}},
		"delete": {NeedsApproval: true, Approve: func(ctx context.Context, c ToolCall) (bool, string) { return false, "too risky" },
			Fn: func(ctx context.Context, c ToolCall) (string, error) {
				deleted.Add(1)
				return "deleted", nil
			}},
		// No Approve: the host answers (Turn.Approve / Deny), or the timeout.
		"ask":  {NeedsApproval: true, Fn: func(ctx context.Context, c ToolCall) (string, error) { return "asked", nil }},
		"wait": {NeedsApproval: true, Fn: func(ctx context.Context, c ToolCall) (string, error) { return "waited", nil }},
	}
	body := chat(chatToolCall(0, "call_1", "deploy", `{"env":"prod"}`), chatToolCall(1, "call_2", "delete", `{"all":true}`),
		chatToolCall(2, "call_3", "ask", `{}`), chatToolCall(3, "call_4", "wait", `{}`), chatFinish("tool_calls")) + chatDone
	srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){serve(body)}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	turn := RunTurnHTTP(context.Background(), OpenAIChat, tools, &TurnOptions{Policy: fastPolicy(),
		ApprovalTimeout: 100 * time.Millisecond,
		NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{}`))
		}})
	var requested []string
	for e := range turn.Events() {
		if e.Tool != nil && e.Tool.Name == ToolEventApprovalRequested {
			requested = append(requested, e.Tool.ApprovalID)
			if e.Tool.ToolName == "ask" {
				if e.Tool.Arguments != `{}` {
					t.Errorf("arguments %q", e.Tool.Arguments)
				}
				turn.Approve(e.Tool.ApprovalID)
			}
		}
	}
	res, err := turn.Wait()
	if err != nil || len(res.Results) != 4 || len(requested) != 4 {
		t.Fatalf("%v, %d results, approvals asked %q", err, len(res.Results), requested)
	}
	byID := map[string]ToolResult{}
	for _, r := range res.Results {
		byID[r.CallID] = r
	}
	if r := byID["call_1"]; r.Kind != ToolRan || r.Output != "deployed" || deployed.Load() != 1 {
		t.Fatalf("deploy %+v", r)
	}
	if args, _ := asked.Load("call_1"); args != `{"env":"prod"}` {
		t.Fatalf("Approve got %v", args)
	}
	if r := byID["call_2"]; r.Kind != ToolDenied || !r.IsError || r.Output != "Denied by the user: too risky" || deleted.Load() != 0 {
		t.Fatalf("delete %+v", r)
	}
	if r := byID["call_3"]; r.Kind != ToolRan || r.Output != "asked" {
		t.Fatalf("ask %+v", r)
	}
	if r := byID["call_4"]; r.Kind != ToolDenied || !strings.Contains(r.Output, "no approval within 100 ms") {
		t.Fatalf("wait %+v", r)
	}
}

func TestPolicyAgentTurnByHand(t *testing.T) {
	// Approve, Deny and CancelTool on the sans-IO turn, and the errors of
	// an approval id no call waits for.
	turn, err := NewAgentTurn(&AgentTurnConfig{Stream: &StreamOptions{NoEvents: false}})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	turn.AddTool("a", ToolOptions{NeedsApproval: true})
	turn.AddTool("b", ToolOptions{NeedsApproval: true})
	if err := turn.RequestSent(0); err != nil {
		t.Fatal(err)
	}
	turn.Connected(5)
	evs, _ := turn.Feed([]byte(chat(chatToolCall(0, "call_a", "a", `{}`), chatToolCall(1, "call_b", "b", `{}`),
		chatFinish("tool_calls"))+chatDone), 10)
	var ids []string
	for _, e := range evs {
		if e.Tool != nil && e.Tool.Name == ToolEventApprovalRequested {
			ids = append(ids, e.Tool.ApprovalID)
		}
	}
	if len(ids) != 2 || ids[0] != "approval_call_a" {
		t.Fatalf("approvals %q", ids)
	}
	if _, ok, _ := turn.PollAction(); ok {
		t.Fatal("a call started before its approval")
	}
	turn.Approve(ids[0])
	a, ok, _ := turn.PollAction()
	if !ok || a.Kind != ActionStartTool || a.Call.ID != "call_a" {
		t.Fatalf("%+v", a)
	}
	if _, err := turn.Approve(ids[0]); !errors.Is(err, ErrNotAwaitingApproval) {
		t.Fatalf("answered twice: %v", err)
	}
	turn.Deny(ids[1], "")
	if _, err := turn.CancelTool("nope"); !errors.Is(err, ErrUnknownCallID) {
		t.Fatalf("cancel unknown: %v", err)
	}
	turn.CancelTool("call_a")
	res, _ := turn.Outcome()
	if !turn.IsFinished() || res.Results[0].Kind != ToolCancelled || res.Results[1].Output != "Denied by the user" ||
		res.Timings.StartedMS == nil || *res.Timings.StartedMS != 0 {
		t.Fatalf("%+v %+v", res.Results, res.Timings)
	}

	// A refusal reported by hand: 503 with Retry-After is retried after it.
	re, _ := NewAgentTurn(nil)
	defer re.Close()
	re.HTTPStatus(503, http.Header{"Retry-After": {"2"}}, 0)
	if a, ok, _ := re.PollAction(); !ok || a.Kind != ActionReconnect || a.DelayMS != 2000 || a.Replay != ReplayRetry {
		t.Fatalf("%+v", a)
	}
	re.HTTPStatus(404, nil, 2000)
	var tf *TurnFailure
	if err := re.Failure(); !errors.As(err, &tf) || tf.Kind != "http" || tf.Status != 404 || !errors.Is(err, ErrProviderError) {
		t.Fatalf("%v", err)
	}
}

func TestPolicyRetryHintsAndStalls(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	h, err := RetryHintsFromHeaders(http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:05 GMT"},
		"X-Should-Retry": {"false"}}, now)
	if err != nil || h.RetryAfter == nil || *h.RetryAfter != 5*time.Second || h.ShouldRetry == nil || *h.ShouldRetry {
		t.Fatalf("%+v %v", h, err)
	}
	// retry-after-ms wins over Retry-After; fractions are cut.
	h, _ = RetryHintsFromHeaders(http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"12.5"}}, now)
	if h.RetryAfter == nil || *h.RetryAfter != 12*time.Millisecond || h.ShouldRetry != nil {
		t.Fatalf("%+v", h)
	}
	if h, _ := RetryHintsFromHeaders(nil, now); h.RetryAfter != nil || h.ShouldRetry != nil {
		t.Fatalf("%+v", h)
	}

	p := DefaultReconnectPolicy()
	if p.Jitter != 0.2 || p.FirstContentTimeout != 5*time.Minute || p.ContentTimeout != 2*time.Minute ||
		p.MaxRetryAfter != time.Minute || p.RestartAfterOutput {
		t.Fatalf("defaults %+v", p)
	}
	p.FirstContentTimeout, p.ContentTimeout = 100*time.Millisecond, 50*time.Millisecond
	rc, _ := NewReconnector(p)
	defer rc.Close()
	rc.SeedJitter(42)
	rc.OnConnected(0)
	if _, ok := rc.Stall(99); ok {
		t.Fatal("stalled early")
	}
	if k, ok := rc.Stall(100); !ok || k != StallFirstContent || rc.OutputStarted() || !rc.ReplaySafe() {
		t.Fatalf("%v %v", k, ok)
	}
	rc.OnContent(60)
	if d, ok := rc.IdleDeadline(); !ok || d != 110 || !rc.OutputStarted() {
		t.Fatalf("deadline %d %v", d, ok)
	}
	if rc.ReplaySafe() {
		t.Fatal("output without a cursor: replaying the request is not safe")
	}
	if k, ok := rc.Stall(110); !ok || k != StallContent {
		t.Fatalf("%v %v", k, ok)
	}
	// After output without a cursor: not resumable, nothing sent again.
	d, _ := rc.OnEnd(StreamEnd{Kind: EndIdleTimeout})
	if d.Kind != DecisionGiveUp || d.GiveUpReason != GiveUpNotResumable || d.LastEnd != EndIdleTimeout {
		t.Fatalf("%+v", d)
	}
	// A refusal: retried with the server's wait, a retry (no output).
	rc2, _ := NewReconnector(DefaultReconnectPolicy())
	defer rc2.Close()
	wait := 250 * time.Millisecond
	d, _ = rc2.OnEnd(StreamEnd{Kind: EndHTTPStatus, Status: 429, Hints: RetryHints{RetryAfter: &wait}})
	if d.Kind != DecisionReconnect || d.Delay != wait || d.Replay != ReplayRetry {
		t.Fatalf("%+v", d)
	}
	no := false
	d, _ = rc2.OnEnd(StreamEnd{Kind: EndHTTPStatus, Status: 503, Hints: RetryHints{ShouldRetry: &no}})
	if d.Kind != DecisionGiveUp || d.GiveUpReason != GiveUpNotRetryable || d.Status != 503 || d.LastEnd != EndHTTPStatus {
		t.Fatalf("%+v", d)
	}

	// Content as the core decides it: a ping is not.
	s, _ := NewStream(OpenAIChat, nil)
	defer s.Close()
	evs, _ := s.Feed([]byte(": ping\n\n" + chat(chatText("hi"))))
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	for _, e := range evs {
		if want := e.Kind == KindPartStart || e.Kind == KindTextDelta; e.IsContent() != want {
			t.Fatalf("%s: IsContent %v", e.Name, e.IsContent())
		}
	}
}

func TestPolicyRunTurnHTTPAbortStopsTheRequestAndTheRetryWait(t *testing.T) {
	for _, step := range []func(http.ResponseWriter, *http.Request){pingForever, refuse(503, "retry-after", "30")} {
		srv := &misbehaving{steps: []func(http.ResponseWriter, *http.Request){step}}
		ts := httptest.NewServer(srv)
		ctx, cancel := context.WithCancel(context.Background())
		turn := RunTurnHTTP(ctx, OpenAIChat, nil, &TurnOptions{NoEvents: true, Policy: fastPolicy(),
			NewRequest: func(ctx context.Context, c ResumeCursor) (*http.Request, error) {
				return http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, nil)
			}})
		time.AfterFunc(100*time.Millisecond, cancel)
		began := time.Now()
		res, err := turn.Wait()
		n, _ := srv.posts()
		ts.Close()
		if err != nil || !res.Aborted || n != 1 || time.Since(began) > 5*time.Second {
			t.Fatalf("%v aborted %v, %d POSTs after %v", err, res.Aborted, n, time.Since(began))
		}
	}
}
