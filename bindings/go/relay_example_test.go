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
	"strings"
	"sync"

	ssefold "github.com/ssefold/ssefold/bindings/go"
)

// toolCall is a ready Anthropic tool_use block.
type toolCall struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// chatHandler is a chat endpoint for a web page: it calls the provider,
// relays its stream to the browser as the AI SDK UI message stream, runs
// the ready tool calls concurrently between turns, and sends their results
// (in the order the calls became ready) to the browser and back to the
// model until it stops asking for tools.
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
		calls, message, err := h.turn(r.Context(), relay, messages, send)
		if err != nil {
			if !errors.Is(err, ssefold.ErrProviderError) { // a provider error was relayed as its event
				send(relay.ErrorEvent(err.Error(), false))
			}
			break
		}
		if len(calls) == 0 {
			break
		}
		results := make([]map[string]any, len(calls))
		var wg sync.WaitGroup
		for i, call := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				output, isError := any(nil), false
				if tool, ok := h.tools[call.Name]; !ok {
					output, isError = "unknown tool "+call.Name, true
				} else if out, err := tool(call.Input); err != nil {
					output, isError = err.Error(), true
				} else {
					output = out
				}
				results[i] = map[string]any{"output": output, "is_error": isError}
			}()
		}
		wg.Wait()
		var toolResults []any
		for i, call := range calls {
			send(relay.ToolResult(call.ID, results[i]["output"], results[i]["is_error"].(bool), -1))
			content, _ := json.Marshal(results[i]["output"])
			toolResults = append(toolResults, map[string]any{"type": "tool_result", "tool_use_id": call.ID,
				"content": string(content), "is_error": results[i]["is_error"]})
		}
		var folded struct {
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(message, &folded)
		messages = append(messages, map[string]any{"role": "assistant", "content": folded.Content},
			map[string]any{"role": "user", "content": toolResults})
	}
	send(relay.Finish(nil))
}

// turn relays one provider response and returns its ready host tool calls
// and the folded message.
func (h *chatHandler) turn(ctx context.Context, relay *ssefold.Relay, messages []any,
	send func([]byte, error)) ([]toolCall, json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 1024, "stream": true, "messages": messages})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.providerURL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	stream, err := ssefold.NewStream(ssefold.Anthropic, &ssefold.StreamOptions{EventJSON: true})
	if err != nil {
		return nil, nil, err
	}
	defer stream.Close()
	var calls []toolCall
	push := func(events []ssefold.StreamEvent) {
		for _, ev := range events {
			send(relay.Push(ev))
			if ev.Name != "part_end" {
				continue
			}
			var end struct {
				Kind, Outcome string
				Content       toolCall
			}
			// Only the host's own tools (not the provider's server tools).
			if json.Unmarshal(ev.JSON, &end) == nil && end.Kind == "tool_call" && end.Outcome == "complete" &&
				end.Content.Type == "tool_use" {
				calls = append(calls, end.Content)
			}
		}
	}
	buf := make([]byte, 4096)
	for {
		n, readErr := resp.Body.Read(buf)
		if n > 0 {
			events, err := stream.Feed(buf[:n])
			push(events)
			if err != nil {
				return nil, nil, err
			}
		}
		if readErr == io.EOF {
			break
		}
		if readErr != nil {
			return nil, nil, readErr
		}
	}
	events, err := stream.Finish()
	push(events)
	if err != nil {
		return nil, nil, err
	}
	message, err := stream.Message()
	return calls, message, err
}

// fakeProvider answers the n-th request with the n-th recorded body, in
// small flushed chunks.
func fakeProvider(bodies [][]byte) (*httptest.Server, *[][]byte) {
	var mu sync.Mutex
	var requests [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, req)
		body := bodies[min(len(requests), len(bodies))-1]
		mu.Unlock()
		w.Header().Set("content-type", "text/event-stream")
		for at := 0; at < len(body); at += 97 {
			w.Write(body[at:min(at+97, len(body))])
			w.(http.Flusher).Flush()
		}
	}))
	return srv, &requests
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
	provider, requests := fakeProvider(bodies)
	defer provider.Close()
	chat := httptest.NewServer(&chatHandler{providerURL: provider.URL, tools: map[string]func(json.RawMessage) (any, error){
		"get_weather": func(in json.RawMessage) (any, error) {
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
			fmt.Println(chunk["toolCallId"], "->", string(output))
		case "tool-output-error":
			fmt.Println(chunk["toolCallId"], "failed:", chunk["errorText"])
		case "finish":
			fmt.Println("steps:", steps, "finish:", chunk["finishReason"])
		}
	}
	fmt.Println("provider requests:", len(*requests))
	// Output:
	// v1
	// toolu_B failed: clock unavailable
	// toolu_A -> {"city":"Paris","temp_c":21}
	// steps: 2 finish: stop
	// [DONE]
	// provider requests: 2
}
