package ssefoldotel_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	ssefold "github.com/ssefold/ssefold/bindings/go"
	ssefoldotel "github.com/ssefold/ssefold/bindings/go/otel"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// record waits for a turn and records it on the global tracer and meter
// providers; sent is when its request went out, model what it asked for.
func record(ctx context.Context, turn *ssefold.Turn, sent time.Time, model string) (ssefold.TurnResult, error) {
	res, err := turn.Wait()
	tracer, meter := otel.Tracer(ssefoldotel.ScopeName), otel.Meter(ssefoldotel.ScopeName)
	opts := ssefoldotel.Options{RequestModel: model, Start: sent}
	if rerr := ssefoldotel.Record(ctx, tracer, meter, res, opts); rerr != nil {
		otel.Handle(rerr) // a meter that refused an instrument
	}
	return res, err
}

func ExampleRecord() {
	spans, reader := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))

	body, err := os.Open("../../../tests/fixtures/openai_chat/reasoning_two_choices.sse")
	if err != nil {
		panic(err)
	}
	defer body.Close()
	ctx := context.Background()
	sent := time.Now()
	turn := ssefold.RunTurn(ctx, body, ssefold.OpenAIChat, nil, &ssefold.TurnOptions{NoEvents: true})
	if _, err := record(ctx, turn, sent, "gpt-4o-mini"); err != nil {
		panic(err)
	}

	span := spans.Ended()[0]
	fmt.Println(span.Name(), span.SpanKind())
	for _, kv := range span.Attributes() {
		fmt.Println(kv.Key, kv.Value.Emit())
	}
	var rm metricdata.ResourceMetrics
	reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if h, ok := m.Data.(metricdata.Histogram[int64]); ok {
			tokens := map[string]int64{}
			for _, p := range h.DataPoints {
				kind, _ := p.Attributes.Value("gen_ai.token.type")
				tokens[kind.AsString()] = p.Sum
			}
			fmt.Println(m.Name, m.Unit, "input", tokens["input"], "output", tokens["output"])
		}
	}
	// Output:
	// chat gpt-4o-mini client
	// gen_ai.request.model gpt-4o-mini
	// gen_ai.operation.name chat
	// gen_ai.provider.name openai
	// gen_ai.response.finish_reasons ["stop","length"]
	// gen_ai.response.id chatcmpl-1
	// gen_ai.response.model gpt-test
	// gen_ai.usage.input_tokens 50
	// gen_ai.usage.output_tokens 20
	// gen_ai.client.token.usage {token} input 50 output 20
}

// TestReadmeShowsTheExample: the README's code is record above, word for
// word.
func TestReadmeShowsTheExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(src), "// record waits")
	end := strings.Index(string(src), "\nfunc ExampleRecord")
	if start < 0 || end < start {
		t.Fatal("record not found")
	}
	if fn := string(src[start:end]); !strings.Contains(string(readme), "```go\n"+fn+"```") {
		t.Errorf("README.md does not show record as example_test.go has it:\n%s", fn)
	}
}
