package ssefold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	anthropicParallel  = "../../tests/recordings/anthropic/magentic/chat_model__test_anthropic_chat_model__test_anthropic_chat_model_complete_parallel_function_call.sse"
	openaiChatParallel = "../../tests/recordings/openai_chat/openllmetry/opentelemetry-instrumentation-openai__tests__traces__test_functions__test_open_ai_function_calls_tools_streaming_parallel__i0.sse"
	// The recordings carry no timestamps: one SSE event per read, this far apart.
	replayDelay = 10 * time.Millisecond
)

// pacedReader returns one SSE event per Read, sleeping before each.
type pacedReader struct {
	events [][]byte
}

func newPacedReader(t *testing.T, path string) *pacedReader {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	r := &pacedReader{}
	for _, part := range bytes.Split(data, []byte("\n\n")) {
		if len(bytes.TrimSpace(part)) > 0 {
			r.events = append(r.events, append(part, '\n', '\n'))
		}
	}
	return r
}

func (r *pacedReader) Read(p []byte) (int, error) {
	if len(r.events) == 0 {
		return 0, io.EOF
	}
	time.Sleep(replayDelay)
	n := copy(p, r.events[0])
	r.events[0] = r.events[0][n:]
	if len(r.events[0]) == 0 {
		r.events = r.events[1:]
	}
	return n, nil
}

// sleeper is a tool that sleeps d, or until its ctx is cancelled.
func sleeper(d time.Duration, mu *sync.Mutex, running, most *int) func(context.Context, ToolCall) (string, error) {
	return func(ctx context.Context, call ToolCall) (string, error) {
		mu.Lock()
		*running++
		if *running > *most {
			*most = *running
		}
		mu.Unlock()
		defer func() { mu.Lock(); *running--; mu.Unlock() }()
		call.Update("working")
		select {
		case <-time.After(d):
			return fmt.Sprintf("%s(%s)", call.Name, call.Input), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func names(events []TurnEvent) []string {
	var out []string
	for _, e := range events {
		switch {
		case e.Tool != nil:
			out = append(out, e.Tool.Name+":"+e.Tool.CallID)
		case e.Stream.Kind == KindPartEnd && e.Stream.ToolCall != nil:
			out = append(out, "part_end:"+e.Stream.ToolCall.ID)
		default:
			out = append(out, e.Stream.Name)
		}
	}
	return out
}

func index(t *testing.T, seq []string, name string) int {
	t.Helper()
	for i, s := range seq {
		if s == name {
			return i
		}
	}
	t.Fatalf("%s not in %v", name, seq)
	return -1
}

func collect(turn *Turn) []TurnEvent {
	var events []TurnEvent
	for e := range turn.Events() {
		events = append(events, e)
	}
	return events
}

func TestToolSchedulerMisuseIsErrorsIsAble(t *testing.T) {
	s, err := NewToolScheduler(&SchedulerConfig{MaxCalls: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Add("a", "read", "{}", ToolOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(err, kind error) {
		t.Helper()
		var e *Error
		if !errors.Is(err, kind) || !errors.As(err, &e) || e.Message == "" {
			t.Fatalf("got %v, want %v", err, kind)
		}
	}
	check(s.Add("a", "read", "{}", ToolOptions{}), ErrDuplicateCallID)
	_, err = s.Finish("a", "x", false)
	check(err, ErrNotStarted)
	_, err = s.Finish("zz", "x", false)
	check(err, ErrUnknownCallID)
	_, err = s.AllResults()
	check(err, ErrUnfinished)
	if ids, _ := s.Startable(); len(ids) != 1 || ids[0] != "a" {
		t.Fatalf("startable %v", ids)
	}
	if f, err := s.Finish("a", "x", false); err != nil || !f.Recorded {
		t.Fatal(f, err)
	}
	_, err = s.Finish("a", "x", false)
	check(err, ErrAlreadyFinished)
	if errors.Is(err, ErrNotStarted) {
		t.Fatal("kinds are distinct")
	}
	if err := s.AddUnknown("b", "nosuch"); err != nil {
		t.Fatal(err)
	}
	check(s.Add("c", "read", "{}", ToolOptions{}), ErrTooManyCalls)
	_, err = s.ToolResults(Auto)
	check(err, ErrUnsupportedProvider)
	next, err := s.ToolResults(OpenAIChat)
	if err != nil || string(next) != `[{"role":"tool","tool_call_id":"a","content":"x"},{"role":"tool","tool_call_id":"b","content":"Error: No such tool available: nosuch"}]` {
		t.Fatalf("%s %v", next, err)
	}
	var evs []string
	for {
		ev, ok, err := s.NextEvent()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		evs = append(evs, ev.Name+":"+ev.CallID)
	}
	if strings.Join(evs, " ") != "tool_execution_started:a tool_execution_finished:a tool_execution_finished:b" {
		t.Fatal(evs)
	}
	if _, err := s.Discard(); err != nil {
		t.Fatal(err)
	}
	check(s.Add("d", "read", "{}", ToolOptions{}), ErrAddAfterDiscard)
	_, err = s.AllResults()
	check(err, ErrDiscarded)
	s.Close()
	if err := s.Add("e", "read", "{}", ToolOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}

func TestRunTurnAnthropicReplayRunsToolsWhileStreaming(t *testing.T) {
	var mu sync.Mutex
	var running, most int
	// plus ends only after minus did (both run at once): minus's result is
	// ready first, yet results come back in call order.
	minusDone := make(chan struct{})
	slowPlus, fastMinus := sleeper(time.Millisecond, &mu, &running, &most), sleeper(20*time.Millisecond, &mu, &running, &most)
	tools := map[string]Tool{
		"plus": {Fn: func(ctx context.Context, call ToolCall) (string, error) {
			select {
			case <-minusDone:
			case <-time.After(10 * time.Second):
				return "", errors.New("minus never finished")
			}
			return slowPlus(ctx, call)
		}},
		"minus": {Fn: func(ctx context.Context, call ToolCall) (string, error) {
			defer close(minusDone)
			return fastMinus(ctx, call)
		}},
	}
	turn := RunTurn(context.Background(), newPacedReader(t, anthropicParallel), Auto, tools, nil)
	seq := names(collect(turn))
	res, err := turn.Wait()
	if err != nil {
		t.Fatal(err)
	}
	plus, minus := "toolu_01CM7Nqnu3tF2UqzksSCxsqt", "toolu_01MGZBHepZSnpCrVLDT34yxu"
	if index(t, seq, "tool_execution_started:"+plus) != index(t, seq, "part_end:"+plus)+1 {
		t.Fatalf("plus did not start at its part_end: %v", seq)
	}
	if index(t, seq, "tool_execution_started:"+plus) > index(t, seq, "part_end:"+minus) {
		t.Fatalf("plus did not start while minus streamed: %v", seq)
	}
	if index(t, seq, "tool_execution_finished:"+minus) > index(t, seq, "tool_execution_finished:"+plus) {
		t.Fatalf("minus should finish first: %v", seq)
	}
	index(t, seq, "tool_execution_update:"+plus)
	if len(res.Results) != 2 || res.Results[0].CallID != plus || res.Results[1].CallID != minus || res.Provider != Anthropic {
		t.Fatalf("%+v", res)
	}
	// A call's input is the arguments text as streamed.
	want := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + plus + `","content":"plus({\"a\": 1, \"b\": 2})"},{"type":"tool_result","tool_use_id":"` + minus + `","content":"minus({\"a\": 2, \"b\": 1})"}]}`
	if string(res.ToolResults) != want {
		t.Fatalf("next request\n got %s\nwant %s", res.ToolResults, want)
	}
	if !bytes.Contains(res.Message, []byte(`"stop_reason":"tool_use"`)) {
		t.Fatalf("message %s", res.Message)
	}
}

func TestRunTurnOpenAIChatReplayExclusiveToolsRunAlone(t *testing.T) {
	var mu sync.Mutex
	var running, most int
	// ToolStartReady: an exclusive tool starts while the answer streams
	// (ToolStartAuto waits for the end of the turn for an exclusive tool).
	tools := map[string]Tool{"get_current_weather": {Fn: sleeper(50*time.Millisecond, &mu, &running, &most), Exclusive: true,
		Start: ToolStartReady}}
	turn := RunTurn(context.Background(), newPacedReader(t, openaiChatParallel), OpenAIChat, tools, nil)
	seq := names(collect(turn))
	res, err := turn.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || most != 1 {
		t.Fatalf("results %+v most %d", res.Results, most)
	}
	a, b := res.Results[0].CallID, res.Results[1].CallID
	if index(t, seq, "tool_execution_started:"+a) > index(t, seq, "turn_end") {
		t.Fatalf("not started while streaming: %v", seq)
	}
	if index(t, seq, "tool_execution_finished:"+a) > index(t, seq, "tool_execution_started:"+b) {
		t.Fatalf("exclusive calls overlapped: %v", seq)
	}
	var next []map[string]string
	if err := json.Unmarshal(res.ToolResults, &next); err != nil || len(next) != 2 || next[0]["role"] != "tool" || next[1]["tool_call_id"] != b {
		t.Fatalf("%s %v", res.ToolResults, err)
	}
}

func TestRunTurnContextCancellationAbortsTools(t *testing.T) {
	var mu sync.Mutex
	var running, most int
	tools := map[string]Tool{
		"plus":  {Fn: sleeper(30*time.Second, &mu, &running, &most)},
		"minus": {Fn: sleeper(30*time.Second, &mu, &running, &most)},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	turn := RunTurn(ctx, newPacedReader(t, anthropicParallel), Anthropic, tools, nil)
	start := time.Now()
	var seq []TurnEvent
	for e := range turn.Events() {
		seq = append(seq, e)
		if e.Tool != nil && e.Tool.Name == "tool_execution_started" {
			cancel()
		}
	}
	res, err := turn.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second || !res.Aborted || len(res.Results) == 0 {
		t.Fatalf("%+v after %s", res, time.Since(start))
	}
	outcomes := map[string]PartOutcome{}
	for _, c := range res.Calls {
		outcomes[c.ID] = c.Outcome
	}
	for _, r := range res.Results {
		// A call whose arguments the abort cut gets its incomplete result.
		cut := outcomes[r.CallID] == OutcomeIncomplete && r.Kind == ToolIncomplete
		if !cut && (r.Kind != ToolAborted || r.Output != "Aborted: context canceled") {
			t.Fatalf("%+v", r)
		}
	}
	if res.Failure != nil {
		t.Fatalf("an abort is no failure: %+v", res.Failure)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if running != 0 {
		t.Fatalf("%d tools still running after the abort", running)
	}
}

func TestRunTurnToolErrorsUnknownToolsAndStreamErrors(t *testing.T) {
	tools := map[string]Tool{"plus": {Fn: func(context.Context, ToolCall) (string, error) { return "", errors.New("disk full") }}}
	res, err := RunTurn(context.Background(), newPacedReader(t, anthropicParallel), Auto, tools, &TurnOptions{NoEvents: true}).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || res.Results[0].Output != "disk full" || !res.Results[0].IsError || res.Results[1].Kind != ToolUnknownTool {
		t.Fatalf("%+v", res.Results)
	}
	r := newPacedReader(t, anthropicParallel)
	r.events = r.events[:9] // cut after plus is complete, inside minus
	res, err = RunTurn(context.Background(), r, Auto, tools, &TurnOptions{NoEvents: true}).Wait()
	if !errors.Is(err, ErrIncomplete) || res.Aborted || res.Failure == nil || res.Failure.Kind != "stream" {
		t.Fatalf("%+v %v", res, err)
	}
	// Every call has its result: plus its own (it fails at once, 20 ms
	// before the body ends) or, should the end come first, the aborted one;
	// minus, cut, the incomplete one.
	if len(res.Results) != 2 {
		t.Fatalf("%+v", res.Results)
	}
	plus := res.Results[0]
	ownResult := plus.Output == "disk full" && plus.IsError && plus.Kind == ToolRan
	abortedByTheEnd := plus.Kind == ToolAborted && strings.HasPrefix(plus.Output, "Aborted: stream ended before")
	if !(ownResult || abortedByTheEnd) || res.Results[1].Kind != ToolIncomplete ||
		!strings.HasPrefix(res.Results[1].Output, "Not run: the arguments of minus were cut off") {
		t.Fatalf("%+v", res.Results)
	}
	if res.Next == nil || nextResults(t, res.Next.ToolResults) != 2 {
		t.Fatalf("next request %+v", res.Next)
	}
}

func TestRunTurnRefusesAToolWithoutFn(t *testing.T) {
	_, err := RunTurn(context.Background(), strings.NewReader(""), Auto, map[string]Tool{"x": {}}, nil).Wait()
	if !errors.As(err, new(*Error)) || !strings.Contains(err.Error(), "tool x has no Fn") {
		t.Fatal(err)
	}
}
