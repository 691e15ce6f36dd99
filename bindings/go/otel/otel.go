// Package ssefoldotel records a turn of ssefold (ssefold.TurnResult) to
// OpenTelemetry: one client span `chat {model}` and the GenAI client
// metrics, named after the OpenTelemetry GenAI semantic conventions.
//
// The names and values come from the core, which writes them once for
// every binding (TurnResult.Telemetry); this package only moves them onto a
// trace.Tracer and a metric.Meter. It is a module of its own
// (github.com/ssefold/ssefold/bindings/go/otel), so the ssefold package
// itself depends on nothing.
//
// Call Record after Turn.Wait, with the time the request was sent:
//
//	sent := time.Now()
//	res, err := ssefold.RunTurnHTTP(ctx, ssefold.Anthropic, tools, opts).Wait()
//	ssefoldotel.Record(ctx, tracer, meter, res, ssefoldotel.Options{RequestModel: "claude-sonnet-4-5", Start: sent})
//
// The span (kind Client) is named `{gen_ai.operation.name}
// {Options.RequestModel}` ("chat claude-sonnet-4-5"), the response's model
// when no request model is given, or just "chat". Its attributes are
// gen_ai.request.model (Options.RequestModel) and every attribute of
// TurnResult.Telemetry: gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.response.id, gen_ai.response.model,
// gen_ai.response.finish_reasons, gen_ai.usage.input_tokens and
// gen_ai.usage.output_tokens, and error.type when the turn failed or was
// aborted (the span's status is then Error). It starts at Options.Start
// and lasts the turn's duration (TurnResult.Timings.Duration).
//
// Each metric of TurnResult.Telemetry is recorded on its histogram with its
// attributes plus gen_ai.request.model:
// gen_ai.client.operation.duration, gen_ai.client.operation.time_to_first_chunk
// and gen_ai.client.operation.time_per_output_chunk (float64, seconds;
// the chunk gaps as their median, 95th percentile and largest value, told
// apart by ssefold.gap.stat) and gen_ai.client.token.usage (int64,
// {token}; input and output, told apart by gen_ai.token.type). The
// histograms have the conventions' advisory bucket boundaries.
package ssefoldotel

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"sync"
	"time"

	ssefold "github.com/ssefold/ssefold/bindings/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// The names of the core's metrics this package makes instruments for up
// front (src/agent/telemetry.rs names them all), and of the attributes it
// reads or adds.
const (
	metricDuration    = "gen_ai.client.operation.duration"
	metricFirstChunk  = "gen_ai.client.operation.time_to_first_chunk"
	metricPerChunk    = "gen_ai.client.operation.time_per_output_chunk"
	metricTokenUsage  = "gen_ai.client.token.usage"
	attrRequestModel  = "gen_ai.request.model"
	attrOperationName = "gen_ai.operation.name"
	attrResponseModel = "gen_ai.response.model"
	attrErrorType     = "error.type"
	defaultOperation  = "chat"
	secondsUnit       = "s"
	tokenUnit         = "{token}"
)

// ScopeName is the instrumentation scope to name a tracer and a meter
// after: tracerProvider.Tracer(ssefoldotel.ScopeName).
const ScopeName = "github.com/ssefold/ssefold/bindings/go/otel"

var (
	// secondsBuckets: 10 ms to 82 s, doubling (the conventions' advice for
	// gen_ai.client.operation.duration).
	secondsBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
		40.96, 81.92}
	// tokenBuckets: 1 to 64 Mi tokens, by fours (the conventions' advice
	// for gen_ai.client.token.usage).
	tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
		16777216, 67108864}
)

// Options are what the result does not know.
type Options struct {
	// RequestModel is the model the request asked for (gen_ai.request.model
	// and the span's name; "": left out).
	RequestModel string
	// Start is when the request was sent (the wall clock): the span starts
	// there and ends TurnResult.Timings.Duration later (now when the turn
	// has no duration). Zero: the span ends now and starts the duration
	// before.
	Start time.Time
}

// Recorder records turns on one tracer and one meter, its instruments
// created once. Safe for concurrent use.
type Recorder struct {
	tracer trace.Tracer
	inst   *instruments
}

// instruments are the histograms of one meter.
type instruments struct {
	meter   metric.Meter
	seconds map[string]metric.Float64Histogram
	tokens  metric.Int64Histogram
	mu      sync.Mutex
	others  map[string]metric.Float64Histogram
}

// NewRecorder makes a Recorder. A nil tracer records no span, a nil meter
// no metric. The error is one of the meter's when it refused an
// instrument (the Recorder still records on the others).
func NewRecorder(tracer trace.Tracer, meter metric.Meter) (*Recorder, error) {
	r := &Recorder{tracer: tracer}
	if meter == nil {
		return r, nil
	}
	inst, err := newInstruments(meter)
	r.inst = inst
	return r, err
}

func newInstruments(meter metric.Meter) (*instruments, error) {
	inst := &instruments{meter: meter, seconds: map[string]metric.Float64Histogram{},
		others: map[string]metric.Float64Histogram{}}
	var errs []error
	for _, h := range []struct{ name, desc string }{
		{metricDuration, "GenAI operation duration: from the first request to the end of the stream."},
		{metricFirstChunk, "Time to receive the first chunk, from the first request to the first content."},
		{metricPerChunk, "Time between output chunks: the median, 95th percentile and largest gap of a " +
			"turn (ssefold.gap.stat)."},
	} {
		f, err := meter.Float64Histogram(h.name, metric.WithUnit(secondsUnit), metric.WithDescription(h.desc),
			metric.WithExplicitBucketBoundaries(secondsBuckets...))
		errs = append(errs, err)
		inst.seconds[h.name] = f
	}
	tokens, err := meter.Int64Histogram(metricTokenUsage, metric.WithUnit(tokenUnit),
		metric.WithDescription("Number of input and output tokens used."),
		metric.WithExplicitBucketBoundaries(tokenBuckets...))
	inst.tokens = tokens
	return inst, errors.Join(append(errs, err)...)
}

// histogram is the Float64Histogram of a metric: one of the durations, or
// one the core reports that this package does not know yet, made on its
// first use with the core's unit (nil when the meter gave none).
func (inst *instruments) histogram(m ssefold.TelemetryMetric) metric.Float64Histogram {
	if h, ok := inst.seconds[m.Name]; ok {
		return h
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if h, ok := inst.others[m.Name]; ok {
		return h
	}
	h, _ := inst.meter.Float64Histogram(m.Name, metric.WithUnit(m.Unit)) // an error is the SDK's to report
	inst.others[m.Name] = h
	return h
}

// recorders caches the instruments of each meter Record was given.
var recorders sync.Map

// Record records res on tracer and meter (either may be nil) as a
// Recorder of theirs would; the instruments of each meter are created
// once and kept for the life of the program (NewRecorder for meters that
// come and go). The error is one of the meter's when it refused an
// instrument; whatever it accepted is recorded.
func Record(ctx context.Context, tracer trace.Tracer, meter metric.Meter, res ssefold.TurnResult, opts Options) error {
	r := &Recorder{tracer: tracer}
	var err error
	if meter != nil {
		r.inst, err = cachedInstruments(meter)
	}
	r.Record(ctx, res, opts)
	return err
}

// cachedInstruments returns the instruments of meter, made on its first
// use (every time for a meter that cannot be a map key).
func cachedInstruments(meter metric.Meter) (*instruments, error) {
	if !reflect.ValueOf(meter).Comparable() {
		return newInstruments(meter)
	}
	if inst, ok := recorders.Load(meter); ok {
		return inst.(*instruments), nil
	}
	inst, err := newInstruments(meter)
	if err != nil {
		return inst, err // not kept: the next call asks again
	}
	got, _ := recorders.LoadOrStore(meter, inst)
	return got.(*instruments), nil
}

// Record records res: the span (a child of ctx's span) and the metrics.
func (r *Recorder) Record(ctx context.Context, res ssefold.TurnResult, opts Options) {
	tel := res.Telemetry
	if r.tracer != nil {
		r.span(ctx, res, opts)
	}
	if r.inst == nil {
		return
	}
	for _, m := range tel.Metrics {
		attrs := attributes(m.Attributes, opts.RequestModel)
		set := metric.WithAttributeSet(attribute.NewSet(attrs...))
		if m.Name == metricTokenUsage {
			if r.inst.tokens != nil {
				r.inst.tokens.Record(ctx, int64(m.Value), set)
			}
		} else if h := r.inst.histogram(m); h != nil {
			h.Record(ctx, m.Value, set)
		}
	}
}

// span creates and ends the turn's span.
func (r *Recorder) span(ctx context.Context, res ssefold.TurnResult, opts Options) {
	tel := res.Telemetry
	op, _ := tel.Attributes[attrOperationName].(string)
	if op == "" {
		op = defaultOperation
	}
	name := op
	if model, _ := tel.Attributes[attrResponseModel].(string); opts.RequestModel != "" {
		name += " " + opts.RequestModel
	} else if model != "" {
		name += " " + model
	}
	start, end := opts.Start, time.Now()
	switch d := res.Timings.Duration; {
	case !start.IsZero() && d != nil:
		end = start.Add(*d)
	case start.IsZero() && d != nil:
		start = end.Add(-*d)
	case start.IsZero():
		start = end
	}
	_, span := r.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
		trace.WithAttributes(attributes(tel.Attributes, opts.RequestModel)...))
	if errType, ok := tel.Attributes[attrErrorType].(string); ok {
		desc := errType
		if res.Failure != nil && res.Failure.Message != "" {
			desc = res.Failure.Message
		}
		span.SetStatus(codes.Error, desc)
	}
	span.End(trace.WithTimestamp(end))
}

// attributes are the attributes of values (as the core typed them: see
// ssefold.TurnTelemetry), sorted by key, with gen_ai.request.model when
// requestModel is not "".
func attributes(values map[string]any, requestModel string) []attribute.KeyValue {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]attribute.KeyValue, 0, len(keys)+1)
	if requestModel != "" {
		out = append(out, attribute.String(attrRequestModel, requestModel))
	}
	for _, k := range keys {
		out = append(out, attributeOf(k, values[k]))
	}
	return out
}

// attributeOf is one attribute: strings, integers, floats, booleans and
// arrays of one of them as themselves, anything else as its JSON text.
func attributeOf(k string, v any) attribute.KeyValue {
	switch v := v.(type) {
	case string:
		return attribute.String(k, v)
	case int64:
		return attribute.Int64(k, v)
	case float64:
		return attribute.Float64(k, v)
	case bool:
		return attribute.Bool(k, v)
	case []string:
		return attribute.StringSlice(k, v)
	case []any:
		if kv, ok := sliceAttribute(k, v); ok {
			return kv
		}
	}
	text, _ := json.Marshal(v)
	return attribute.String(k, string(text))
}

// sliceAttribute is an array whose elements are all int64, all float64
// or all bool as a slice attribute.
func sliceAttribute(k string, v []any) (attribute.KeyValue, bool) {
	if len(v) == 0 {
		return attribute.KeyValue{}, false
	}
	switch v[0].(type) {
	case int64:
		return typedSlice(k, v, attribute.Int64Slice)
	case float64:
		return typedSlice(k, v, attribute.Float64Slice)
	case bool:
		return typedSlice(k, v, attribute.BoolSlice)
	}
	return attribute.KeyValue{}, false
}

func typedSlice[T any](k string, v []any, kv func(string, []T) attribute.KeyValue) (attribute.KeyValue, bool) {
	out := make([]T, len(v))
	for i, e := range v {
		t, ok := e.(T)
		if !ok {
			return attribute.KeyValue{}, false
		}
		out[i] = t
	}
	return kv(k, out), true
}
