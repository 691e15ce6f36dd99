package ssefold_test

import (
	"fmt"
	"strings"

	ssefold "github.com/ssefold/ssefold/bindings/go"
)

const body = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}

event: message_stop
data: {"type":"message_stop"}

`

func ExampleReadEvents() {
	err := ssefold.ReadEvents(strings.NewReader(body), ssefold.Auto, func(e ssefold.StreamEvent) error {
		if e.Kind == ssefold.KindTextDelta {
			fmt.Printf("part %d: %q\n", e.Part, e.Text)
		}
		return nil
	})
	fmt.Println(err)
	// Output:
	// part 0: "Hello"
	// part 0: ", world"
	// <nil>
}

func ExampleFold() {
	msg, err := ssefold.Fold(strings.NewReader(body), ssefold.Anthropic)
	fmt.Println(string(msg), err)
	// Output:
	// {"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hello, world"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":3},"stop_details":null} <nil>
}

func ExampleParsePartialJSON() {
	v, ok, err := ssefold.ParsePartialJSON(`{"city": "Par`, true)
	fmt.Println(string(v), ok, err)
	// Output: {"city":"Par"} true <nil>
}
