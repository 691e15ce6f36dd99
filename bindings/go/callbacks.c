// C trampolines for the cgo callbacks: ssefold passes user_data back
// untouched; here it carries a runtime/cgo.Handle (uintptr_t).
#include <stdint.h>
#include "ssefold_go.h"
#include "_cgo_export.h"

static int sse_trampoline(void *user_data, const struct ssefold_sse_event *event) {
	return goSseEvent((uintptr_t)user_data, (struct ssefold_sse_event *)event);
}

static void stream_trampoline(void *user_data, const struct ssefold_stream_event *event) {
	goStreamEvent((uintptr_t)user_data, (struct ssefold_stream_event *)event);
}

static void path_trampoline(void *user_data, const struct ssefold_path_event *event) {
	goPathEvent((uintptr_t)user_data, (struct ssefold_path_event *)event);
}

static void agent_trampoline(void *user_data, const struct ssefold_stream_event *stream_event,
                             const struct ssefold_tool_event *tool_event) {
	goAgentEvent((uintptr_t)user_data, (struct ssefold_stream_event *)stream_event,
	             (struct ssefold_tool_event *)tool_event);
}

ssefold_result ssefold_go_decoder_set_callback(struct ssefold_sse_decoder *d, uintptr_t h) {
	return ssefold_sse_decoder_set_callback(d, sse_trampoline, (void *)h);
}

ssefold_result ssefold_go_stream_set_callback(struct ssefold_stream *s, uintptr_t h, bool event_json) {
	return ssefold_stream_set_callback(s, stream_trampoline, (void *)h, event_json);
}

ssefold_result ssefold_go_partial_json_set_callback(struct ssefold_partial_json *p, uintptr_t h, bool container_values) {
	return ssefold_partial_json_set_callback(p, path_trampoline, (void *)h, container_values);
}

ssefold_result ssefold_go_agent_turn_set_callback(struct ssefold_agent_turn *t, uintptr_t h, bool event_json) {
	return ssefold_agent_turn_set_callback(t, agent_trampoline, (void *)h, event_json);
}
