/* The C side of the C ABI benchmark (`make c-bench`): decodes CORPUS_FILE
 * through ssefold_sse_decoder_feed in 16 KiB chunks (a libcurl write), one
 * callback per event summing the data lengths, best and median of 25 runs; prints MB/s
 * and the checksum that must match the Rust run (examples/capi_bench.rs). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ssefold.h"

/* The measured passes stay functions of their own: callgrind counts one call
 * of each (`--toggle-collect`), as it does the Rust side's. */
#ifdef __GNUC__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

struct sums {
  unsigned long long events, data_bytes;
};

static int on_event(void *user_data, const ssefold_sse_event *e) {
  struct sums *s = (struct sums *)user_data;
  s->events++;
  s->data_bytes += e->data.len;
  return 0;
}

#define RUNS 25

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void on_stream_event(void *user_data, const ssefold_stream_event *e) {
  struct sums *s = (struct sums *)user_data;
  if (e->kind == SSEFOLD_STREAM_EVENT_KIND_TEXT_DELTA) {
    s->events++;
    s->data_bytes += e->text.len;
  }
}

/* Where each turn of the corpus ends: after its message_stop event's blank
 * line (the corpus is whole turns, one HTTP response each). */
static const char TURN_END[] = "data: {\"type\":\"message_stop\"}\n\n";

/* The end of the turn starting at bytes[0] (size when no turn end follows);
 * bytes[size] is a NUL (the corpus holds none). */
static size_t turn_len(const unsigned char *bytes, size_t size) {
  const char *end = strstr((const char *)bytes, TURN_END);
  return end ? (size_t)(end - (const char *)bytes) + sizeof TURN_END - 1 : size;
}

/* SSEFOLD_BENCH_MODE=fold: the provider stream (text deltas, folded message),
 * each of the n_turns turns (lengths turn_lens, in order) by a fresh stream. */
NOINLINE static int fold_once(const unsigned char *bytes, const size_t *turn_lens, size_t n_turns, struct sums *s) {
  size_t start = 0, t;
  for (t = 0; t < n_turns; t++) {
    size_t len = turn_lens[t], at;
    ssefold_stream *st = NULL;
    ssefold_str msg;
    if (ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, NULL, &st) != SSEFOLD_RESULT_OK) return 1;
    ssefold_stream_set_callback(st, on_stream_event, s, false);
    for (at = 0; at < len; at += 16384) {
      size_t n = len - at < 16384 ? len - at : 16384;
      if (ssefold_stream_feed(st, bytes + start + at, n) != SSEFOLD_RESULT_OK) return 1;
    }
    if (ssefold_stream_finish(st) != SSEFOLD_RESULT_OK) return 1;
    if (ssefold_stream_message_json(st, &msg) != SSEFOLD_RESULT_OK) return 1;
    ssefold_stream_free(st);
    start += len;
  }
  return 0;
}

/* SSEFOLD_BENCH_MODE=sse: the SSE decoder over the whole corpus. */
NOINLINE static int decode_once(const unsigned char *bytes, size_t size, struct sums *s) {
  ssefold_sse_decoder *d = NULL;
  size_t at = 0;
  if (ssefold_sse_decoder_new(NULL, &d) != SSEFOLD_RESULT_OK) return 1;
  ssefold_sse_decoder_set_callback(d, on_event, s);
  while (at < size) {
    size_t n = size - at < 16384 ? size - at : 16384, consumed = 0;
    if (ssefold_sse_decoder_feed(d, bytes + at, n, &consumed) != SSEFOLD_RESULT_OK) return 1;
    at += n;
  }
  ssefold_sse_decoder_free(d);
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  FILE *f;
  long size;
  unsigned char *bytes;
  double times[RUNS];
  int runs = getenv("SSEFOLD_BENCH_RUNS") ? atoi(getenv("SSEFOLD_BENCH_RUNS")) : RUNS;
  int fold = getenv("SSEFOLD_BENCH_MODE") && strcmp(getenv("SSEFOLD_BENCH_MODE"), "fold") == 0;
  struct sums s = {0, 0};
  size_t *turn_lens, n_turns = 0, at0;
  int run;
  if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
    fprintf(stderr, "usage: %s CORPUS_FILE\n", argv[0]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = malloc((size_t)size + 1);
  if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) return 1;
  bytes[size] = 0;
  fclose(f);
  if (runs < 1 || runs > RUNS) runs = RUNS;
  /* In fold mode, the corpus split into its turns before any timing (at most
   * one per 16 bytes). */
  turn_lens = malloc(((size_t)size / 16 + 1) * sizeof *turn_lens);
  if (!turn_lens) return 1;
  for (at0 = 0; fold && at0 < (size_t)size; at0 += turn_lens[n_turns++]) {
    turn_lens[n_turns] = turn_len(bytes + at0, (size_t)size - at0);
  }
  for (run = 0; run < runs; run++) {
    double start = now();
    s.events = s.data_bytes = 0;
    if (fold ? fold_once(bytes, turn_lens, n_turns, &s) : decode_once(bytes, (size_t)size, &s)) return 1;
    times[run] = now() - start;
  }
  qsort(times, (size_t)runs, sizeof times[0], cmp_double);
  printf("c-abi bytes=%ld events=%llu data_bytes=%llu median_MB/s=%.1f MB/s=%.1f\n", size, s.events, s.data_bytes,
         (double)size / times[runs / 2] / 1e6, (double)size / times[0] / 1e6);
  free(turn_lens);
  free(bytes);
  return 0;
}
