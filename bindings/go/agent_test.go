package ssefold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// turnBody is a golden fixture or recording body and its dialect.
type turnBody struct {
	path     string
	provider Provider
}

// turnBodies lists every golden fixture body and every recording of the
// manifest.
func turnBodies(t *testing.T) []turnBody {
	var out []turnBody
	names := make([]string, 0, len(dialects))
	for d := range dialects {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		for _, ext := range []string{"sse", "ndjson", "bin"} {
			files, _ := filepath.Glob(filepath.Join("../../tests/fixtures", d, "*."+ext))
			for _, f := range files {
				out = append(out, turnBody{f, dialects[d]})
			}
		}
	}
	raw, err := os.ReadFile("../../tests/recordings/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var manifest []struct {
		File    string `json:"file"`
		Dialect string `json:"dialect"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest {
		p, ok := dialects[m.Dialect]
		if !ok {
			t.Fatalf("%s: unknown dialect %q", m.File, m.Dialect)
		}
		out = append(out, turnBody{filepath.Join("../../tests/recordings", m.File), p})
	}
	return out
}

// seenCall is a tool call as a plain stream reports it at its part_end.
type seenCall struct {
	call    ToolCall
	outcome PartOutcome
	choice  int
}

// referenceCalls folds body with a plain Stream and returns its tool calls
// (from the typed events; the choice from the part_start's JSON form), and
// checks each event's typed call against its JSON form.
func referenceCalls(t *testing.T, p Provider, body []byte) []seenCall {
	t.Helper()
	s, err := NewStream(p, &StreamOptions{EventJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Feed(body)
	if err == nil {
		var more []StreamEvent
		more, _ = s.Finish()
		evs = append(evs, more...)
	}
	choices := map[int]int{}
	var calls []seenCall
	for i := range evs {
		e := &evs[i]
		checkTypedCall(t, e)
		if e.ToolCall == nil {
			continue
		}
		if e.Kind == KindPartStart {
			var start struct {
				Choice int `json:"choice"`
			}
			if err := json.Unmarshal(e.JSON, &start); err != nil {
				t.Fatal(err)
			}
			choices[e.Part] = start.Choice
			continue
		}
		calls = append(calls, seenCall{call: *e.ToolCall, outcome: e.Outcome, choice: choices[e.Part]})
	}
	return calls
}

// checkTypedCall compares a stream event's typed ToolCall and Outcome with
// its JSON form.
func checkTypedCall(t *testing.T, e *StreamEvent) {
	t.Helper()
	var j struct {
		Kind     string `json:"kind"`
		Outcome  string `json:"outcome"`
		ToolCall *struct {
			ID               *string `json:"id"`
			IDSynthesized    bool    `json:"id_synthesized"`
			Name             *string `json:"name"`
			Arguments        *string `json:"arguments"`
			InputFormat      string  `json:"input_format"`
			ProviderExecuted bool    `json:"provider_executed"`
		} `json:"tool_call"`
	}
	if err := json.Unmarshal(e.JSON, &j); err != nil {
		t.Fatalf("%s: %v", e.JSON, err)
	}
	if e.Kind == KindPartEnd && e.Outcome.String() != j.Outcome {
		t.Errorf("outcome %v, JSON %s", e.Outcome, e.JSON)
	}
	if e.Kind != KindPartEnd && e.Outcome != OutcomeNone {
		t.Errorf("outcome %v on %s", e.Outcome, e.Name)
	}
	if (e.ToolCall == nil) != (j.ToolCall == nil) {
		t.Fatalf("typed call %+v, JSON %s", e.ToolCall, e.JSON)
	}
	if e.ToolCall == nil {
		return
	}
	c, w := e.ToolCall, j.ToolCall
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if c.ID != str(w.ID) || c.Name != str(w.Name) || c.Arguments != str(w.Arguments) ||
		c.IDSynthesized != w.IDSynthesized || c.InputFormat.String() != w.InputFormat || c.ProviderExecuted != w.ProviderExecuted {
		t.Errorf("typed call %+v, JSON %s", c, e.JSON)
	}
	if e.Kind == KindPartEnd && c.InputFormat == ToolInputJSON && string(c.Input) != c.Arguments {
		t.Errorf("Input %s is not the arguments %s", c.Input, c.Arguments)
	}
}

// nextResults counts the results of a next request's tool results: a list
// of messages or items, or one message whose content / parts list holds
// them.
func nextResults(t *testing.T, raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		return len(list)
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(raw, &one); err != nil {
		t.Fatalf("tool results %s: %v", raw, err)
	}
	for _, v := range one {
		if json.Unmarshal(v, &list) == nil {
			return len(list)
		}
	}
	return 0
}

// closedEvents stands for the nil Events of a turn without events.
var closedEvents = func() chan TurnEvent { c := make(chan TurnEvent); close(c); return c }()

// TestRunTurnEveryFixtureAndRecording runs every golden and recording with
// tool calls through RunTurn, a tool registered for every name seen: each
// ready call runs once with the fold's name and arguments, every call gets
// one result in call order, and the next request has one result per call.
func TestRunTurnEveryFixtureAndRecording(t *testing.T) {
	withCalls, ran := 0, 0
	for i, b := range turnBodies(t) {
		body, err := os.ReadFile(b.path)
		if err != nil {
			t.Fatal(err)
		}
		calls := referenceCalls(t, b.provider, body)
		if len(calls) == 0 {
			continue
		}
		withCalls++
		if gcStress && withCalls%8 != 0 {
			continue // a GC before every C call: a sample of the corpus
		}
		var mu sync.Mutex
		runs := map[string][]ToolCall{}
		fn := func(_ context.Context, c ToolCall) (string, error) {
			mu.Lock()
			runs[c.ID] = append(runs[c.ID], c)
			mu.Unlock()
			return "result of " + c.ID, nil
		}
		tools := map[string]Tool{}
		for _, c := range calls {
			if c.call.Name != "" {
				tools[c.call.Name] = Tool{Fn: fn}
			}
		}
		p := b.provider
		if i%2 == 1 {
			p = Auto
		}
		opts := &TurnOptions{NoEvents: i%3 == 0, ChunkSize: 1 + (i*37)%500}
		turn := RunTurn(context.Background(), bytes.NewReader(body), p, tools, opts)
		shown := 0
		events := turn.Events()
		if opts.NoEvents {
			events = closedEvents
		}
		for e := range events {
			if (e.Stream == nil) == (e.Tool == nil) {
				t.Fatalf("%s: event %+v", b.path, e)
			}
			shown++
		}
		// Wait returns once every tool function has returned (the cancelled
		// ones too): runs is read without the lock.
		res, werr := turn.Wait()
		if !opts.NoEvents && shown == 0 {
			t.Errorf("%s: no events", b.path)
		}
		var answered, hostRun []seenCall
		for _, c := range calls {
			if c.choice != 0 || c.call.ProviderExecuted {
				continue
			}
			answered = append(answered, c)
			if c.outcome == OutcomeComplete && c.call.Name != "" {
				hostRun = append(hostRun, c)
			}
		}
		name := b.path
		if (res.Failure == nil) != (werr == nil) {
			t.Errorf("%s: failure %+v, error %v", name, res.Failure, werr)
		}
		// Each ready, host-run call ran exactly once, with the fold's input.
		for id, rs := range runs {
			if len(rs) != 1 {
				t.Errorf("%s: %s ran %d times", name, id, len(rs))
			}
		}
		if res.Failure == nil && len(runs) != len(hostRun) {
			t.Errorf("%s: %d calls ran, want %d", name, len(runs), len(hostRun))
		}
		for _, c := range hostRun {
			rs, ok := runs[c.call.ID]
			if !ok {
				if res.Failure == nil {
					t.Errorf("%s: ready call %s never ran", name, c.call.ID)
				}
				continue
			}
			got := rs[0]
			if got.Name != c.call.Name || got.Arguments != c.call.Arguments || got.IDSynthesized != c.call.IDSynthesized ||
				got.InputFormat != c.call.InputFormat {
				t.Errorf("%s: ran %+v, the fold has %+v", name, got, c.call)
			}
		}
		ran += len(runs)
		// One result per call, in call order.
		if len(res.Results) != len(answered) {
			t.Fatalf("%s: %d results for %d calls: %+v", name, len(res.Results), len(answered), res.Results)
		}
		for k, r := range res.Results {
			c := answered[k]
			if r.CallID != c.call.ID || r.IDSynthesized != c.call.IDSynthesized {
				t.Errorf("%s: result %d is %s, call %s", name, k, r.CallID, c.call.ID)
			}
			want := ToolRan
			switch {
			case c.outcome == OutcomeIncomplete:
				want = ToolIncomplete
			case c.outcome == OutcomeInvalidArguments:
				want = ToolInvalidInput
			case c.call.Name == "":
				want = ToolUnnamed
			case res.Failure != nil && r.Kind == ToolAborted:
				want = ToolAborted
			}
			if r.Kind != want || r.IsError != (want != ToolRan) {
				t.Errorf("%s: %s: %v (%s), want %v", name, r.CallID, r.Kind, r.Output, want)
			}
			if want == ToolRan && r.Output != "result of "+c.call.ID {
				t.Errorf("%s: %s: output %q", name, r.CallID, r.Output)
			}
		}
		// Every call of the turn, in part order, the answered ones among them.
		if len(res.Calls) < len(answered) {
			t.Errorf("%s: %d calls in the result", name, len(res.Calls))
		}
		// The next request: one result per call.
		if res.Next == nil {
			t.Errorf("%s: no next request", name)
		} else {
			if n := nextResults(t, res.Next.ToolResults); n != len(answered) {
				t.Errorf("%s: %d results in the next request, want %d: %s", name, n, len(answered), res.Next.ToolResults)
			}
			if len(res.Next.Append) == 0 || len(res.Next.Assistant) == 0 {
				t.Errorf("%s: next request %+v", name, res.Next)
			}
			if !bytes.Equal(res.ToolResults, res.Next.ToolResults) {
				t.Errorf("%s: ToolResults is not Next.ToolResults", name)
			}
		}
	}
	t.Logf("%d streams with tool calls, %d calls run", withCalls, ran)
	if withCalls < 500 || (!gcStress && ran < 500) {
		t.Fatalf("%d streams with tool calls, %d calls run", withCalls, ran)
	}
}

// dialectShapes are the provider block and item types whose JSON names a
// tool call (or its result) in one dialect or another.
var dialectShapes = []string{
	"tool_use", "server_tool_use", "mcp_tool_use", "tool_result", "input_json_delta", "content_block_start",
	"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "mcp_call", "tool_calls",
	"functionCall", "functionResponse", "executableCode", "toolUse", "toolUseId", "toolResult",
}

// TestNoProviderJSONShapeInTheBinding: the binding never reads a
// provider's JSON to find a tool call (the core gives the call, provider-
// neutral): no non-test source names a dialect's block or item type.
func TestNoProviderJSONShapeInTheBinding(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, lit := range literal.FindAllString(string(src), -1) {
			for _, shape := range dialectShapes {
				if regexp.MustCompile(`\b` + shape + `\b`).MatchString(lit) {
					t.Errorf("%s: the string %s names the provider shape %q", f, lit, shape)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d sources checked", checked)
	}
}

const chatCall = "id: 1\n" +
	`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":null,"type":"function","function":{"name":"add","arguments":"{\"a\":1}"}}]}}]}` +
	"\n\nid: 2\n" +
	`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` +
	"\n\n"

// TestAgentTurnDrivenByHand: the sans-IO turn's own API: a start with a
// synthesized id, its result, the outcome; an abort; a reconnection.
func TestAgentTurnDrivenByHand(t *testing.T) {
	turn, err := NewAgentTurn(&AgentTurnConfig{Provider: OpenAIChat, Stream: &StreamOptions{EventJSON: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	if err := turn.AddTool("add", ToolOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, err := turn.Feed([]byte(chatCall+"data: [DONE]\n\n"), 1)
	if err != nil || len(evs) == 0 {
		t.Fatal(evs, err)
	}
	var ready *ToolCall
	for _, e := range evs {
		if e.Stream != nil && e.Stream.ReadyToolCall() != nil {
			ready = e.Stream.ReadyToolCall()
		}
	}
	if ready == nil || ready.ID != "ssefold_call_0" || !ready.IDSynthesized || ready.Name != "add" || string(ready.Input) != `{"a":1}` {
		t.Fatalf("ready call %+v", ready)
	}
	a, ok, err := turn.PollAction()
	if err != nil || !ok || a.Kind != ActionStartTool || a.Call.ID != "ssefold_call_0" || !a.Call.IDSynthesized ||
		a.Call.Arguments != `{"a":1}` || a.Call.InputFormat != ToolInputJSON {
		t.Fatalf("%+v %v %v", a, ok, err)
	}
	if _, ok, _ := turn.PollAction(); ok || turn.IsFinished() || !turn.IsStreamEnded() {
		t.Fatal("one action; the turn waits for the tool")
	}
	if _, err := turn.ToolResult("nope", "", false); !errors.Is(err, ErrUnknownCallID) {
		t.Fatalf("unknown id: %v", err)
	}
	evs, err = turn.ToolResult(a.Call.ID, "1", false)
	if err != nil || len(evs) != 1 || evs[0].Tool == nil || evs[0].Tool.Name != "tool_execution_finished" {
		t.Fatalf("%+v %v", evs, err)
	}
	if !turn.IsFinished() || turn.Failure() != nil {
		t.Fatal("finished without failure")
	}
	res, err := turn.Outcome()
	if err != nil || res.Provider != OpenAIChat || res.StopReason != "tool_calls" || len(res.Calls) != 1 ||
		res.Calls[0].Outcome != OutcomeComplete || res.Calls[0].ProviderType != "function" || len(res.Results) != 1 ||
		res.Results[0].Kind != ToolRan || !res.Results[0].IDSynthesized || res.Next == nil || len(res.Next.Append) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if want := `[{"role":"tool","tool_call_id":"ssefold_call_0","content":"1"}]`; string(res.ToolResults) != want {
		t.Fatalf("tool results %s", res.ToolResults)
	}

	// A body that ends early (its chunks announce the usage, which never
	// comes; no [DONE]): a stream failure, typed; the started call is
	// cancelled.
	cut, _ := NewAgentTurn(&AgentTurnConfig{Stream: &StreamOptions{NoEvents: true}, NoReconnect: true})
	defer cut.Close()
	cut.AddTool("add", ToolOptions{})
	early := strings.ReplaceAll(chatCall, "}\n\n", `,"usage":null}`+"\n\n")
	if evs, err := cut.Feed([]byte(early), 1); err != nil || evs != nil {
		t.Fatal(evs, err)
	}
	cut.EndOfBody(2)
	var kinds []ActionKind
	for {
		a, ok, _ := cut.PollAction()
		if !ok {
			break
		}
		kinds = append(kinds, a.Kind)
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]ActionKind{ActionStartTool, ActionCancelTool}) || !cut.IsFinished() {
		t.Fatalf("actions %v", kinds)
	}
	if err := cut.Failure(); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("failure %v", err)
	}
	res, _ = cut.Outcome()
	if res.Failure == nil || res.Failure.Kind != "stream" || res.Results[0].Kind != ToolAborted {
		t.Fatalf("%+v", res)
	}
	if _, err := cut.ToolResult(a.Call.ID, "late", false); err != nil {
		t.Fatalf("a late result is dropped: %v", err)
	}

	// With a policy (the default), the early end is a reconnection with its
	// cursor: a resume, the text having been shown (no jitter: the delay is
	// the policy's).
	policy := DefaultReconnectPolicy()
	policy.Jitter = 0
	re, _ := NewAgentTurn(&AgentTurnConfig{Reconnect: &policy})
	defer re.Close()
	re.Connected(0)
	re.Feed([]byte(early), 1)
	re.EndOfBody(2)
	a, ok, _ = re.PollAction()
	if !ok || a.Kind != ActionReconnect || a.DelayMS != 1000 || a.Attempt != 1 || a.Cursor.Kind != CursorLastEventID ||
		a.Cursor.LastEventID != "2" || a.Replay != ReplayResume {
		t.Fatalf("%+v", a)
	}
	if _, ok := re.Deadline(); ok {
		t.Fatal("no deadline while reconnecting")
	}
	re.Connected(1002)
	re.Feed([]byte("data: [DONE]\n\n"), 1003)
	if !re.IsFinished() {
		t.Fatal("resumed and finished (no tool registered: the call gets its unknown-tool result)")
	}
	res, _ = re.Outcome()
	if res.Failure != nil || res.Results[0].Kind != ToolUnknownTool {
		t.Fatalf("%+v", res)
	}
	turn.Close()
	if _, err := turn.Feed(nil, 0); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}
