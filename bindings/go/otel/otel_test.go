package ssefoldotel

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	ssefold "github.com/ssefold/ssefold/bindings/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const fixtures = "../../../tests/fixtures/"

// sdk is a tracer and a meter of the SDK with in-memory readers.
type sdk struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tracer trace.Tracer
	meter  metric.Meter
}

func newSDK(t *testing.T) *sdk {
	s := &sdk{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	s.tracer, s.meter = tp.Tracer(ScopeName), mp.Meter(ScopeName)
	return s
}

// span is the one span ended.
func (s *sdk) span(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := s.spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended", len(ended))
	}
	return ended[0]
}

// point is one data point of a histogram, its sum as a float64.
type point struct {
	attrs attribute.Set
	count uint64
	sum   float64
}

// collected is what the reader collected: the histograms by name.
type collected map[string]struct {
	unit, description string
	points            []point
}

func (s *sdk) collect(t *testing.T) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := collected{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
			t.Fatalf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			h := out[m.Name]
			h.unit, h.description = m.Unit, m.Description
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					h.points = append(h.points, point{p.Attributes, p.Count, p.Sum})
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					h.points = append(h.points, point{p.Attributes, p.Count, float64(p.Sum)})
				}
			default:
				t.Fatalf("%s: %T", m.Name, m.Data)
			}
			out[m.Name] = h
		}
	}
	return out
}

// set is an attribute set of key, value pairs (string, int or []string
// values).
func set(kv ...any) attribute.Set {
	var attrs []attribute.KeyValue
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		switch v := kv[i+1].(type) {
		case string:
			attrs = append(attrs, attribute.String(k, v))
		case int:
			attrs = append(attrs, attribute.Int(k, v))
		case []string:
			attrs = append(attrs, attribute.StringSlice(k, v))
		}
	}
	return attribute.NewSet(attrs...)
}

// with is s plus kv.
func with(s attribute.Set, kv ...any) attribute.Set {
	extra := set(kv...)
	return attribute.NewSet(append(s.ToSlice(), extra.ToSlice()...)...)
}

func str(s attribute.Set) string { return string(s.Encoded(attribute.DefaultEncoder())) }

// runTurn runs a turn over a fixture's first n bytes (all of it when n <
// 0), read 64 bytes at a time (so that chunks have gaps between them).
func runTurn(t *testing.T, path string, provider ssefold.Provider, n int) (ssefold.TurnResult, error) {
	t.Helper()
	body, err := os.ReadFile(fixtures + path)
	if err != nil {
		t.Fatal(err)
	}
	if n >= 0 {
		body = body[:n]
	}
	return ssefold.RunTurn(context.Background(), bytes.NewReader(body), provider, nil,
		&ssefold.TurnOptions{NoEvents: true, ChunkSize: 64}).Wait()
}

// checkMetrics: the reader holds exactly the core's metrics of res, each
// recorded once with its attributes plus extra.
func checkMetrics(t *testing.T, got collected, res ssefold.TurnResult, extra ...any) {
	t.Helper()
	want := 0
	for _, m := range res.Telemetry.Metrics {
		attrs := with(attribute.NewSet(attributes(m.Attributes, "")...), extra...)
		h, ok := got[m.Name]
		if !ok || h.unit != m.Unit {
			t.Fatalf("%s: unit %q, want %q", m.Name, h.unit, m.Unit)
		}
		found := false
		for _, p := range h.points {
			if p.attrs.Equals(&attrs) {
				found = true
				if p.count != 1 || math.Abs(p.sum-m.Value) > 1e-9 {
					t.Errorf("%s %s: count %d sum %v, want 1, %v", m.Name, str(attrs), p.count, p.sum, m.Value)
				}
			}
		}
		if !found {
			t.Errorf("%s: no point with %s", m.Name, str(attrs))
		}
		want++
	}
	n := 0
	for _, h := range got {
		n += len(h.points)
	}
	if n != want {
		t.Errorf("%d data points, want %d", n, want)
	}
}

// TestChatTurn: an OpenAI Chat answer of two choices with usage: the span
// `chat {request model}` of kind Client from Start over the turn's
// duration, every attribute (the two finish reasons, the token counts as
// integers), status unset; every metric with its unit, description,
// value and attributes (the request model added).
func TestChatTurn(t *testing.T) {
	res, err := runTurn(t, "openai_chat/reasoning_two_choices.sse", ssefold.OpenAIChat, -1)
	if err != nil {
		t.Fatal(err)
	}
	s := newSDK(t)
	sent := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	parentCtx, parent := s.tracer.Start(context.Background(), "agent")
	if err := Record(parentCtx, s.tracer, s.meter, res, Options{RequestModel: "gpt-4o-mini", Start: sent}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var span sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Ended() {
		if sp.Name() != "agent" {
			span = sp
		}
	}
	if span == nil || span.Name() != "chat gpt-4o-mini" || span.SpanKind() != trace.SpanKindClient {
		t.Fatalf("span %v", span)
	}
	if span.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("not a child of ctx's span")
	}
	if res.Timings.Duration == nil || !span.StartTime().Equal(sent) ||
		!span.EndTime().Equal(sent.Add(*res.Timings.Duration)) {
		t.Errorf("span from %v to %v, duration %v", span.StartTime(), span.EndTime(), res.Timings.Duration)
	}
	want := set("gen_ai.operation.name", "chat", "gen_ai.provider.name", "openai",
		"gen_ai.request.model", "gpt-4o-mini", "gen_ai.response.id", "chatcmpl-1",
		"gen_ai.response.model", "gpt-test", "gen_ai.response.finish_reasons", []string{"stop", "length"},
		"gen_ai.usage.input_tokens", 50, "gen_ai.usage.output_tokens", 20)
	if got := attribute.NewSet(span.Attributes()...); !got.Equals(&want) {
		t.Errorf("attributes\n%s\nwant\n%s", str(got), str(want))
	}
	if span.Status().Code != codes.Unset {
		t.Errorf("status %+v", span.Status())
	}

	got := s.collect(t)
	common := set("gen_ai.operation.name", "chat", "gen_ai.provider.name", "openai",
		"gen_ai.response.model", "gpt-test", "gen_ai.request.model", "gpt-4o-mini")
	units := map[string]string{"gen_ai.client.operation.duration": "s",
		"gen_ai.client.operation.time_to_first_chunk": "s", "gen_ai.client.operation.time_per_output_chunk": "s",
		"gen_ai.client.token.usage": "{token}"}
	if len(got) != len(units) {
		t.Fatalf("%d metrics: %v", len(got), got)
	}
	for name, unit := range units {
		if h := got[name]; h.unit != unit || h.description == "" {
			t.Errorf("%s: unit %q description %q", name, h.unit, h.description)
		}
	}
	tokens := map[string]float64{}
	for _, p := range got["gen_ai.client.token.usage"].points {
		kind, _ := p.attrs.Value("gen_ai.token.type")
		tokens[kind.AsString()] = p.sum
		if base := with(common, "gen_ai.token.type", kind.AsString()); !p.attrs.Equals(&base) {
			t.Errorf("token attributes %s", str(p.attrs))
		}
	}
	if !reflect.DeepEqual(tokens, map[string]float64{"input": 50, "output": 20}) {
		t.Errorf("tokens %v", tokens)
	}
	if d := got["gen_ai.client.operation.duration"].points; len(d) != 1 || !d[0].attrs.Equals(&common) ||
		d[0].sum != res.Timings.Duration.Seconds() {
		t.Errorf("duration %+v, want %v", d, res.Timings.Duration)
	}
	var stats []string
	for _, p := range got["gen_ai.client.operation.time_per_output_chunk"].points {
		stat, _ := p.attrs.Value("ssefold.gap.stat")
		stats = append(stats, stat.AsString())
	}
	sort.Strings(stats)
	if !reflect.DeepEqual(stats, []string{"max", "median", "p95"}) {
		t.Errorf("gap stats %q", stats)
	}
	checkMetrics(t, got, res, "gen_ai.request.model", "gpt-4o-mini")
}

// TestAnthropicTurn: without a request model the span is named after the
// response's model and has no gen_ai.request.model, nor have the metrics.
func TestAnthropicTurn(t *testing.T) {
	res, err := runTurn(t, "anthropic/thinking_text_citations.sse", ssefold.Anthropic, -1)
	if err != nil {
		t.Fatal(err)
	}
	s := newSDK(t)
	before := time.Now()
	if err := Record(context.Background(), s.tracer, s.meter, res, Options{}); err != nil {
		t.Fatal(err)
	}
	span := s.span(t)
	if span.Name() != "chat claude-test" || span.SpanKind() != trace.SpanKindClient ||
		span.Status().Code != codes.Unset {
		t.Fatalf("span %q %v %+v", span.Name(), span.SpanKind(), span.Status())
	}
	if span.EndTime().Before(before) || span.EndTime().Sub(span.StartTime()) != *res.Timings.Duration {
		t.Errorf("span from %v to %v, duration %v", span.StartTime(), span.EndTime(), *res.Timings.Duration)
	}
	want := set("gen_ai.operation.name", "chat", "gen_ai.provider.name", "anthropic",
		"gen_ai.response.id", "msg_01", "gen_ai.response.model", "claude-test",
		"gen_ai.response.finish_reasons", []string{"end_turn"},
		"gen_ai.usage.input_tokens", 10, "gen_ai.usage.output_tokens", 42)
	if got := attribute.NewSet(span.Attributes()...); !got.Equals(&want) {
		t.Errorf("attributes\n%s\nwant\n%s", str(got), str(want))
	}
	got := s.collect(t)
	for _, name := range []string{"gen_ai.client.operation.duration", "gen_ai.client.operation.time_to_first_chunk",
		"gen_ai.client.token.usage"} {
		if len(got[name].points) == 0 {
			t.Errorf("no %s", name)
		}
	}
	checkMetrics(t, got, res)
}

// TestFailedTurn: a body cut early fails the turn with error.type
// "stream": the span's status is Error with the failure's message, and the
// metrics carry error.type.
func TestFailedTurn(t *testing.T) {
	res, err := runTurn(t, "anthropic/thinking_text_citations.sse", ssefold.Anthropic, 900)
	if err == nil || res.Failure == nil || res.Failure.Kind != "stream" {
		t.Fatalf("err %v failure %+v", err, res.Failure)
	}
	s := newSDK(t)
	if err := Record(context.Background(), s.tracer, s.meter, res, Options{RequestModel: "claude-x"}); err != nil {
		t.Fatal(err)
	}
	span := s.span(t)
	if span.Name() != "chat claude-x" {
		t.Errorf("name %q", span.Name())
	}
	if st := span.Status(); st.Code != codes.Error || st.Description != res.Failure.Message ||
		st.Description == "" {
		t.Errorf("status %+v, failure %q", st, res.Failure.Message)
	}
	attrs := attribute.NewSet(span.Attributes()...)
	if v, _ := attrs.Value("error.type"); v.AsString() != "stream" {
		t.Errorf("error.type %q", v.AsString())
	}
	if _, ok := attrs.Value("gen_ai.response.finish_reasons"); ok {
		t.Error("finish reasons of an answer without a stop")
	}
	got := s.collect(t)
	d := got["gen_ai.client.operation.duration"].points
	if len(d) != 1 {
		t.Fatalf("duration %+v", d)
	}
	if v, _ := d[0].attrs.Value("error.type"); v.AsString() != "stream" {
		t.Errorf("duration attributes %s", str(d[0].attrs))
	}
	checkMetrics(t, got, res, "gen_ai.request.model", "claude-x")
}

// TestAbortedTurn: an aborted turn has error.type "aborted" and an Error
// status.
func TestAbortedTurn(t *testing.T) {
	body, err := os.ReadFile(fixtures + "anthropic/thinking_text_citations.sse")
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	turn := ssefold.RunTurn(context.Background(), r, ssefold.Anthropic, nil, &ssefold.TurnOptions{NoEvents: true})
	w.Write(body[:400])
	turn.Abort("stop")
	res, _ := turn.Wait()
	w.Close()
	s := newSDK(t)
	if err := Record(context.Background(), s.tracer, s.meter, res, Options{}); err != nil {
		t.Fatal(err)
	}
	span := s.span(t)
	attrs := attribute.NewSet(span.Attributes()...)
	if v, _ := attrs.Value("error.type"); v.AsString() != "aborted" || span.Status().Code != codes.Error {
		t.Errorf("error.type %q status %+v (aborted %v)", v.AsString(), span.Status(), res.Aborted)
	}
	checkMetrics(t, s.collect(t), res)
}

// chatWithUsage is an OpenAI Chat answer with usage.
var chatWithUsage = []string{
	`data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,"choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n",
	`data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,"choices":[{"index":0,"delta":{"content":" there"}}]}` + "\n\n",
	`data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
	`data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}` + "\n\ndata: [DONE]\n\n",
}

// TestTimesOnTheHostsClock: a turn driven by hand on a clock of its own
// (request at 0, chunks at 250, 300 and 400 ms, the end at 400): the exact
// seconds of every metric, the span's end 400 ms after Start.
func TestTimesOnTheHostsClock(t *testing.T) {
	turn, err := ssefold.NewAgentTurn(&ssefold.AgentTurnConfig{Provider: ssefold.OpenAIChat})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	turn.RequestSent(0)
	turn.Connected(100)
	for i, at := range []uint64{250, 300, 400, 400} {
		if _, err := turn.Feed([]byte(chatWithUsage[i]), at); err != nil {
			t.Fatal(err)
		}
	}
	turn.EndOfBody(400)
	res, err := turn.Outcome()
	if err != nil {
		t.Fatal(err)
	}
	s := newSDK(t)
	sent := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	if err := Record(context.Background(), s.tracer, s.meter, res, Options{RequestModel: "gpt-x-req", Start: sent}); err != nil {
		t.Fatal(err)
	}
	span := s.span(t)
	if !span.StartTime().Equal(sent) || !span.EndTime().Equal(sent.Add(400*time.Millisecond)) {
		t.Errorf("span from %v to %v", span.StartTime(), span.EndTime())
	}
	got := s.collect(t)
	values := map[string]float64{}
	for name, h := range got {
		for _, p := range h.points {
			key := name
			for _, k := range []attribute.Key{"gen_ai.token.type", "ssefold.gap.stat"} {
				if v, ok := p.attrs.Value(k); ok {
					key += " " + v.AsString()
				}
			}
			values[key] = p.sum
		}
	}
	want := map[string]float64{"gen_ai.client.operation.duration": 0.4,
		"gen_ai.client.operation.time_to_first_chunk": 0.25,
		"gen_ai.client.token.usage input":             4, "gen_ai.client.token.usage output": 2,
		// the gaps between contents: 50 ms (250 to 300), 100 ms (300 to 400)
		"gen_ai.client.operation.time_per_output_chunk median": 0.05,
		"gen_ai.client.operation.time_per_output_chunk p95":    0.1,
		"gen_ai.client.operation.time_per_output_chunk max":    0.1}
	if !reflect.DeepEqual(values, want) {
		t.Errorf("values %v\nwant %v", values, want)
	}
	checkMetrics(t, got, res, "gen_ai.request.model", "gpt-x-req")
}

// countingMeter counts the histograms asked of a meter.
type countingMeter struct {
	metric.Meter
	float64s, int64s int
}

func (m *countingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	m.float64s++
	return m.Meter.Float64Histogram(name, opts...)
}

func (m *countingMeter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	m.int64s++
	return m.Meter.Int64Histogram(name, opts...)
}

// TestInstrumentsOncePerMeter: Record creates a meter's four instruments
// on its first call only; a nil tracer records no span, a nil meter no
// metric.
func TestInstrumentsOncePerMeter(t *testing.T) {
	res, err := runTurn(t, "openai_chat/reasoning_two_choices.sse", ssefold.OpenAIChat, -1)
	if err != nil {
		t.Fatal(err)
	}
	s := newSDK(t)
	m := &countingMeter{Meter: s.meter}
	for range 3 {
		if err := Record(context.Background(), nil, m, res, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if m.float64s != 3 || m.int64s != 1 {
		t.Errorf("%d float64 and %d int64 histograms made", m.float64s, m.int64s)
	}
	for name, h := range s.collect(t) {
		for _, p := range h.points {
			if p.count != 3 {
				t.Errorf("%s %s: %d records", name, str(p.attrs), p.count)
			}
		}
	}
	if n := len(s.spans.Ended()); n != 0 {
		t.Errorf("%d spans without a tracer", n)
	}

	r, err := NewRecorder(s.tracer, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Record(context.Background(), res, Options{})
	if len(s.spans.Ended()) != 1 {
		t.Error("no span")
	}
	for name, h := range s.collect(t) {
		for _, p := range h.points {
			if p.count != 3 {
				t.Errorf("%s recorded without a meter", name)
			}
		}
	}
}

// TestValuesAsTheCoreTypedThem: attribute values of every JSON type, and
// a metric this package does not know (recorded on a histogram of its
// own with the core's unit).
func TestValuesAsTheCoreTypedThem(t *testing.T) {
	res := ssefold.TurnResult{Telemetry: ssefold.TurnTelemetry{
		Attributes: map[string]any{"gen_ai.operation.name": "embeddings", "s": "x", "i": int64(3), "f": 0.5,
			"b": true, "ss": []string{"a"}, "is": []any{int64(1), int64(2)}, "fs": []any{0.5},
			"bs": []any{true}, "mixed": []any{"a", int64(1)}, "obj": map[string]any{"k": "v"}},
		Metrics: []ssefold.TelemetryMetric{{Name: "gen_ai.client.future", Unit: "ms", Value: 7,
			Attributes: map[string]any{"k": "v"}}},
	}}
	s := newSDK(t)
	if err := Record(context.Background(), s.tracer, s.meter, res, Options{}); err != nil {
		t.Fatal(err)
	}
	span := s.span(t)
	want := attribute.NewSet(attribute.String("gen_ai.operation.name", "embeddings"), attribute.String("s", "x"),
		attribute.Int64("i", 3), attribute.Float64("f", 0.5), attribute.Bool("b", true),
		attribute.StringSlice("ss", []string{"a"}), attribute.Int64Slice("is", []int64{1, 2}),
		attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{true}),
		attribute.String("mixed", `["a",1]`), attribute.String("obj", `{"k":"v"}`))
	if got := attribute.NewSet(span.Attributes()...); span.Name() != "embeddings" || !got.Equals(&want) {
		t.Errorf("%q\n%s\nwant\n%s", span.Name(), str(got), str(want))
	}
	if span.Status().Code != codes.Unset {
		t.Errorf("status %+v", span.Status())
	}
	got := s.collect(t)
	if h := got["gen_ai.client.future"]; h.unit != "ms" || len(h.points) != 1 || h.points[0].sum != 7 {
		t.Errorf("%+v", h)
	}
	checkMetrics(t, got, res)
}

// refusingMeter refuses every instrument.
type refusingMeter struct{ metric.Meter }

var errRefused = errors.New("refused")

func (m refusingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	h, _ := m.Meter.Float64Histogram(name, opts...)
	return h, errRefused
}

// TestRefusedInstrument: a meter's error comes back from Record, and
// what it returned is recorded on all the same.
func TestRefusedInstrument(t *testing.T) {
	res, err := runTurn(t, "openai_chat/reasoning_two_choices.sse", ssefold.OpenAIChat, -1)
	if err != nil {
		t.Fatal(err)
	}
	s := newSDK(t)
	if err := Record(context.Background(), s.tracer, refusingMeter{s.meter}, res, Options{}); !errors.Is(err, errRefused) {
		t.Fatalf("err %v", err)
	}
	checkMetrics(t, s.collect(t), res)
}

// TestConcurrentRecords: Record and a Recorder are safe from several
// goroutines at once (the meter's cache, a metric made on first use).
func TestConcurrentRecords(t *testing.T) {
	res, err := runTurn(t, "openai_chat/reasoning_two_choices.sse", ssefold.OpenAIChat, -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Telemetry.Metrics = append(res.Telemetry.Metrics, ssefold.TelemetryMetric{Name: "gen_ai.client.future",
		Unit: "s", Value: 1})
	s := newSDK(t)
	r, err := NewRecorder(s.tracer, s.meter)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			Record(context.Background(), s.tracer, s.meter, res, Options{})
		}()
		go func() {
			defer wg.Done()
			r.Record(context.Background(), res, Options{})
		}()
	}
	wg.Wait()
	if n := len(s.spans.Ended()); n != 16 {
		t.Errorf("%d spans", n)
	}
	for name, h := range s.collect(t) {
		for _, p := range h.points {
			if p.count != 16 {
				t.Errorf("%s %s: %d records", name, str(p.attrs), p.count)
			}
		}
	}
}
