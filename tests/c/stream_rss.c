/* Peak-RSS harness for BENCHMARKS.md ("Hostile input and scale", issue 26
 * item 3): folds one provider stream read from FILE in 64 KiB chunks (as an
 * HTTP body arrives), then takes the folded message.
 *
 *   stream_rss FILE [hold] [paths=N]
 *
 * By default the callback only counts the events. With `hold` it copies
 * every event of a call (its kind, text and JSON form) into an array that
 * lives until the call returns, as a host that hands a call's events over
 * as a list does (the Go and Python bindings): the memory that
 * max_path_events_per_feed bounds. `paths=N` sets max_path_events_per_feed
 * (default 16,384). Prints the events, the most events of one call and the
 * message's size. Run under /usr/bin/time -v for the peak RSS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssefold.h"

struct held {
  uint32_t kind;
  char *text;
  char *json;
};

struct host {
  int hold;
  size_t events, calls_most, in_call, cap;
  struct held *batch;
};

static char *copy(struct ssefold_str s) {
  char *p = malloc(s.len + 1);
  if (!p) abort();
  if (s.len) memcpy(p, s.ptr, s.len);
  p[s.len] = 0;
  return p;
}

static void on_event(void *user_data, const struct ssefold_stream_event *e) {
  struct host *h = user_data;
  h->events++;
  h->in_call++;
  if (!h->hold) return;
  if (h->in_call > h->cap) {
    h->cap = h->cap ? 2 * h->cap : 1024;
    h->batch = realloc(h->batch, h->cap * sizeof *h->batch);
    if (!h->batch) abort();
  }
  struct held *x = &h->batch[h->in_call - 1];
  x->kind = e->kind;
  x->text = copy(e->text);
  x->json = copy(e->json);
}

/* The call returned: the host drops the batch. */
static void call_done(struct host *h) {
  if (h->in_call > h->calls_most) h->calls_most = h->in_call;
  for (size_t i = 0; h->hold && i < h->in_call; i++) {
    free(h->batch[i].text);
    free(h->batch[i].json);
  }
  h->in_call = 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: stream_rss FILE [hold] [paths=N]\n");
    return 2;
  }
  struct host h = {0};
  struct ssefold_stream_config cfg;
  ssefold_stream_config_default(&cfg);
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "hold") == 0) h.hold = 1;
    else if (strncmp(argv[i], "paths=", 6) == 0) cfg.max_path_events_per_feed = strtoull(argv[i] + 6, NULL, 10);
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  struct ssefold_stream *s = NULL;
  if (ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, &cfg, &s) != SSEFOLD_RESULT_OK) return 1;
  ssefold_stream_set_callback(s, on_event, &h, h.hold);
  static uint8_t buf[64 << 10];
  ssefold_result r = SSEFOLD_RESULT_OK;
  size_t n;
  while (r == SSEFOLD_RESULT_OK && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    r = ssefold_stream_feed(s, buf, n);
    call_done(&h);
  }
  if (r == SSEFOLD_RESULT_OK) {
    r = ssefold_stream_finish(s);
    call_done(&h);
  }
  struct ssefold_str m = {0};
  ssefold_stream_message_json(s, &m);
  fprintf(stderr, "%s; %zu events, at most %zu in one call; message %zu bytes\n", ssefold_result_str(r), h.events,
          h.calls_most, m.len);
  ssefold_stream_free(s);
  free(h.batch);
  fclose(f);
  return r == SSEFOLD_RESULT_OK ? 0 : 1;
}
