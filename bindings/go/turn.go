package ssefold

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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

// ToolCall is one call as a tool function sees it.
type ToolCall struct {
	ID    string
	Name  string
	Input json.RawMessage
	turn  *Turn
}

// Update reports progress text (a tool_execution_update event). Safe from
// the tool's goroutine.
func (c ToolCall) Update(text string) {
	if c.turn != nil {
		c.turn.post(message{kind: msgUpdate, id: c.ID, text: text})
	}
}

// TurnEvent is one event of a turn: a stream event or a tool execution
// event (exactly one is set), in the order they happened.
type TurnEvent struct {
	Stream *StreamEvent
	Tool   *ToolExecutionEvent
}

// TurnResult is what a finished (or aborted) turn gives the agent.
type TurnResult struct {
	// Message is the folded message (the non-streaming endpoint's JSON).
	Message json.RawMessage
	// Provider is the dialect.
	Provider Provider
	// Results holds every tool call's result in call order.
	Results []ToolResult
	// ToolResults is Results shaped for the next request (nil without
	// tool calls).
	ToolResults json.RawMessage
	// Aborted: the turn was aborted (Abort or ctx cancelled).
	Aborted bool
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
	msgEvents msgKind = iota
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
	calls   map[string]ToolCall
}

// RunTurn reads body (the response body of a streamed request of
// provider), folds it, and runs each tool call of the answer on its own
// goroutine as soon as its arguments are complete. Cancelling ctx aborts
// the turn: the stream stops, running tools' contexts are cancelled, and
// every call gets a result.
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
		calls:   map[string]ToolCall{},
	}
	if !o.NoEvents {
		t.events = make(chan TurnEvent, 64)
	}
	go t.drive(body, provider, o)
	return t
}

// Events returns the turn's events; the channel is closed at the end.
func (t *Turn) Events() <-chan TurnEvent { return t.events }

// Wait blocks until the turn has ended and every call has its result.
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

func (t *Turn) emit(ev TurnEvent) {
	if t.events != nil {
		t.events <- ev
	}
}

func (t *Turn) read(body io.Reader, size int, stop <-chan struct{}) {
	for {
		buf := make([]byte, size)
		n, err := body.Read(buf)
		if n > 0 {
			select {
			case t.inbox <- message{kind: msgEvents, chunk: buf[:n]}:
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

// providerExecuted holds the tool calls the provider runs itself:
// Anthropic server tools (web search, code execution, ...) and MCP calls,
// OpenAI Responses MCP calls.
var providerExecuted = map[string]bool{"server_tool_use": true, "mcp_tool_use": true, "mcp_call": true}

// readyCall is a tool call whose part ended: its id, name and arguments.
type readyCall struct {
	id, name, args string
	complete       bool
}

// toolCallOf reads a part_end event's JSON ({"content": the part}) in any
// of the three dialects' shapes.
func toolCallOf(raw json.RawMessage) (readyCall, bool) {
	var ev struct {
		Kind    string `json:"kind"`
		Outcome string `json:"outcome"`
		Raw     string `json:"raw"`
		Content struct {
			Type     string          `json:"type"`
			ID       string          `json:"id"`
			CallID   string          `json:"call_id"`
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input"`
			Args     *string         `json:"arguments"`
			Function *struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &ev) != nil || ev.Kind != "tool_call" || ev.Outcome == "incomplete" {
		return readyCall{}, false
	}
	c := ev.Content
	if providerExecuted[c.Type] {
		return readyCall{}, false // the provider runs it; its result is in the stream
	}
	var call readyCall
	switch {
	case c.Function != nil: // OpenAI Chat
		call = readyCall{id: c.ID, name: c.Function.Name, args: c.Function.Arguments}
	case c.CallID != "": // OpenAI Responses
		call = readyCall{id: c.CallID, name: c.Name}
		if c.Args != nil {
			call.args = *c.Args
		}
	default: // Anthropic
		call = readyCall{id: c.ID, name: c.Name, args: string(c.Input)}
		if len(c.Input) == 0 {
			call.args = "{}"
		}
	}
	call.complete = ev.Outcome == "complete"
	if !call.complete {
		call.args = ev.Raw
	}
	return call, call.id != "" && call.name != ""
}

func (t *Turn) drive(body io.Reader, provider Provider, o TurnOptions) {
	defer close(t.done)
	if t.events != nil {
		defer close(t.events)
	}
	stream, err := NewStream(provider, &StreamOptions{EventJSON: true})
	if err != nil {
		t.err = err
		return
	}
	defer stream.Close()
	sched, err := NewToolScheduler(&SchedulerConfig{MaxConcurrency: o.MaxConcurrency})
	if err != nil {
		t.err = err
		return
	}
	defer func() { sched.Close() }()
	stop := make(chan struct{})
	defer close(stop)
	go t.read(body, o.ChunkSize, stop)

	fail := func(err error) {
		if t.err == nil {
			t.err = err
		}
	}
	cancel := func(ids []string) {
		for _, id := range ids {
			if c, ok := t.running[id]; ok {
				c()
				delete(t.running, id)
			}
		}
	}
	pump := func() {
		ids, err := sched.Startable()
		if err != nil {
			fail(err)
			return
		}
		for {
			ev, ok, err := sched.NextEvent()
			if err != nil {
				fail(err)
				return
			}
			if !ok {
				break
			}
			t.emit(TurnEvent{Tool: &ev})
		}
		for _, id := range ids {
			call := t.calls[id]
			delete(t.calls, id)
			call.turn = t
			ctx, c := context.WithCancel(t.ctx)
			t.running[id] = c
			go func(fn func(context.Context, ToolCall) (string, error)) {
				out, err := fn(ctx, call)
				m := message{kind: msgDone, id: call.ID, text: out}
				if err != nil {
					m.text, m.isError = err.Error(), true
				}
				t.post(m)
			}(t.tools[call.Name].Fn)
		}
	}
	onEvents := func(events []StreamEvent) {
		for i := range events {
			ev := events[i]
			t.emit(TurnEvent{Stream: &ev})
			switch ev.Kind {
			case KindTurnReset:
				ids, err := sched.Discard()
				if err != nil {
					fail(err)
				}
				cancel(ids)
				pump()
				sched.Close()
				if sched, err = NewToolScheduler(&SchedulerConfig{MaxConcurrency: o.MaxConcurrency}); err != nil {
					fail(err)
					return
				}
				t.calls = map[string]ToolCall{}
			case KindPartEnd:
				call, ok := toolCallOf(ev.JSON)
				if !ok {
					continue
				}
				tool, known := t.tools[call.name]
				if !known {
					err = sched.AddUnknown(call.id, call.name)
				} else {
					args := call.args
					if !call.complete {
						args = ""
					}
					t.calls[call.id] = ToolCall{ID: call.id, Name: call.name, Input: json.RawMessage(call.args)}
					err = sched.Add(call.id, call.name, args, ToolOptions{Exclusive: tool.Exclusive, AbortSiblingsOnError: tool.AbortSiblingsOnError})
				}
				if err != nil {
					fail(err)
				}
			}
		}
		pump()
	}
	abort := func(reason string) {
		t.result.Aborted = true
		if !stream.IsAborted() {
			if _, terminated := stream.Status(); !terminated {
				evs, _ := stream.Abort()
				for i := range evs {
					t.emit(TurnEvent{Stream: &evs[i]})
				}
			}
		}
		ids, err := sched.Abort(reason)
		if err != nil {
			fail(err)
		}
		cancel(ids)
		pump()
	}

	streamDone := false
	for t.err == nil {
		if _, _, settled := sched.Status(); streamDone && settled {
			break
		}
		// A cancelled ctx wins over what is waiting in the inbox: a tool that
		// returned because its (derived) context was cancelled gets the
		// aborted result, not its context error as a result of its own.
		if t.ctx.Err() != nil && !t.result.Aborted {
			abort(t.ctx.Err().Error())
			streamDone = true
			continue
		}
		var m message
		select {
		case m = <-t.inbox:
		case <-t.ctx.Done():
			if !t.result.Aborted {
				abort(t.ctx.Err().Error())
			}
			streamDone = true
			continue
		}
		switch m.kind {
		case msgEvents:
			if streamDone {
				continue
			}
			evs, err := stream.Feed(m.chunk)
			onEvents(evs)
			if err != nil {
				fail(err)
				abort(err.Error())
				streamDone = true
			}
		case msgEnd:
			if streamDone {
				continue
			}
			evs, err := stream.Finish()
			onEvents(evs)
			if err != nil {
				fail(err)
				abort(err.Error())
			}
			streamDone = true
		case msgError:
			fail(m.err)
			abort(m.err.Error())
			streamDone = true
		case msgDone:
			if _, ok := t.running[m.id]; !ok {
				continue // cancelled: the scheduler already gave it a result
			}
			delete(t.running, m.id)
			f, err := sched.Finish(m.id, m.text, m.isError)
			if err != nil {
				fail(err)
			}
			cancel(f.Cancel)
			pump()
		case msgUpdate:
			if _, ok := t.running[m.id]; ok {
				if err := sched.Update(m.id, m.text); err == nil {
					pump()
				}
			}
		case msgAbort:
			if !t.result.Aborted {
				abort(m.text)
			}
			streamDone = true
		}
	}
	cancel(keys(t.running))
	if msg, err := stream.Message(); err == nil {
		t.result.Message = msg
	}
	t.result.Provider, _ = stream.Status()
	if results, err := sched.AllResults(); err == nil {
		t.result.Results = results
		if len(results) > 0 && t.result.Provider != Auto {
			t.result.ToolResults, _ = sched.ToolResults(t.result.Provider)
		}
	}
}

func keys(m map[string]context.CancelFunc) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
