package ssefold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// HTTPStream runs a streaming request over net/http and reconnects per the
// core's policy (Reconnector): backoff, the server's retry:, Last-Event-ID,
// restart vs resume, context cancellation = abort.
//
// Each connection's body is fed to one Stream in 64 KiB reads; before a
// new connection, Stream.Reconnect drops the old connection's partial event
// and the stream decides from the first new event between a resume (the
// turn continues) and a restart (a "turn_reset" event, then the turn is
// rebuilt). The cursor (Last-Event-ID, or starting_after for OpenAI
// Responses) comes from the stream and the Reconnector; NewRequest builds
// each request from it (Run sets the Last-Event-ID header itself).
//
// A body that ends (EOF) before its terminal event is an early end,
// reconnected, unless the answer is whole without it
// (Stream.IsCompleteAtEnd: OpenAI Chat without [DONE] once every choice has
// its finish_reason, Gemini after every finishReason): that is complete,
// and Run's Finish ends the turn (for Chat, after a "terminal_missing"
// warning).
//
// A response whose status is not 2xx is an HTTP-status end with its
// headers' retry hints (RetryHintsFromHeaders): a transient status (408,
// 409, 429, 5xx, 529) is sent again after its Retry-After / retry-after-ms
// (capped at Policy.MaxRetryAfter) or the backoff, unless x-should-retry:
// false; otherwise, or once the retries are used, Run returns its
// *HTTPStatusError.
//
// Once content reached OnEvent (StreamEvent.IsContent), a connection that
// ends early is resumed with the cursor (Last-Event-ID, starting_after);
// without one the answer ends incomplete, never sent twice: a *GiveUpError
// with Reason GiveUpNotResumable and the message folded so far (unless
// Policy.RestartAfterOutput).
//
// With Policy.IdleTimeout, a connection that gets no bytes for that long
// (waiting for the response headers, or between two reads of the body: a
// stalled or slow-drip server) is closed and counts as an idle end; so is a
// connection that delivers no content (keep-alives, pings and comments
// only) for Policy.FirstContentTimeout before the answer's first content or
// Policy.ContentTimeout between contents (on by default). Run reconnects or
// gives up per the policy (a *GiveUpError with LastEnd EndIdleTimeout and
// the Stall that fired), as the Python helpers do.
type HTTPStream struct {
	// Client sends the requests (http.DefaultClient when nil).
	Client *http.Client
	// Provider is the dialect of the response body.
	Provider Provider
	// Policy is the reconnection policy (DefaultReconnectPolicy when nil).
	Policy *ReconnectPolicy
	// OnEvent receives each normalized event; its error aborts the run.
	OnEvent func(StreamEvent) error
	// NewRequest builds the request of each connection with ctx (which the
	// idle timeout cancels); cursor says what to send so the server can
	// resume (Last-Event-ID is set by Run).
	NewRequest func(ctx context.Context, cursor ResumeCursor) (*http.Request, error)
}

// HTTPStatusError is a response whose status is not 2xx: a provider error
// (errors.Is(err, ErrProviderError)), retryable for 408, 429, 529 and 5xx
// or a transient error type (errors.Is(err, ErrRetryableProviderError)).
// Run (and RunTurnHTTP) return the last refused response as this error once
// the core decided not to send the request again (a status it does not
// retry, x-should-retry: false, or the retries used up).
type HTTPStatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Body is the start of the response body (at most 4 KiB).
	Body string
	// ErrorType is the provider's error type from the body
	// ({"error": {"type": ...}} or "code"); "http_error" when it has none.
	ErrorType string
	// Message is the provider's error message from the body (the body
	// itself when it is not a JSON error).
	Message string
}

// Retryable says whether sending the request again may work.
func (e *HTTPStatusError) Retryable() bool {
	switch {
	case e.StatusCode == 408, e.StatusCode == 429, e.StatusCode >= 500 && e.StatusCode <= 599:
		return true
	}
	return IsRetryableErrorType(e.ErrorType)
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("ssefold: HTTP %d: %s: %s", e.StatusCode, e.ErrorType, e.Message)
}

// Is matches ErrProviderError, and ErrRetryableProviderError when Retryable.
func (e *HTTPStatusError) Is(target error) bool {
	return target == ErrProviderError || target == ErrRetryableProviderError && e.Retryable()
}

// newHTTPStatusError reads the provider's error type and message from body.
func newHTTPStatusError(status int, body []byte) *HTTPStatusError {
	e := &HTTPStatusError{StatusCode: status, Body: string(body), ErrorType: "http_error", Message: string(body)}
	var payload struct {
		Error json.RawMessage `json:"error"`
	}
	var fields struct {
		Type    *string `json:"type"`
		Code    *string `json:"code"`
		Message *string `json:"message"`
	}
	if json.Unmarshal(body, &payload) != nil || json.Unmarshal(payload.Error, &fields) != nil {
		return e
	}
	switch {
	case fields.Type != nil && *fields.Type != "":
		e.ErrorType = *fields.Type
	case fields.Code != nil && *fields.Code != "":
		e.ErrorType = *fields.Code
	}
	if fields.Message != nil {
		e.Message = *fields.Message
	}
	return e
}

// GiveUpError is returned by Run (and RunTurnHTTP) when no reconnection
// follows: the reconnections are used up, or output was delivered and the
// answer cannot be resumed (Reason). The answer is incomplete
// (errors.Is(err, ErrIncompleteStream)). Its text says how the last
// connection ended ("could not connect: ..." when none ever did) and why
// it was not resumed.
type GiveUpError struct {
	// Attempts is the number of reconnections made.
	Attempts uint32
	// LastEnd is how the last connection ended.
	LastEnd EndKind
	// Reason says why no reconnection followed (GiveUpNotResumable: output
	// was delivered and the stream gave no resume cursor; nothing was sent
	// again).
	Reason GiveUpReason
	// Stall is the timeout that fired (LastEnd EndIdleTimeout).
	Stall StallKind
	// Message is the last transport error, or how the connection went idle.
	Message string
	// Connected says whether any connection got a response.
	Connected bool
	// Err is the stream's own incomplete error (with what it expected), or
	// the turn's failure (RunTurnHTTP), or nil.
	Err error
}

func (e *GiveUpError) Error() string {
	var what string
	switch {
	case e.LastEnd == EndTransportError && !e.Connected:
		what = "could not connect: " + e.Message
	case e.LastEnd == EndTransportError:
		what = "the connection failed: " + e.Message
	case e.LastEnd == EndIdleTimeout && e.Message != "":
		what = "the connection went idle: " + e.Message
	case e.LastEnd == EndIdleTimeout:
		what = "the connection went idle"
	case e.Err != nil:
		what = strings.TrimPrefix(e.Err.Error(), "ssefold: ")
	default:
		what = "the stream ended before its terminal event"
	}
	switch e.Reason {
	case GiveUpNotResumable:
		return fmt.Sprintf("ssefold: %s; not resumed (not_resumable: output was delivered and the stream gave no "+
			"resume cursor); gave up after %d reconnection(s)", what, e.Attempts)
	case GiveUpNotRetryable:
		return fmt.Sprintf("ssefold: %s; not retried (not_retryable); gave up after %d reconnection(s)", what, e.Attempts)
	}
	return fmt.Sprintf("ssefold: %s; gave up after %d reconnection(s)", what, e.Attempts)
}

// Is matches ErrIncompleteStream and ErrIncomplete.
func (e *GiveUpError) Is(target error) bool {
	return target == ErrIncompleteStream || target == ErrIncomplete
}

// Unwrap returns the stream's incomplete error, if any.
func (e *GiveUpError) Unwrap() error { return e.Err }

type runState struct {
	stream      *Stream
	rc          *Reconnector
	policy      ReconnectPolicy
	connections int
	connected   bool
	// idle is the policy's idle timeout (0: none); idleMessage and stall
	// say how the last idle connection went idle.
	idle        time.Duration
	idleMessage string
	stall       StallKind
	// refused is the last response whose status was not 2xx.
	refused *HTTPStatusError
}

// watched says whether the policy has a timeout the idle watch enforces.
func (p ReconnectPolicy) watched() bool {
	return p.IdleTimeout > 0 || p.FirstContentTimeout > 0 || p.ContentTimeout > 0
}

// idleWatch closes a connection that gets no bytes for the idle timeout:
// when its timer fires it cancels the connection's context (a request
// waiting for headers, or a body read, returns) and closes the body (for a
// request whose NewRequest did not use the context). Only the timer's
// goroutine and the connection's share it, through its mutex.
type idleWatch struct {
	mu     sync.Mutex
	timer  *time.Timer
	cancel context.CancelFunc
	body   io.Closer
	fired  bool
}

// newIdleWatch makes a watch (nil when !enabled: no timeout), armed for d
// when d > 0 (until the response headers come the core has no deadline).
func newIdleWatch(enabled bool, d time.Duration, cancel context.CancelFunc) *idleWatch {
	if !enabled {
		return nil
	}
	w := &idleWatch{cancel: cancel}
	if d <= 0 {
		// Disarmed until rearm (an AfterFunc of 0 could fire before Stop).
		w.timer = time.AfterFunc(time.Duration(1<<63-1), w.fire)
		w.timer.Stop()
		return w
	}
	w.timer = time.AfterFunc(d, w.fire)
	return w
}

func (w *idleWatch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fired = true
	w.cancel()
	if w.body != nil {
		w.body.Close()
	}
}

// setBody gives the watch the response body to close when it fires.
func (w *idleWatch) setBody(b io.Closer) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.body = b
	if w.fired {
		b.Close()
	}
}

// rearm moves the deadline to d from now (bytes came).
func (w *idleWatch) rearm(d time.Duration) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.fired {
		w.timer.Reset(max(d, 0))
	}
}

// stop disarms the watch; it says whether the watch had fired.
func (w *idleWatch) stop() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer.Stop()
	return w.fired
}

// idleEnd is the end of a connection the watch closed: kind is the
// timeout that fired.
func (st *runState) idleEnd(kind StallKind, waiting string) StreamEnd {
	st.stall = kind
	ms := st.policy.timeout(kind).Milliseconds()
	switch kind {
	case StallFirstContent:
		st.idleMessage = fmt.Sprintf("no content for %d ms before the first (keep-alives only)", ms)
	case StallContent:
		st.idleMessage = fmt.Sprintf("no content for %d ms (keep-alives only)", ms)
	default:
		st.idleMessage = fmt.Sprintf("no data for %d ms %s", ms, waiting)
	}
	return StreamEnd{Kind: EndIdleTimeout}
}

func (st *runState) close() {
	st.stream.Close()
	st.rc.Close()
}

// Run streams until the answer is complete and returns the folded message.
// The message so far is returned with an error too.
func (h *HTTPStream) Run(ctx context.Context) (json.RawMessage, error) {
	m, _, err := h.run(ctx)
	return m, err
}

func (h *HTTPStream) run(ctx context.Context) (json.RawMessage, int, error) {
	policy := DefaultReconnectPolicy()
	if h.Policy != nil {
		policy = *h.Policy
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	st := &runState{idle: policy.IdleTimeout, policy: policy}
	var err error
	if st.rc, err = NewReconnector(policy); err != nil {
		return nil, 0, err
	}
	st.rc.SeedJitter(randomSeed())
	st.stream, _ = NewStream(h.Provider, &StreamOptions{EventJSON: true})
	defer st.close()
	start := time.Now()
	now := func() uint64 { return uint64(time.Since(start) / time.Millisecond) }
	cursor := ResumeCursor{}
	for {
		end, ferr := h.connect(ctx, client, st, cursor, now)
		if ferr != nil {
			m, _ := st.stream.Message()
			return m, st.connections, ferr
		}
		d, err := st.rc.OnEnd(end)
		if err != nil {
			return nil, st.connections, err
		}
		m, _ := st.stream.Message()
		switch d.Kind {
		case DecisionDone:
			if _, terminated := st.stream.Status(); !terminated {
				// Complete at the end of the body without a terminal event:
				// Finish ends the turn (a terminal_missing warning for Chat).
				evs, ferr := st.stream.Finish()
				if err := h.emit(st, evs); err != nil {
					return m, st.connections, err
				}
				m, _ = st.stream.Message()
				if ferr != nil {
					return m, st.connections, ferr
				}
			}
			return m, st.connections, nil
		case DecisionFail:
			code := ResultStreamProviderError
			if d.Retryable {
				code = ResultStreamRetryableProviderError
			}
			return m, st.connections, &Error{Code: code, Message: "provider error " + d.ErrorType + ": " + d.Message}
		case DecisionGiveUp:
			if d.LastEnd == EndHTTPStatus && st.refused != nil {
				// Refused and not sent again: the response's own error.
				return m, st.connections, st.refused
			}
			evs, ferr := st.stream.Finish() // commit open parts as incomplete
			_ = h.emit(st, evs)
			m, _ = st.stream.Message()
			_, att := st.rc.State()
			msg := d.Message
			if d.LastEnd == EndIdleTimeout {
				msg = st.idleMessage
			}
			return m, st.connections, &GiveUpError{Attempts: att, LastEnd: d.LastEnd, Reason: d.GiveUpReason,
				Stall: st.stall, Message: msg, Connected: st.connected, Err: ferr}
		case DecisionStop:
			evs, _ := st.stream.Abort() // one turn_end "aborted"
			_ = h.emit(st, evs)
			m, _ = st.stream.Message()
			return m, st.connections, ctx.Err()
		}
		delay := d.Delay
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			st.rc.OnEnd(StreamEnd{Kind: EndAborted})
			evs, _ := st.stream.Abort()
			_ = h.emit(st, evs)
			m, _ := st.stream.Message()
			return m, st.connections, ctx.Err()
		case <-t.C:
		}
		cursor = d.Cursor
	}
}

// emit delivers events to the caller.
func (h *HTTPStream) emit(st *runState, evs []StreamEvent) error {
	for _, e := range evs {
		if h.OnEvent != nil {
			if err := h.OnEvent(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// connect runs one connection; a non-nil error ends Run at once.
func (h *HTTPStream) connect(ctx context.Context, client *http.Client, st *runState, cursor ResumeCursor, now func() uint64) (StreamEnd, error) {
	// The connection's own context: the idle watch cancels it, not Run's.
	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := h.NewRequest(connCtx, cursor)
	if err != nil {
		return StreamEnd{}, err
	}
	// Until the response headers come the core has no deadline (it is not
	// connected): the policy's idle timeout from the request on.
	watch := newIdleWatch(st.policy.watched(), st.idle, cancel)
	defer watch.stop()
	if cursor.Kind == CursorLastEventID {
		req.Header.Set("Last-Event-ID", cursor.LastEventID)
	}
	req.Header.Set("Accept", "text/event-stream")
	st.connections++
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return StreamEnd{Kind: EndAborted}, nil
		}
		if watch.stop() {
			return st.idleEnd(StallIdle, "waiting for the response"), nil
		}
		return StreamEnd{Kind: EndTransportError, Message: err.Error()}, nil
	}
	defer resp.Body.Close()
	watch.setBody(resp.Body)
	if resp.StatusCode/100 != 2 {
		// Refused: the core decides from the status and the headers' hints
		// whether to send the request again.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		st.refused = newHTTPStatusError(resp.StatusCode, b)
		hints, err := RetryHintsFromHeaders(resp.Header, time.Now())
		if err != nil {
			return StreamEnd{}, err
		}
		return StreamEnd{Kind: EndHTTPStatus, Status: resp.StatusCode, Hints: hints}, nil
	}
	st.connected = true
	st.rc.OnConnected(now())
	h.rearm(watch, st, now)
	if st.connections > 1 {
		// The stream drops the old connection's partial event and decides
		// from the first new event between resume and restart (TURN_RESET).
		if err := st.stream.Reconnect(); err != nil {
			return StreamEnd{}, err
		}
	}
	buf := make([]byte, ChunkSize)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			st.rc.OnActivity(now())
			out, serr := st.stream.Feed(buf[:n])
			for i := range out {
				if out[i].IsContent() {
					st.rc.OnContent(now())
					break
				}
			}
			h.rearm(watch, st, now)
			// After every chunk: an event that shows nothing (a ping) still
			// moves the SSE cursor, as the agent turn has it.
			h.noteCursor(st)
			if err := h.emit(st, out); err != nil {
				return StreamEnd{}, err
			}
			if serr != nil {
				return h.streamFailed(st, serr)
			}
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return StreamEnd{Kind: EndAborted}, nil
			}
			if _, done := st.stream.Status(); done {
				return StreamEnd{Kind: EndCompleted}, nil
			}
			if watch.stop() {
				kind, _ := st.rc.Stall(now())
				return st.idleEnd(kind, "from the server"), nil
			}
			if rerr == io.EOF {
				if st.stream.IsCompleteAtEnd() {
					// The answer is whole without its terminal event (OpenAI
					// Chat without [DONE], Gemini after every finishReason):
					// complete; run's Finish ends the turn.
					return StreamEnd{Kind: EndCompleted}, nil
				}
				// An unterminated final event is discarded (per the spec);
				// Finish is only called once no reconnection follows.
				return StreamEnd{Kind: EndEndedEarly}, nil
			}
			return StreamEnd{Kind: EndTransportError, Message: rerr.Error()}, nil
		}
	}
}

// noteCursor tells the reconnector the stream's cursor and retry time.
func (h *HTTPStream) noteCursor(st *runState) {
	c, _ := st.stream.ResumeCursor()
	var seq, retry *uint64
	if c.Kind == CursorStartingAfter {
		seq = &c.StartingAfter
	}
	if ms, ok := st.stream.ReconnectionTime(); ok {
		retry = &ms
	}
	st.rc.OnEvent(c.LastEventID, c.Kind == CursorLastEventID, seq, retry)
}

// rearm moves the idle deadline to the core's: the earliest of the last
// activity plus the idle timeout and the content deadline in force.
func (h *HTTPStream) rearm(w *idleWatch, st *runState, now func() uint64) {
	if w == nil {
		return
	}
	if deadline, ok := st.rc.IdleDeadline(); ok {
		w.rearm(time.Duration(int64(deadline)-int64(now())) * time.Millisecond)
	}
}

// streamFailed maps a Stream error to a connection end (provider errors go
// to the reconnector, which decides Fail) or ends the run.
func (h *HTTPStream) streamFailed(st *runState, err error) (StreamEnd, error) {
	if !errors.Is(err, ErrProviderError) {
		return StreamEnd{}, err
	}
	var e *Error
	errors.As(err, &e)
	typ, msg := parseProviderError(e.Message)
	return StreamEnd{Kind: EndProviderError, ErrorType: typ, Message: msg}, nil
}

// parseProviderError splits "provider error <type>: <message>".
func parseProviderError(s string) (typ, msg string) {
	const p = "provider error "
	if len(s) > len(p) && s[:len(p)] == p {
		s = s[len(p):]
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i] == ':' && s[i+1] == ' ' {
			return s[:i], s[i+2:]
		}
	}
	return "", s
}
