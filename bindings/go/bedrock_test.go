package ssefold

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
)

// esMessage is one AWS event-stream message with string headers, built
// from the format's definition.
func esMessage(headers [][2]string, payload []byte) []byte {
	var h []byte
	for _, kv := range headers {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7)
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	m := binary.BigEndian.AppendUint32(nil, uint32(12+len(h)+len(payload)+4))
	m = binary.BigEndian.AppendUint32(m, uint32(len(h)))
	m = binary.BigEndian.AppendUint32(m, crc32.ChecksumIEEE(m))
	m = append(append(m, h...), payload...)
	return binary.BigEndian.AppendUint32(m, crc32.ChecksumIEEE(m))
}

func converseEvent(eventType, payload string) []byte {
	return esMessage([][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}}, []byte(payload))
}

func converseBody() []byte {
	return bytes.Join([][]byte{
		converseEvent("messageStart", `{"role":"assistant"}`),
		converseEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hello"}}`),
		converseEvent("contentBlockStop", `{"contentBlockIndex":0}`),
		converseEvent("contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}`),
		converseEvent("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\":"}}}`),
		converseEvent("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"1}"}}}`),
		converseEvent("contentBlockStop", `{"contentBlockIndex":1}`),
		converseEvent("messageStop", `{"stopReason":"tool_use"}`),
		converseEvent("metadata", `{"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3},"metrics":{"latencyMs":4}}`),
	}, nil)
}

func TestBedrockConverseFoldsInAnyChunking(t *testing.T) {
	want := `{"output":{"message":{"role":"assistant","content":[{"text":"Hello"},{"toolUse":{"toolUseId":"t1","name":"f","input":{"a":1}}}]}},
		"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3},"metrics":{"latencyMs":4}}`
	body := converseBody()
	for _, p := range []Provider{BedrockConverse, Auto} {
		for _, size := range []int{1, 7, len(body)} {
			_, msg, err := foldChunks(t, p, body, func() int { return size })
			if err != nil {
				t.Fatalf("%v, chunk %d: %v", p, size, err)
			}
			if !jsonEqual(t, msg, []byte(want)) {
				t.Fatalf("%v, chunk %d: %s", p, size, msg)
			}
		}
	}
	s, err := NewStream(Auto, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Feed(body); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Status(); p != BedrockConverse || p.String() != "bedrock_converse" {
		t.Fatalf("provider %v", p)
	}
}

func TestBedrockExceptionsAndBrokenFraming(t *testing.T) {
	exception := esMessage([][2]string{{":exception-type", "throttlingException"}, {":message-type", "exception"}}, []byte(`{"message":"slow down"}`))
	start := converseEvent("messageStart", `{"role":"assistant"}`)
	_, _, err := foldChunks(t, BedrockConverse, append(start, exception...), func() int { return 5 })
	var e *Error
	if !errors.Is(err, ErrRetryableProviderError) || !errors.As(err, &e) {
		t.Fatalf("throttling: %v", err)
	}
	broken := converseBody()
	broken[30] ^= 1
	_, _, err = foldChunks(t, BedrockConverse, broken, func() int { return 1 << 20 })
	if !errors.Is(err, ErrInvalidInput) || !errors.As(err, &e) || e.Code != ResultStreamEventStream {
		t.Fatalf("CRC mismatch: %v", err)
	}
	var events []json.RawMessage
	events, _, err = foldChunks(t, Bedrock, converseBody(), func() int { return 1 << 20 })
	if !errors.Is(err, ErrDialectMismatch) || len(events) != 0 {
		t.Fatalf("Converse body given to Bedrock: %v %d", err, len(events))
	}
}

func TestBedrockEventStreamLimitsAreOptions(t *testing.T) {
	body := append(converseEvent("messageStart", `{"role":"assistant"}`),
		converseEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"`+strings.Repeat("x", 4096)+`"}}`)...)
	for _, tc := range []struct {
		name   string
		opts   StreamOptions
		ok     bool
		before int // events before the error
	}{
		{"defaults", StreamOptions{}, true, 0},
		// The first message fits, the 4 KiB one does not.
		{"message limit", StreamOptions{EventStream: EventStreamLimits{MaxMessageLen: 1024}}, false, 1},
		// Every message's headers are longer.
		{"headers limit", StreamOptions{EventStream: EventStreamLimits{MaxHeadersLen: 16}}, false, 0},
	} {
		s, err := NewStream(BedrockConverse, &tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		events, err := s.Feed(body)
		var e *Error
		switch {
		case tc.ok && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case !tc.ok && (!errors.As(err, &e) || e.Code != ResultStreamEventStream):
			t.Fatalf("%s: want an event-stream error, got %v", tc.name, err)
		case !tc.ok && (len(events) != tc.before || (tc.before == 1 && events[0].Kind != KindMessageStart)):
			t.Fatalf("%s: the events before the error: %v", tc.name, events)
		}
		s.Close()
	}
}
