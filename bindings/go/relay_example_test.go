package ssefold_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	ssefold "github.com/ssefold/ssefold/bindings/go"
)

// outcome is what a tool gave, for the browser.
type outcome struct {
	output   any
	isError  bool
	duration time.Duration
}

// chatHandler is a chat endpoint for a web page: it calls the provider and
// runs the turn with ssefold.RunTurn (the tool scheduler: each tool starts as
// soon as its arguments are complete, while the answer still streams;
// results come back in call order), relays the stream to the browser as the
// AI SDK UI message stream, sends each tool's result to the browser as it
// finishes and all of them back to the model, until it stops asking for
// tools. Tools the provider runs itself (web search) are relayed with their
// results, not run here.
type chatHandler struct {
	providerURL string
	tools       map[string]func(json.RawMessage) (any, error)
}

func (h *chatHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	relay, err := ssefold.NewRelay(nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer relay.Close()
	for _, header := range relay.Headers() {
		w.Header().Set(header.Name, header.Value)
	}
	flusher, _ := w.(http.Flusher)
	send := func(b []byte, err error) {
		if err == nil && len(b) > 0 {
			w.Write(b)
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
	messages := []any{map[string]any{"role": "user", "content": "Weather and time in Paris?"}}
	for turn := 0; turn < 8; turn++ {
		result, err := h.turn(r.Context(), relay, messages, send)
		if err != nil {
			if !errors.Is(err, ssefold.ErrProviderError) { // a provider error was relayed as its event
				send(relay.ErrorEvent(err.Error(), "", false))
			}
			break
		}
		if len(result.Results) == 0 || result.Aborted {
			break
		}
		var folded struct {
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(result.Message, &folded)
		messages = append(messages, map[string]any{"role": "assistant", "content": folded.Content},
			result.ToolResults)
	}
	send(relay.Finish(nil))
}

// turn runs one provider response with the tool scheduler, relaying its
// events and each tool result as it comes.
func (h *chatHandler) turn(ctx context.Context, relay *ssefold.Relay, messages []any,
	send func([]byte, error)) (ssefold.TurnResult, error) {
	body, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 1024, "stream": true, "messages": messages})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.providerURL, bytes.NewReader(body))
	if err != nil {
		return ssefold.TurnResult{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ssefold.TurnResult{}, err
	}
	defer resp.Body.Close()
	var mu sync.Mutex
	outcomes := map[string]outcome{}
	tools := map[string]ssefold.Tool{}
	for name, fn := range h.tools {
		tools[name] = ssefold.Tool{Fn: func(_ context.Context, call ssefold.ToolCall) (string, error) {
			started := time.Now()
			output, err := fn(call.Input)
			o := outcome{output: output, duration: time.Since(started)}
			if err != nil {
				o.output, o.isError = err.Error(), true
			}
			mu.Lock()
			outcomes[call.ID] = o
			mu.Unlock()
			if err != nil {
				return "", err
			}
			text, err := json.Marshal(output)
			return string(text), err
		}}
	}
	turn := ssefold.RunTurn(ctx, resp.Body, ssefold.Anthropic, tools, nil)
	var neverRan []string // unknown tools, invalid arguments: the scheduler's own results
	for ev := range turn.Events() {
		switch {
		case ev.Stream != nil:
			send(relay.Push(*ev.Stream))
		case ev.Tool.Name == "tool_execution_finished":
			mu.Lock()
			o, ran := outcomes[ev.Tool.CallID]
			mu.Unlock()
			if ran {
				send(relay.ToolResult(ev.Tool.CallID, o.output, o.isError, o.duration))
			} else {
				neverRan = append(neverRan, ev.Tool.CallID)
			}
		}
	}
	result, err := turn.Wait()
	for _, r := range result.Results {
		if slices.Contains(neverRan, r.CallID) {
			send(relay.ToolResult(r.CallID, r.Output, r.IsError, -1))
		}
	}
	return result, err
}

// fakeProvider answers the n-th request with the n-th recorded body, in
// small flushed chunks paced like a model's; firstEnded is closed when the
// first body was sent whole.
//
// The first body's last chunk waits (up to 10 s) for holdLast to close: a
// tool that starts while the answer streams starts before the body ends, on
// a slow machine too (the debug build's GC before every C call).
func fakeProvider(bodies [][]byte, holdLast <-chan struct{}) (srv *httptest.Server, requests *[][]byte, firstEnded chan struct{}) {
	var mu sync.Mutex
	var reqs [][]byte
	firstEnded = make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, req)
		n := len(reqs)
		body := bodies[min(n, len(bodies))-1]
		mu.Unlock()
		w.Header().Set("content-type", "text/event-stream")
		for at := 0; at < len(body); at += 97 {
			if n == 1 && at+97 >= len(body) {
				select {
				case <-holdLast:
				case <-time.After(10 * time.Second):
				}
			}
			w.Write(body[at:min(at+97, len(body))])
			w.(http.Flusher).Flush()
			time.Sleep(3 * time.Millisecond)
		}
		if n == 1 {
			close(firstEnded)
		}
	}))
	return srv, &reqs, firstEnded
}

// The relay behind an http.Handler, provider and browser on loopback.
func Example_relayHandler() {
	var bodies [][]byte
	for _, name := range []string{"interleaved_tools.sse", "thinking_text_citations.sse"} {
		b, err := os.ReadFile("../../tests/fixtures/anthropic/" + name)
		if err != nil {
			panic(err)
		}
		bodies = append(bodies, b)
	}
	weatherStarted := make(chan struct{})
	var startOnce sync.Once
	provider, requests, firstEnded := fakeProvider(bodies, weatherStarted)
	defer provider.Close()
	startedEarly := make(chan bool, 1)
	chat := httptest.NewServer(&chatHandler{providerURL: provider.URL, tools: map[string]func(json.RawMessage) (any, error){
		"get_weather": func(in json.RawMessage) (any, error) {
			// The scheduler starts the tool while the answer still streams.
			select {
			case <-firstEnded:
				startedEarly <- false
			default:
				startedEarly <- true
			}
			startOnce.Do(func() { close(weatherStarted) })
			var args struct{ City string }
			json.Unmarshal(in, &args)
			return map[string]any{"city": args.City, "temp_c": 21}, nil
		},
		"get_time": func(json.RawMessage) (any, error) { return nil, errors.New("clock unavailable") },
	}})
	defer chat.Close()

	// The browser's side.
	resp, err := http.Post(chat.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Header.Get("x-vercel-ai-ui-message-stream"))
	steps := 0
	var results []string // as they finish: printed sorted
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		data, ok := strings.CutPrefix(scanner.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			fmt.Println(data)
			continue
		}
		var chunk map[string]any
		json.Unmarshal([]byte(data), &chunk)
		switch chunk["type"] {
		case "start-step":
			steps++
		case "tool-output-available":
			output, _ := json.Marshal(chunk["output"])
			if chunk["providerExecuted"] == true {
				output = []byte("(run by the provider)")
			}
			results = append(results, fmt.Sprint(chunk["toolCallId"], " -> ", string(output)))
		case "tool-output-error":
			results = append(results, fmt.Sprint(chunk["toolCallId"], " failed: ", chunk["errorText"]))
		case "finish":
			slices.Sort(results)
			fmt.Println(strings.Join(results, "\n"))
			fmt.Println("steps:", steps, "finish:", chunk["finishReason"])
		}
	}
	fmt.Println("provider requests:", len(*requests))
	fmt.Println("get_weather started while the answer streamed:", <-startedEarly)
	var second struct {
		Messages []struct {
			Content []struct {
				ToolUseID string `json:"tool_use_id"`
			}
		}
	}
	json.Unmarshal((*requests)[1], &second)
	var order []string
	for _, c := range second.Messages[len(second.Messages)-1].Content {
		order = append(order, c.ToolUseID)
	}
	fmt.Println("results sent back in call order:", order)
	// Output:
	// v1
	// srvtoolu_1 -> (run by the provider)
	// toolu_A -> {"city":"Paris","temp_c":21}
	// toolu_B failed: clock unavailable
	// steps: 2 finish: stop
	// [DONE]
	// provider requests: 2
	// get_weather started while the answer streamed: true
	// results sent back in call order: [toolu_B toolu_A]
}
