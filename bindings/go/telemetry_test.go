package ssefold

import (
	"reflect"
	"strings"
	"testing"
)

// chatWithUsage is an OpenAI Chat answer with usage, fed at 250, 300 and
// 400 ms after a request sent at 0.
var chatWithUsage = []string{
	`data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,"choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n",
	`data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
	`data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}` + "\n\ndata: [DONE]\n\n",
}

// TestTurnTelemetry: the outcome's telemetry reaches TurnResult as the core
// wrote it, its JSON types kept (strings, int64 token counts, a []string of
// finish reasons, float64 seconds).
func TestTurnTelemetry(t *testing.T) {
	turn, err := NewAgentTurn(&AgentTurnConfig{Provider: OpenAIChat})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	turn.RequestSent(0)
	turn.Connected(100)
	for i, at := range []uint64{250, 300, 400} {
		if _, err := turn.Feed([]byte(chatWithUsage[i]), at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := turn.EndOfBody(400); err != nil {
		t.Fatal(err)
	}
	res, err := turn.Outcome()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.response.id": "chatcmpl-9", "gen_ai.response.model": "gpt-x",
		"gen_ai.response.finish_reasons": []string{"stop"},
		"gen_ai.usage.input_tokens":      int64(4), "gen_ai.usage.output_tokens": int64(2)}
	if !reflect.DeepEqual(res.Telemetry.Attributes, want) {
		t.Fatalf("attributes %#v", res.Telemetry.Attributes)
	}
	common := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.response.model": "gpt-x"}
	with := func(k, v string) map[string]any {
		a := map[string]any{k: v}
		for k, v := range common {
			a[k] = v
		}
		return a
	}
	wantMetrics := []TelemetryMetric{
		{"gen_ai.client.operation.duration", "s", 0.4, common},
		{"gen_ai.client.operation.time_to_first_chunk", "s", 0.25, common},
		{"gen_ai.client.token.usage", "{token}", 4, with("gen_ai.token.type", "input")},
		{"gen_ai.client.token.usage", "{token}", 2, with("gen_ai.token.type", "output")},
	}
	var gaps []TelemetryMetric
	for _, m := range res.Telemetry.Metrics {
		if m.Name == "gen_ai.client.operation.time_per_output_chunk" {
			gaps = append(gaps, m)
		}
	}
	if n := len(res.Telemetry.Metrics) - len(gaps); n != len(wantMetrics) ||
		!reflect.DeepEqual(res.Telemetry.Metrics[:n], wantMetrics) {
		t.Fatalf("metrics %+v", res.Telemetry.Metrics)
	}
	var stats []string
	for _, g := range gaps {
		stats = append(stats, g.Attributes["ssefold.gap.stat"].(string))
		if g.Unit != "s" || g.Attributes["gen_ai.response.model"] != "gpt-x" {
			t.Fatalf("gap %+v", g)
		}
	}
	if strings.Join(stats, ",") != "median,p95,max" {
		t.Fatalf("gap stats %q", stats)
	}
}

// TestTurnTelemetryValues: what each JSON value becomes.
func TestTurnTelemetryValues(t *testing.T) {
	var tel TurnTelemetry
	doc := `{"attributes": {"s": "x", "i": 7, "f": 0.5, "b": true, "ss": ["a", "b"], "mixed": ["a", 1], "none": []},
		"metrics": [{"name": "m", "unit": "s", "value": 1.5, "attributes": {}}]}`
	if err := tel.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"s": "x", "i": int64(7), "f": 0.5, "b": true, "ss": []string{"a", "b"},
		"mixed": []any{"a", int64(1)}, "none": []string{}}
	if !reflect.DeepEqual(tel.Attributes, want) {
		t.Fatalf("%#v", tel.Attributes)
	}
	if len(tel.Metrics) != 1 || tel.Metrics[0].Value != 1.5 || tel.Metrics[0].Attributes != nil {
		t.Fatalf("%+v", tel.Metrics)
	}
}
