/* Strict C99 smoke test of the header and library (shared and static):
 * decode a stream fed byte by byte, encode it back, check the reconnect
 * policy. Exit status 0 on success. */
#include <stdio.h>
#include <string.h>

#include "ssefold.h"

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                  \
    }                                                            \
  } while (0)

struct collected {
  char text[256];
  size_t len;
  int events;
};

static int on_event(void *user_data, const ssefold_sse_event *event) {
  struct collected *c = (struct collected *)user_data;
  if (c->len + event->data.len + 1 < sizeof c->text) {
    memcpy(c->text + c->len, event->data.ptr, event->data.len);
    c->len += event->data.len;
    c->text[c->len++] = '|';
  }
  c->events++;
  return 0;
}

int main(void) {
  static const char stream[] = "id: 1\ndata: hello\n\n: ping\nevent: x\ndata: a\ndata: b\n\nretry: 250\n\n";
  struct collected c;
  ssefold_sse_decoder *dec = NULL;
  ssefold_sse_encoder *enc = NULL;
  ssefold_sse_end end;
  ssefold_str id;
  ssefold_bytes bytes;
  ssefold_reconnect_policy policy;
  uint64_t ms = 0;
  bool has = false;
  size_t i, consumed = 0;

  memset(&c, 0, sizeof c);
  CHECK(strcmp(ssefold_version(), SSEFOLD_VERSION) == 0);
  CHECK(ssefold_sse_decoder_new(NULL, &dec) == SSEFOLD_RESULT_OK);
  CHECK(ssefold_sse_decoder_set_callback(dec, on_event, &c) == SSEFOLD_RESULT_OK);
  for (i = 0; i < sizeof stream - 1; i++) {
    CHECK(ssefold_sse_decoder_feed(dec, (const uint8_t *)stream + i, 1, &consumed) == SSEFOLD_RESULT_OK);
    CHECK(consumed == 1);
  }
  CHECK(c.events == 2);
  CHECK(c.len == 10 && memcmp(c.text, "hello|a\nb|", 10) == 0);
  CHECK(ssefold_sse_decoder_last_event_id(dec, &id) == SSEFOLD_RESULT_OK);
  CHECK(id.ptr != NULL && id.len == 1 && id.ptr[0] == '1');
  CHECK(ssefold_sse_decoder_reconnection_time(dec, &has, &ms) == SSEFOLD_RESULT_OK);
  CHECK(has && ms == 250);
  CHECK(ssefold_sse_decoder_finish(dec, &end) == SSEFOLD_RESULT_OK);
  CHECK(end.discarded_bytes == 0 && !end.has_unterminated);
  ssefold_sse_decoder_free(dec);

  CHECK(ssefold_sse_encoder_new(&enc) == SSEFOLD_RESULT_OK);
  {
    ssefold_str ev = {"x", 1}, data = {"a\nb", 3}, none = {NULL, 0};
    CHECK(ssefold_sse_encoder_event(enc, ev, data, none, NULL) == SSEFOLD_RESULT_OK);
  }
  CHECK(ssefold_sse_encoder_bytes(enc, &bytes) == SSEFOLD_RESULT_OK);
  CHECK(bytes.len == strlen("event: x\ndata: a\ndata: b\n\n"));
  CHECK(memcmp(bytes.ptr, "event: x\ndata: a\ndata: b\n\n", bytes.len) == 0);
  ssefold_sse_encoder_free(enc);

  CHECK(ssefold_reconnect_policy_default(&policy) == SSEFOLD_RESULT_OK);
  CHECK(ssefold_reconnect_next_delay_ms(&policy, 1, NULL, 0.5, &ms) == SSEFOLD_RESULT_OK);
  CHECK(ms == 1500);
  CHECK(strcmp(ssefold_result_str(SSEFOLD_RESULT_STOPPED), "stopped by the callback") == 0);
  puts("smoke: ok");
  return 0;
}
