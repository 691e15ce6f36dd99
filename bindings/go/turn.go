package ssefold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// Tool is a tool function and how it is scheduled. Fn returns the output
// text, or an error whose text is sent as an error result. Fn must return
// soon after its ctx is cancelled (sibling failure, abort).
type Tool struct {
	Fn func(ctx context.Context, call ToolCall) (string, error)
	// Exclusive: not safe beside other tools; it runs alone, later calls wait.
	Exclusive bool
	// AbortSiblingsOnError: its error cancels the running siblings and the
	// calls still to run in this turn.
	AbortSiblingsOnError bool
	// Start says when a ready call may start (ToolStartAuto: at once, or
	// once the answer ended normally for an Exclusive tool; ToolStartTurnEnd
	// for a tool with side effects: after a length or content_filter stop
	// it never runs and gets a ToolSkipped result).
	Start ToolStart
	// NeedsApproval: each call waits for an approval first: Approve's when
	// set, else the host's Turn.Approve / Turn.Deny after the call's
	// tool_approval_requested event. A denied call gets a ToolDenied result.
	NeedsApproval bool
	// Approve decides a call of a NeedsApproval tool, on a goroutine of its
	// own: true runs it, false denies it with reason. It must return soon
	// after ctx is cancelled (the turn ended, or TurnOptions.ApprovalTimeout
	// denied the call first).
	Approve func(ctx context.Context, call ToolCall) (ok bool, reason string)
}

// ToolCall is one tool call, provider-neutral: on a stream event's
// ToolCall (part_start: what is known so far; part_end: the whole call),
// and as a tool function gets it.
type ToolCall struct {
	// ID is the provider's id of the call, unique in the turn, or, when the
	// provider sent none or repeated an earlier call's, a synthesized one
	// (ssefold_call_<part>, IDSynthesized). Empty on a part_start that did
	// not carry it.
	ID            string
	IDSynthesized bool
	// Name is the tool's name (empty when the provider sent none, or on a
	// part_start that did not carry it).
	Name string
	// Input is Arguments as raw JSON for a ToolInputJSON call (nil for a
	// ToolInputText call and on a part_start).
	Input json.RawMessage
	// Arguments is the input as text: JSON for ToolInputJSON ("{}" when the
	// provider sent no arguments), free text for ToolInputText; the raw text
	// received when the part did not end complete. Empty on a part_start.
	Arguments   string
	InputFormat ToolInputFormat
	// ProviderExecuted: the provider runs the call itself (Anthropic server
	// and MCP tools, Responses mcp_call); a host never runs it.
	ProviderExecuted bool
	turn             *Turn
}

// Update reports progress text (a tool_execution_update event). Safe from
// the tool's goroutine.
func (c ToolCall) Update(text string) {
	if c.turn != nil {
		c.turn.post(message{kind: msgUpdate, id: c.ID, text: text})
	}
}

// UnmarshalText reads a wire name ("json", "text").
func (f *ToolInputFormat) UnmarshalText(b []byte) error {
	switch string(b) {
	case "json":
		*f = ToolInputJSON
	case "text":
		*f = ToolInputText
	default:
		return &Error{Code: ResultInvalidArgument, Message: "unknown input format " + string(b)}
	}
	return nil
}

// UnmarshalText reads a wire name ("complete", "invalid_arguments",
// "incomplete").
func (o *PartOutcome) UnmarshalText(b []byte) error {
	for _, v := range []PartOutcome{OutcomeComplete, OutcomeInvalidArguments, OutcomeIncomplete} {
		if v.String() == string(b) {
			*o = v
			return nil
		}
	}
	return &Error{Code: ResultInvalidArgument, Message: "unknown part outcome " + string(b)}
}

// TurnEvent is one event of a turn: a stream event or a tool execution
// event (exactly one is set), in the order they happened.
type TurnEvent struct {
	Stream *StreamEvent
	Tool   *ToolExecutionEvent
}

// TurnCall is one tool call of the answer as the turn kept it.
type TurnCall struct {
	Part          int    `json:"part"`
	ID            string `json:"id"`
	IDSynthesized bool   `json:"id_synthesized"`
	Name          string `json:"name"`
	// ProviderType is the provider's type of the part (tool_use, function,
	// function_call, custom_tool_call, ...).
	ProviderType     string          `json:"provider_type"`
	InputFormat      ToolInputFormat `json:"input_format"`
	ProviderExecuted bool            `json:"provider_executed"`
	// Outcome is how its part ended: only a complete call ran.
	Outcome   PartOutcome `json:"outcome"`
	Arguments string      `json:"arguments"`
}

// NextRequest is what to append to the conversation to continue after the
// turn, in the provider's request shape.
type NextRequest struct {
	// Assistant is the assistant turn as the provider expects it back (one
	// message; the list of input items for OpenAI Responses).
	Assistant json.RawMessage `json:"assistant"`
	// ToolResults are the results shaped for the provider (nil without
	// results).
	ToolResults json.RawMessage `json:"tool_results"`
	// Append is everything to append to the conversation's messages
	// (Responses: input; Gemini: contents), in order.
	Append []json.RawMessage `json:"append"`
}

// TurnFailure is why a turn ended with an error (TurnResult.Failure). As
// an error (AgentTurn.Failure) it stands for a transport failure or an idle
// or stalled connection, and matches ErrIncompleteStream; or for a refused
// response (http), and matches ErrProviderError (and
// ErrRetryableProviderError when Retryable).
type TurnFailure struct {
	// Kind is stream, transport, idle_timeout, http or too_many_calls.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Retryable: sending the request again may succeed.
	Retryable bool `json:"retryable"`
	// Stall and After (idle_timeout): which timeout fired, and its length.
	Stall StallKind     `json:"stall"`
	After time.Duration `json:"-"`
	// Status and RetryAfter (http): the refused response's status and its
	// Retry-After (nil: none).
	Status     int            `json:"status"`
	RetryAfter *time.Duration `json:"-"`
}

func (f *TurnFailure) Error() string { return "ssefold: turn failed (" + f.Kind + "): " + f.Message }

// Is matches ErrIncompleteStream for a transport failure or an idle or
// stalled connection, ErrProviderError (and ErrRetryableProviderError when
// Retryable) for a refused response.
func (f *TurnFailure) Is(target error) bool {
	switch f.Kind {
	case "transport", "idle_timeout":
		return target == ErrIncompleteStream
	case "http":
		return target == ErrProviderError || target == ErrRetryableProviderError && f.Retryable
	}
	return false
}

// UnmarshalJSON reads the failure of the outcome document (after_ms and
// retry_after_ms in milliseconds).
func (f *TurnFailure) UnmarshalJSON(b []byte) error {
	type plain TurnFailure
	var doc struct {
		*plain
		AfterMS      uint64  `json:"after_ms"`
		RetryAfterMS *uint64 `json:"retry_after_ms"`
	}
	doc.plain = (*plain)(f)
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	f.After = msDuration(doc.AfterMS)
	if doc.RetryAfterMS != nil {
		d := msDuration(*doc.RetryAfterMS)
		f.RetryAfter = &d
	}
	return nil
}

// TurnTimings are a turn's timings, on the host's clock (RunTurn's: the
// milliseconds since it began).
type TurnTimings struct {
	// StartedMS is when the first request was sent (or, if the host did not
	// say, its first connection opened); nil before.
	StartedMS *uint64
	// TimeToFirstContent is the time from StartedMS to the first content.
	TimeToFirstContent *time.Duration
	// ContentGaps are the gaps between consecutive inputs that carried
	// content.
	ContentGaps GapStats
	// Duration is the time from StartedMS to the end of the stream.
	Duration *time.Duration
	// OutputTokens and InputTokens are the provider's usage, when it sent
	// any.
	OutputTokens *uint64
	InputTokens  *uint64
	// OutputTokensPerSecond is OutputTokens over the time from the first
	// content to the end of the stream (nil without usage, or when that
	// time is 0).
	OutputTokensPerSecond *float64
	// Attempts holds every attempt (the first request, each
	// reconnection), in order.
	Attempts []Attempt
}

// GapStats are the median, 95th percentile and largest gap between
// contents (the median and p95 within 1/32 above 32 ms, the max exact).
type GapStats struct {
	Count  uint64
	Median time.Duration
	P95    time.Duration
	Max    time.Duration
}

// Attempt is one request sent (or one reconnection) and how it ended.
type Attempt struct {
	// StartedMS is when its request was sent or its connection opened.
	StartedMS uint64
	// EndedMS is when it ended (nil while it runs).
	EndedMS *uint64
	// Outcome is how it ended: an EndKind's wire name (completed,
	// ended_early, transport_error, idle_timeout, provider_error, aborted,
	// http_status), or open while it runs.
	Outcome string
	// Status is the HTTP status of a refused response (0 otherwise).
	Status int
}

// UnmarshalJSON reads the timings of the outcome document.
func (t *TurnTimings) UnmarshalJSON(b []byte) error {
	var doc struct {
		StartedMS             *uint64  `json:"started_ms"`
		TimeToFirstContentMS  *uint64  `json:"time_to_first_content_ms"`
		DurationMS            *uint64  `json:"duration_ms"`
		OutputTokens          *uint64  `json:"output_tokens"`
		InputTokens           *uint64  `json:"input_tokens"`
		OutputTokensPerSecond *float64 `json:"output_tokens_per_second"`
		ContentGaps           struct {
			Count    uint64 `json:"count"`
			MedianMS uint64 `json:"median_ms"`
			P95MS    uint64 `json:"p95_ms"`
			MaxMS    uint64 `json:"max_ms"`
		} `json:"content_gaps"`
		Attempts []struct {
			StartedMS uint64  `json:"started_ms"`
			EndedMS   *uint64 `json:"ended_ms"`
			Outcome   string  `json:"outcome"`
			Status    *int    `json:"status"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	ms := func(v *uint64) *time.Duration {
		if v == nil {
			return nil
		}
		d := msDuration(*v)
		return &d
	}
	g := doc.ContentGaps
	*t = TurnTimings{StartedMS: doc.StartedMS, TimeToFirstContent: ms(doc.TimeToFirstContentMS),
		ContentGaps: GapStats{Count: g.Count, Median: msDuration(g.MedianMS), P95: msDuration(g.P95MS),
			Max: msDuration(g.MaxMS)},
		Duration: ms(doc.DurationMS), OutputTokens: doc.OutputTokens, InputTokens: doc.InputTokens,
		OutputTokensPerSecond: doc.OutputTokensPerSecond}
	for _, a := range doc.Attempts {
		at := Attempt{StartedMS: a.StartedMS, EndedMS: a.EndedMS, Outcome: a.Outcome}
		if a.Status != nil {
			at.Status = *a.Status
		}
		t.Attempts = append(t.Attempts, at)
	}
	return nil
}

// TurnResult is what a finished (or aborted, or failed) turn gives the
// agent.
type TurnResult struct {
	// Message is the folded message (the non-streaming endpoint's JSON).
	Message json.RawMessage
	// Provider is the dialect (as detected).
	Provider Provider
	// StopReason is the answer's stop reason ("" when unknown).
	StopReason string
	// Calls holds every tool call of the answer, in part order.
	Calls []TurnCall
	// Results holds one result per call the host answers (every call but
	// the provider-run ones), in call order.
	Results []ToolResult
	// ToolResults is Results shaped for the next request (nil without
	// results): Next.ToolResults.
	ToolResults json.RawMessage
	// Next is what to append to the conversation to continue (nil when no
	// dialect was detected or the message has no answer).
	Next *NextRequest
	// Aborted: the turn was aborted (Abort or ctx cancelled).
	Aborted bool
	// Failure is why the turn ended with an error (nil: it did not).
	Failure *TurnFailure
	// GaveUp says why no reconnection followed the last connection when
	// one was wanted (nil: none was wanted, or one followed).
	// GiveUpNotResumable: output was delivered and the answer could not be
	// resumed; Message is everything folded.
	GaveUp *GiveUpReason
	// OutputStarted: content reached the host (a request sent again now
	// would bill and show a second answer unless resumed).
	OutputStarted bool
	// Timings: time to first content, the gaps between contents, tokens
	// per second, the attempts.
	Timings TurnTimings
	// Telemetry is what the turn reports to OpenTelemetry, named by the
	// core after the GenAI semantic conventions (the ssefoldotel package,
	// module github.com/ssefold/ssefold/bindings/go/otel, records it).
	Telemetry TurnTelemetry
}

// TurnTelemetry is the span attributes and the client metrics of a turn,
// named and computed by the core (src/agent/telemetry.rs) after the
// OpenTelemetry GenAI semantic conventions: gen_ai.operation.name,
// gen_ai.provider.name, gen_ai.response.id, gen_ai.response.model,
// gen_ai.response.finish_reasons, gen_ai.usage.input_tokens and
// output_tokens, error.type; the metrics gen_ai.client.operation.duration,
// gen_ai.client.operation.time_to_first_chunk, gen_ai.client.token.usage
// and gen_ai.client.operation.time_per_output_chunk. The binding moves the
// values as the core wrote them; a value absent there is absent here.
//
// Attribute values keep their JSON types: a string is a string, an integer
// an int64 (a number with a fraction a float64), a boolean a bool, an array
// of strings a []string (any other array a []any).
type TurnTelemetry struct {
	// Attributes are the span's attributes (gen_ai.*, error.type).
	Attributes map[string]any
	// Metrics are the measurements to record, in the core's order.
	Metrics []TelemetryMetric
}

// TelemetryMetric is one measurement of a client metric: seconds for the
// durations ("s"), a count for the token usage ("{token}").
type TelemetryMetric struct {
	Name  string
	Unit  string
	Value float64
	// Attributes are the measurement's attributes (typed as
	// TurnTelemetry.Attributes).
	Attributes map[string]any
}

// UnmarshalJSON reads the telemetry of the outcome document.
func (t *TurnTelemetry) UnmarshalJSON(b []byte) error {
	var doc struct {
		Attributes map[string]json.RawMessage `json:"attributes"`
		Metrics    []struct {
			Name       string                     `json:"name"`
			Unit       string                     `json:"unit"`
			Value      float64                    `json:"value"`
			Attributes map[string]json.RawMessage `json:"attributes"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	attrs, err := telemetryAttributes(doc.Attributes)
	if err != nil {
		return err
	}
	*t = TurnTelemetry{Attributes: attrs}
	for _, m := range doc.Metrics {
		a, err := telemetryAttributes(m.Attributes)
		if err != nil {
			return err
		}
		t.Metrics = append(t.Metrics, TelemetryMetric{Name: m.Name, Unit: m.Unit, Value: m.Value, Attributes: a})
	}
	return nil
}

// telemetryAttributes types the JSON values of an attribute set (nil for
// none).
func telemetryAttributes(doc map[string]json.RawMessage) (map[string]any, error) {
	if len(doc) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(doc))
	for k, raw := range doc {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out[k] = telemetryValue(v)
	}
	return out, nil
}

// telemetryValue turns a decoded JSON value (numbers as json.Number) into
// an attribute value.
func telemetryValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	case []any:
		strs := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				vals := make([]any, len(v))
				for i, e := range v {
					vals[i] = telemetryValue(e)
				}
				return vals
			}
			strs = append(strs, s)
		}
		return strs
	case map[string]any:
		for k, e := range v {
			v[k] = telemetryValue(e)
		}
		return v
	}
	return v
}

// fromJSON reads the outcome document of ssefold_agent_turn_outcome_json.
func (r *TurnResult) fromJSON(doc []byte) error {
	var o struct {
		Provider   string          `json:"provider"`
		Message    json.RawMessage `json:"message"`
		StopReason *string         `json:"stop_reason"`
		Aborted    bool            `json:"aborted"`
		Failure    *TurnFailure    `json:"failure"`
		Calls      []TurnCall      `json:"calls"`
		Results    []ToolResult    `json:"results"`
		Next       *NextRequest    `json:"next"`
		GaveUp     *GiveUpReason   `json:"gave_up"`
		Output     bool            `json:"output_started"`
		Timings    TurnTimings     `json:"timings"`
		Telemetry  TurnTelemetry   `json:"telemetry"`
	}
	if err := json.Unmarshal(doc, &o); err != nil {
		return err
	}
	*r = TurnResult{Message: o.Message, StopReason: "", Calls: o.Calls, Results: o.Results, Next: o.Next,
		Aborted: o.Aborted, Failure: o.Failure, GaveUp: o.GaveUp, OutputStarted: o.Output, Timings: o.Timings,
		Telemetry: o.Telemetry}
	for p := Auto; p.String() != "unknown"; p++ {
		if p.String() == o.Provider {
			r.Provider = p
		}
	}
	if o.StopReason != nil {
		r.StopReason = *o.StopReason
	}
	if n := r.Next; n != nil {
		if string(n.ToolResults) == "null" {
			n.ToolResults = nil
		}
		r.ToolResults = n.ToolResults
	}
	return nil
}

// TurnOptions configures RunTurn and RunTurnHTTP.
type TurnOptions struct {
	// MaxConcurrency: most tools at once (0: no limit).
	MaxConcurrency int
	// NoEvents: Events returns nil; only Wait is used.
	NoEvents bool
	// ChunkSize of the body reads (default 16 KiB).
	ChunkSize int
	// Client sends RunTurnHTTP's requests (http.DefaultClient when nil).
	Client *http.Client
	// NewRequest builds each request of RunTurnHTTP (required there) with
	// ctx, which the turn cancels when it closes the connection (a stall, a
	// reconnection, the end of the turn), and cursor: what to send so that
	// the server resumes the answer. The turn sets Last-Event-ID (and
	// Accept) itself; OpenAI Responses' starting_after is NewRequest's to
	// add.
	NewRequest func(ctx context.Context, cursor ResumeCursor) (*http.Request, error)
	// Policy is the retry, resume and stall policy (nil:
	// DefaultReconnectPolicy). RunTurn reads one body it cannot request
	// again: only its stall timeouts apply there (IdleTimeout,
	// FirstContentTimeout, ContentTimeout).
	Policy *ReconnectPolicy
	// ApprovalTimeout denies a call of a NeedsApproval tool left without an
	// answer for this long (0: it waits).
	ApprovalTimeout time.Duration
	// CancelRunningOnBadStop cancels the calls still running when the
	// answer stops with a reason that lets no call start (length,
	// content_filter, refusal, ...: their tool_running_after_stop event):
	// their result is "Cancelled by the host". Otherwise they run to their
	// result.
	CancelRunningOnBadStop bool
	// JitterSeed seeds the retry jitter (0: a random seed).
	JitterSeed uint64
}

type msgKind int

const (
	msgBytes msgKind = iota
	msgEnd
	msgError
	msgDone
	msgUpdate
	msgAbort
	msgConnected
	msgRefused
	msgFatal
	msgApproval
)

type message struct {
	kind msgKind
	// gen is the connection a connection's message comes from (0: none).
	gen     int
	chunk   []byte
	err     error
	id      string
	text    string
	isError bool
	// ok is an approval's answer; status and header a refused response's.
	ok     bool
	status int
	header http.Header
}

// connection is one request of the turn (or the one body RunTurn reads).
// Its goroutine posts what it reads, tagged with its gen, so that the
// messages of a connection the driver closed (a stall, a reconnection) are
// dropped; close cancels its context and closes its body.
type connection struct {
	gen    int
	cancel context.CancelFunc
	mu     sync.Mutex
	body   io.Closer
	closed bool
}

// setBody gives the connection its body to close; false (and the body
// closed) when the connection was closed already.
func (c *connection) setBody(b io.Closer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		b.Close()
		return false
	}
	c.body = b
	return true
}

func (c *connection) close() {
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		if c.body != nil {
			c.body.Close()
		}
	}
}

// Turn is one streamed turn whose tools run on goroutines as soon as their
// calls are complete. Read Events until it is closed (unless NoEvents),
// then Wait for the result.
type Turn struct {
	ctx     context.Context
	tools   map[string]Tool
	opts    TurnOptions
	client  *http.Client
	inbox   chan message
	events  chan TurnEvent
	done    chan struct{}
	stop    chan struct{}
	result  TurnResult
	err     error
	running map[string]context.CancelFunc
	// conn is the open connection (nil: none); gens numbers them.
	conn *connection
	gens int
	// calls are the ready calls seen (by id), for an approval's ToolCall;
	// approvers cancel the Approve functions still deciding.
	calls     map[string]ToolCall
	approvers map[string]context.CancelFunc
	// tasks counts the tool and approval goroutines not yet returned.
	tasks sync.WaitGroup
}

// RunTurn reads body (the response body of a streamed request of
// provider), folds it, and runs each tool call of the answer on its own
// goroutine as soon as its arguments are complete. Cancelling ctx aborts
// the turn: the stream stops, running tools' contexts are cancelled, and
// every call gets a result.
//
// RunTurn is an IO shell over AgentTurn, which decides everything: which
// calls run and when, which get an error result (unknown tool, no name,
// invalid or cut arguments, a stop reason that lets no call start, a
// denial, an abort), the results' order and the next request, for every
// dialect. RunTurn moves the bytes, runs the tool functions and reports
// their results. It reads one body and never sends a request (an
// io.Reader cannot be sent again): a body that ends early or a read error
// ends the turn with its failure. The policy's stall timeouts apply (the
// turn's clock, through Tick): a stalled body is closed when it is an
// io.Closer, and the turn fails with an idle_timeout *TurnFailure.
// RunTurnHTTP sends its own requests and retries, resumes and reconnects
// as the core decides.
func RunTurn(ctx context.Context, body io.Reader, provider Provider, tools map[string]Tool, opts *TurnOptions) *Turn {
	t := newTurn(ctx, tools, opts)
	if body == nil {
		body = eofReader{}
	}
	go t.drive(body, provider)
	return t
}

// RunTurnHTTP is RunTurn over requests the turn sends itself (with
// opts.Client and opts.NewRequest, which is required), carrying out the
// core's retry and resume decisions (opts.Policy): a refused response
// (429, 529, 5xx, ...) is sent again after its Retry-After
// (x-should-retry obeyed) while no output was delivered; a connection that
// fails, ends early or stalls (keep-alives only past FirstContentTimeout or
// ContentTimeout) is retried before output and resumed with its cursor
// (Last-Event-ID, starting_after) after it; an answer that cannot be
// resumed is never requested twice (TurnResult.GaveUp
// GiveUpNotResumable, unless Policy.RestartAfterOutput).
//
// Wait's error is then a *HTTPStatusError for a refused response not sent
// again, a *GiveUpError (Reason, Stall; it wraps the turn's failure) when
// a connection ended and no reconnection followed, the turn's failure
// otherwise.
func RunTurnHTTP(ctx context.Context, provider Provider, tools map[string]Tool, opts *TurnOptions) *Turn {
	t := newTurn(ctx, tools, opts)
	go t.drive(nil, provider)
	return t
}

func newTurn(ctx context.Context, tools map[string]Tool, opts *TurnOptions) *Turn {
	var o TurnOptions
	if opts != nil {
		o = *opts
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 16 << 10
	}
	t := &Turn{
		ctx:       ctx,
		tools:     tools,
		opts:      o,
		client:    o.Client,
		inbox:     make(chan message, 64),
		done:      make(chan struct{}),
		stop:      make(chan struct{}),
		running:   map[string]context.CancelFunc{},
		calls:     map[string]ToolCall{},
		approvers: map[string]context.CancelFunc{},
	}
	if t.client == nil {
		t.client = http.DefaultClient
	}
	if !o.NoEvents {
		t.events = make(chan TurnEvent, 64)
	}
	return t
}

// eofReader is the body of a nil body: it ends at once.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Events returns the turn's events; the channel is closed at the end.
func (t *Turn) Events() <-chan TurnEvent { return t.events }

// Wait blocks until the turn has ended, every call has its result and
// every tool function has returned (a cancelled one included). The
// error is the turn's failure: a read error of body, or an *Error matching
// ErrIncomplete, ErrProviderError, ... for a stream that failed, or a
// *TurnFailure (the result is returned with it); RunTurnHTTP's are said
// there.
func (t *Turn) Wait() (TurnResult, error) {
	<-t.done
	return t.result, t.err
}

// Abort stops the turn (safe from any goroutine).
func (t *Turn) Abort(reason string) {
	t.post(message{kind: msgAbort, text: reason})
}

// Approve approves the call waiting for approvalID (the ApprovalID of its
// tool_approval_requested event; safe from any goroutine). An id no call
// waits for (answered, timed out) is ignored.
func (t *Turn) Approve(approvalID string) {
	t.post(message{kind: msgApproval, id: approvalID, ok: true})
}

// Deny denies the call waiting for approvalID: its result is "Denied by
// the user" (": REASON" for a non-empty reason). Safe from any goroutine;
// an id no call waits for is ignored.
func (t *Turn) Deny(approvalID, reason string) {
	t.post(message{kind: msgApproval, id: approvalID, text: reason})
}

func (t *Turn) post(m message) {
	select {
	case t.inbox <- m:
	case <-t.done:
	}
}

// send posts a connection's message; false once the driver stopped.
func (t *Turn) send(m message) bool {
	select {
	case t.inbox <- m:
		return true
	case <-t.stop:
		return false
	}
}

func (t *Turn) emit(events []TurnEvent) {
	if t.events == nil {
		return
	}
	for _, e := range events {
		t.events <- e
	}
}

func (t *Turn) read(body io.Reader, gen int) {
	for {
		buf := make([]byte, t.opts.ChunkSize)
		n, err := body.Read(buf)
		if n > 0 && !t.send(message{kind: msgBytes, gen: gen, chunk: buf[:n]}) {
			return
		}
		if err != nil {
			m := message{kind: msgEnd, gen: gen}
			if !errors.Is(err, io.EOF) {
				m = message{kind: msgError, gen: gen, err: err}
			}
			t.send(m)
			return
		}
	}
}

// open sends a request (RunTurnHTTP) on a goroutine of its own: its
// response is posted as connected (then its body) or refused, a failure to
// send as an error.
func (t *Turn) open(cursor ResumeCursor) {
	t.gens++
	ctx, cancel := context.WithCancel(t.ctx)
	c := &connection{gen: t.gens, cancel: cancel}
	t.conn = c
	go func() {
		req, err := t.opts.NewRequest(ctx, cursor)
		if err != nil {
			t.send(message{kind: msgFatal, gen: c.gen, err: err})
			return
		}
		if req.Header == nil {
			req.Header = http.Header{}
		}
		if cursor.Kind == CursorLastEventID {
			req.Header.Set("Last-Event-ID", cursor.LastEventID)
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := t.client.Do(req)
		if err != nil {
			t.send(message{kind: msgError, gen: c.gen, err: err})
			return
		}
		defer resp.Body.Close()
		if !c.setBody(resp.Body) {
			return
		}
		if resp.StatusCode/100 != 2 {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			t.send(message{kind: msgRefused, gen: c.gen, status: resp.StatusCode, header: resp.Header, chunk: b})
			return
		}
		if t.send(message{kind: msgConnected, gen: c.gen}) {
			t.read(resp.Body, c.gen)
		}
	}()
}

// closeConn closes the open connection; its late messages are dropped.
func (t *Turn) closeConn() {
	if t.conn != nil {
		t.conn.close()
		t.conn = nil
	}
}

// start runs a call the turn started on a goroutine of its own.
func (t *Turn) start(call ToolCall) {
	fn := t.tools[call.Name].Fn // the turn starts registered tools only
	call.turn = t
	ctx, cancel := context.WithCancel(t.ctx)
	t.running[call.ID] = cancel
	t.tasks.Add(1)
	go func() {
		defer t.tasks.Done()
		out, err := fn(ctx, call)
		m := message{kind: msgDone, id: call.ID, text: out}
		if err != nil {
			m.text, m.isError = err.Error(), true
		}
		t.post(m)
	}()
}

// approve asks a tool's Approve function about a call waiting for
// approval, on a goroutine of its own.
func (t *Turn) approve(ev *ToolExecutionEvent) {
	fn := t.tools[ev.ToolName].Approve
	if fn == nil {
		return // the host answers with Turn.Approve / Deny
	}
	call, ok := t.calls[ev.CallID]
	if !ok {
		call = ToolCall{ID: ev.CallID, Name: ev.ToolName, Arguments: ev.Arguments}
	}
	call.turn = t
	ctx, cancel := context.WithCancel(t.ctx)
	t.approvers[ev.ApprovalID] = cancel
	t.tasks.Add(1)
	go func() {
		defer t.tasks.Done()
		ok, reason := fn(ctx, call)
		t.post(message{kind: msgApproval, id: ev.ApprovalID, ok: ok, text: reason})
	}()
}

func (t *Turn) cancel(id string) {
	if c, ok := t.running[id]; ok {
		c()
		delete(t.running, id)
	}
}

// run is one turn's driver state: the AgentTurn and what the IO around it
// did so far.
type turnRun struct {
	t        *Turn
	turn     *AgentTurn
	began    time.Time
	http     bool
	retry    *time.Timer
	retryC   <-chan time.Time
	cursor   ResumeCursor
	attempts uint32
	// connected: some response was 2xx; refused is the last one that was
	// not; readErr the last read error.
	connected bool
	refused   *HTTPStatusError
	readErr   error
}

func (r *turnRun) now() uint64 { return uint64(time.Since(r.began) / time.Millisecond) }

// report shows a report's events, then does what the turn says.
func (r *turnRun) report(events []TurnEvent, err error) {
	t := r.t
	t.emit(events)
	if err != nil && t.err == nil {
		t.err = err
	}
	// Follow-ups of the tool events: approvals to ask, calls still running
	// after a stop that lets none start.
	var stopped []string
	for _, e := range events {
		switch {
		case e.Stream != nil:
			if c := e.Stream.ReadyToolCall(); c != nil && t.tools[c.Name].NeedsApproval {
				t.calls[c.ID] = *c
			}
		case e.Tool.Name == ToolEventApprovalRequested:
			t.approve(e.Tool)
		case e.Tool.Name == ToolEventRunningAfterStop && t.opts.CancelRunningOnBadStop:
			stopped = append(stopped, e.Tool.CallID)
		}
	}
	for t.err == nil {
		a, ok, err := r.turn.PollAction()
		if err != nil {
			t.err = err
		}
		if !ok {
			break
		}
		switch a.Kind {
		case ActionStartTool:
			t.start(a.Call)
		case ActionCancelTool:
			t.cancel(a.Call.ID)
		case ActionCloseConnection:
			t.closeConn()
		case ActionReconnect:
			// Only RunTurnHTTP's turn reconnects.
			t.closeConn()
			r.attempts++
			r.cursor = a.Cursor
			r.retry.Reset(msDuration(a.DelayMS))
			r.retryC = r.retry.C
		}
	}
	for _, id := range stopped {
		if _, ok := t.running[id]; ok {
			evs, _ := r.turn.CancelTool(id)
			t.cancel(id)
			r.report(evs, nil)
		}
	}
}

// send sends the request (again).
func (r *turnRun) send() {
	if err := r.turn.RequestSent(r.now()); err != nil && r.t.err == nil {
		r.t.err = err
	}
	r.t.open(r.cursor)
}

func (t *Turn) drive(body io.Reader, provider Provider) {
	defer close(t.done)
	if t.events != nil {
		defer close(t.events)
	}
	o := t.opts
	tracksTools := t.events != nil || o.CancelRunningOnBadStop
	for name, tool := range t.tools {
		if tool.Fn == nil {
			t.err = &Error{Code: ResultInvalidArgument, Message: "tool " + name + " has no Fn"}
			return
		}
		tracksTools = tracksTools || tool.NeedsApproval
	}
	r := &turnRun{t: t, http: body == nil}
	if r.http && o.NewRequest == nil {
		t.err = &Error{Code: ResultInvalidArgument, Message: "RunTurnHTTP needs TurnOptions.NewRequest"}
		return
	}
	turn, err := NewAgentTurn(&AgentTurnConfig{
		Provider:        provider,
		Stream:          &StreamOptions{NoEvents: !tracksTools, EventJSON: true},
		Scheduler:       &SchedulerConfig{MaxConcurrency: o.MaxConcurrency},
		Reconnect:       o.Policy,
		NoReconnect:     !r.http,
		ApprovalTimeout: o.ApprovalTimeout,
		JitterSeed:      o.JitterSeed,
	})
	if err != nil {
		t.err = err
		return
	}
	defer turn.Close()
	r.turn = turn
	for name, tool := range t.tools {
		opts := ToolOptions{Exclusive: tool.Exclusive, AbortSiblingsOnError: tool.AbortSiblingsOnError,
			Start: tool.Start, NeedsApproval: tool.NeedsApproval}
		if err := turn.AddTool(name, opts); err != nil {
			t.err = err
			return
		}
	}
	r.began = time.Now()
	defer close(t.stop)
	defer t.settle()
	if r.http {
		defer t.closeConn() // RunTurn's body is the caller's (closed only when it stalls)
	}
	tick := time.NewTimer(time.Hour)
	tick.Stop()
	defer tick.Stop()
	r.retry = time.NewTimer(time.Hour)
	r.retry.Stop()
	defer r.retry.Stop()

	if r.http {
		r.send()
	} else {
		if err := turn.Connected(r.now()); err != nil {
			t.err = err
			return
		}
		t.gens++
		t.conn = &connection{gen: t.gens}
		if c, ok := body.(io.Closer); ok {
			t.conn.setBody(c)
		}
		go t.read(body, t.gens)
	}

	var transportText string
	ctxDone := t.ctx.Done()
	for t.err == nil && !turn.IsFinished() {
		// A cancelled ctx wins over what is waiting in the inbox: a tool that
		// returned because its (derived) context was cancelled gets the
		// aborted result, not its context error as a result of its own.
		if ctxDone != nil && t.ctx.Err() != nil {
			ctxDone, r.retryC = nil, nil
			r.report(turn.Abort(t.ctx.Err().Error()))
			continue
		}
		if r.http && turn.IsStreamEnded() {
			t.closeConn() // the answer is over: nothing more to read
		}
		var tickC <-chan time.Time
		if d, ok := turn.Deadline(); ok {
			tick.Reset(time.Duration(int64(d)-int64(r.now())) * time.Millisecond)
			tickC = tick.C
		}
		var m message
		select {
		case m = <-t.inbox:
		case <-ctxDone:
			continue
		case <-tickC:
			r.report(turn.Tick(r.now()))
			continue
		case <-r.retryC:
			r.retryC = nil
			r.send()
			continue
		}
		if m.gen != 0 && (t.conn == nil || m.gen != t.conn.gen || t.ctx.Err() != nil) {
			continue // a closed connection's, or one the abort closes
		}
		switch m.kind {
		case msgConnected:
			r.connected = true
			if err := turn.Connected(r.now()); err != nil {
				t.err = err
			}
		case msgRefused:
			r.refused = newHTTPStatusError(m.status, m.chunk)
			t.closeConn()
			r.report(turn.HTTPStatus(m.status, m.header, r.now()))
		case msgFatal:
			t.err = m.err
		case msgBytes:
			r.report(turn.Feed(m.chunk, r.now()))
		case msgEnd:
			r.report(turn.EndOfBody(r.now()))
		case msgError:
			r.readErr, transportText = m.err, m.err.Error()
			t.closeConn()
			r.report(turn.ConnectionFailed(m.err.Error(), r.now()))
		case msgDone:
			if _, ok := t.running[m.id]; !ok {
				continue // cancelled: the turn already gave it a result
			}
			delete(t.running, m.id)
			r.report(turn.ToolResult(m.id, m.text, m.isError))
		case msgUpdate:
			if _, ok := t.running[m.id]; ok {
				// An update racing the call's end is dropped by the turn.
				events, _ := turn.ToolUpdate(m.id, m.text)
				r.report(events, nil)
			}
		case msgApproval:
			if c, ok := t.approvers[m.id]; ok {
				c()
				delete(t.approvers, m.id)
			}
			var events []TurnEvent
			var err error
			if m.ok {
				events, err = turn.Approve(m.id)
			} else {
				events, err = turn.Deny(m.id, m.text)
			}
			if errors.Is(err, ErrNotAwaitingApproval) {
				err = nil // answered already (a timeout, an abort, twice)
			}
			r.report(events, err)
		case msgAbort:
			ctxDone, r.retryC = nil, nil
			r.report(turn.Abort(m.text))
		}
	}
	res, err := turn.Outcome()
	if err != nil && t.err == nil {
		t.err = err
	}
	t.result = res
	if t.err == nil {
		t.err = r.failure(res, transportText)
	}
}

// failure is Wait's error for a turn that ended without an error of the
// binding's own: the turn's failure, as RunTurn and RunTurnHTTP say.
func (r *turnRun) failure(res TurnResult, transportText string) error {
	err := r.turn.Failure()
	f := res.Failure
	switch {
	case err == nil || f == nil:
		return err
	case !r.http:
		if r.readErr != nil && f.Kind == "transport" {
			return r.readErr // the reader's own error, not its text
		}
		return err
	case f.Kind == "http" && r.refused != nil:
		return r.refused
	case res.GaveUp != nil && (f.Kind == "transport" || f.Kind == "idle_timeout" || f.Kind == "stream"):
		g := &GiveUpError{Attempts: r.attempts, Reason: *res.GaveUp, Connected: r.connected, Err: err,
			Message: f.Message, LastEnd: EndEndedEarly}
		switch f.Kind {
		case "transport":
			g.LastEnd, g.Message = EndTransportError, transportText
		case "idle_timeout":
			g.LastEnd, g.Stall = EndIdleTimeout, f.Stall
		}
		return g
	}
	return err
}

// settle cancels the calls still running (ones the turn cancelled, or all
// of them when the turn stopped on an error) and the approvals still
// asked, and waits for their functions to return, dropping what they post.
func (t *Turn) settle() {
	for id := range t.running {
		t.cancel(id)
	}
	for id, c := range t.approvers {
		c()
		delete(t.approvers, id)
	}
	returned := make(chan struct{})
	go func() {
		t.tasks.Wait()
		close(returned)
	}()
	for {
		select {
		case <-t.inbox:
		case <-returned:
			return
		}
	}
}
