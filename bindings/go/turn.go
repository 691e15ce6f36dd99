package ssefold

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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
// connection, and matches ErrIncompleteStream.
type TurnFailure struct {
	// Kind is stream, transport, idle_timeout or too_many_calls.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Retryable: sending the request again may succeed.
	Retryable bool `json:"retryable"`
}

func (f *TurnFailure) Error() string { return "ssefold: turn failed (" + f.Kind + "): " + f.Message }

// Is matches ErrIncompleteStream for a transport failure or an idle
// connection.
func (f *TurnFailure) Is(target error) bool {
	return target == ErrIncompleteStream && (f.Kind == "transport" || f.Kind == "idle_timeout")
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
	}
	if err := json.Unmarshal(doc, &o); err != nil {
		return err
	}
	*r = TurnResult{Message: o.Message, StopReason: "", Calls: o.Calls, Results: o.Results, Next: o.Next,
		Aborted: o.Aborted, Failure: o.Failure}
	for p := Auto; p <= BedrockConverse; p++ {
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

// TurnOptions configures RunTurn.
type TurnOptions struct {
	// MaxConcurrency: most tools at once (0: no limit).
	MaxConcurrency int
	// NoEvents: Events returns nil; only Wait is used.
	NoEvents bool
	// ChunkSize of the body reads (default 16 KiB).
	ChunkSize int
}

type msgKind int

const (
	msgBytes msgKind = iota
	msgEnd
	msgError
	msgDone
	msgUpdate
	msgAbort
)

type message struct {
	kind    msgKind
	chunk   []byte
	err     error
	id      string
	text    string
	isError bool
}

// Turn is one streamed turn whose tools run on goroutines as soon as their
// calls are complete. Read Events until it is closed (unless NoEvents),
// then Wait for the result.
type Turn struct {
	ctx     context.Context
	tools   map[string]Tool
	inbox   chan message
	events  chan TurnEvent
	done    chan struct{}
	result  TurnResult
	err     error
	running map[string]context.CancelFunc
	// tasks counts the tool goroutines not yet returned.
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
// invalid or cut arguments, abort), the results' order and the next
// request, for every dialect. RunTurn moves the bytes, runs the tool
// functions and reports their results. It reads one body and sets no
// reconnection policy (an io.Reader cannot be sent again): a body that
// ends early or a read error ends the turn with its failure.
func RunTurn(ctx context.Context, body io.Reader, provider Provider, tools map[string]Tool, opts *TurnOptions) *Turn {
	var o TurnOptions
	if opts != nil {
		o = *opts
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 16 << 10
	}
	t := &Turn{
		ctx:     ctx,
		tools:   tools,
		inbox:   make(chan message, 64),
		done:    make(chan struct{}),
		running: map[string]context.CancelFunc{},
	}
	if !o.NoEvents {
		t.events = make(chan TurnEvent, 64)
	}
	go t.drive(body, provider, o)
	return t
}

// Events returns the turn's events; the channel is closed at the end.
func (t *Turn) Events() <-chan TurnEvent { return t.events }

// Wait blocks until the turn has ended, every call has its result and
// every tool function has returned (a cancelled one included). The
// error is the turn's failure: a read error of body, or an *Error matching
// ErrIncomplete, ErrProviderError, ... for a stream that failed (the result
// is returned with it).
func (t *Turn) Wait() (TurnResult, error) {
	<-t.done
	return t.result, t.err
}

// Abort stops the turn (safe from any goroutine).
func (t *Turn) Abort(reason string) {
	t.post(message{kind: msgAbort, text: reason})
}

func (t *Turn) post(m message) {
	select {
	case t.inbox <- m:
	case <-t.done:
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

func (t *Turn) read(body io.Reader, size int, stop <-chan struct{}) {
	for {
		buf := make([]byte, size)
		n, err := body.Read(buf)
		if n > 0 {
			select {
			case t.inbox <- message{kind: msgBytes, chunk: buf[:n]}:
			case <-stop:
				return
			}
		}
		if err != nil {
			m := message{kind: msgEnd}
			if !errors.Is(err, io.EOF) {
				m = message{kind: msgError, err: err}
			}
			select {
			case t.inbox <- m:
			case <-stop:
			}
			return
		}
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

func (t *Turn) cancel(id string) {
	if c, ok := t.running[id]; ok {
		c()
		delete(t.running, id)
	}
}

func (t *Turn) drive(body io.Reader, provider Provider, o TurnOptions) {
	defer close(t.done)
	if t.events != nil {
		defer close(t.events)
	}
	for name, tool := range t.tools {
		if tool.Fn == nil {
			t.err = &Error{Code: ResultInvalidArgument, Message: "tool " + name + " has no Fn"}
			return
		}
	}
	turn, err := NewAgentTurn(&AgentTurnConfig{
		Provider:  provider,
		Stream:    &StreamOptions{NoEvents: t.events == nil, EventJSON: true},
		Scheduler: &SchedulerConfig{MaxConcurrency: o.MaxConcurrency},
	})
	if err != nil {
		t.err = err
		return
	}
	defer turn.Close()
	for name, tool := range t.tools {
		if err := turn.AddTool(name, ToolOptions{Exclusive: tool.Exclusive, AbortSiblingsOnError: tool.AbortSiblingsOnError}); err != nil {
			t.err = err
			return
		}
	}
	began := time.Now()
	now := func() uint64 { return uint64(time.Since(began) / time.Millisecond) }
	stop := make(chan struct{})
	defer close(stop)
	defer t.settle()
	// report shows a report's events, then does what the turn says.
	report := func(events []TurnEvent, err error) {
		t.emit(events)
		if err != nil && t.err == nil {
			t.err = err
		}
		for t.err == nil {
			a, ok, err := turn.PollAction()
			if err != nil {
				t.err = err
			}
			if !ok {
				return
			}
			switch a.Kind {
			case ActionStartTool:
				t.start(a.Call)
			case ActionCancelTool:
				t.cancel(a.Call.ID)
			}
			// RunTurn sets no reconnection policy: the turn never asks it to
			// close an idle connection or to reconnect.
		}
	}
	if err := turn.Connected(now()); err != nil {
		t.err = err
		return
	}
	go t.read(body, o.ChunkSize, stop)

	var readErr error
	ctxDone := t.ctx.Done()
	for t.err == nil && !turn.IsFinished() {
		// A cancelled ctx wins over what is waiting in the inbox: a tool that
		// returned because its (derived) context was cancelled gets the
		// aborted result, not its context error as a result of its own.
		if ctxDone != nil && t.ctx.Err() != nil {
			ctxDone = nil
			report(turn.Abort(t.ctx.Err().Error()))
			continue
		}
		var m message
		select {
		case m = <-t.inbox:
		case <-ctxDone:
			continue
		}
		switch m.kind {
		case msgBytes:
			report(turn.Feed(m.chunk, now()))
		case msgEnd:
			report(turn.EndOfBody(now()))
		case msgError:
			readErr = m.err
			report(turn.ConnectionFailed(m.err.Error(), now()))
		case msgDone:
			if _, ok := t.running[m.id]; !ok {
				continue // cancelled: the turn already gave it a result
			}
			delete(t.running, m.id)
			report(turn.ToolResult(m.id, m.text, m.isError))
		case msgUpdate:
			if _, ok := t.running[m.id]; ok {
				// An update racing the call's end is dropped by the turn.
				events, _ := turn.ToolUpdate(m.id, m.text)
				report(events, nil)
			}
		case msgAbort:
			ctxDone = nil
			report(turn.Abort(m.text))
		}
	}
	res, err := turn.Outcome()
	if err != nil && t.err == nil {
		t.err = err
	}
	t.result = res
	if t.err == nil {
		t.err = turn.Failure()
		var tf *TurnFailure
		if readErr != nil && errors.As(t.err, &tf) && tf.Kind == "transport" {
			t.err = readErr // the reader's own error, not its text
		}
	}
}

// settle cancels the calls still running (ones the turn cancelled, or all
// of them when the turn stopped on an error) and waits for their functions
// to return, dropping what they post.
func (t *Turn) settle() {
	for id := range t.running {
		t.cancel(id)
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
