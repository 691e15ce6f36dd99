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

/* SSEFOLD_BENCH_MODE=fold: the provider stream (text deltas, folded message). */
static int fold_once(const unsigned char *bytes, size_t size, struct sums *s) {
  ssefold_stream *st = NULL;
  ssefold_str msg;
  size_t at;
  if (ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, NULL, &st) != SSEFOLD_RESULT_OK) return 1;
  ssefold_stream_set_callback(st, on_stream_event, s, false);
  for (at = 0; at < size; at += 16384) {
    size_t n = size - at < 16384 ? size - at : 16384;
    if (ssefold_stream_feed(st, bytes + at, n) != SSEFOLD_RESULT_OK) return 1;
  }
  if (ssefold_stream_finish(st) != SSEFOLD_RESULT_OK) return 1;
  if (ssefold_stream_message_json(st, &msg) != SSEFOLD_RESULT_OK) return 1;
  ssefold_stream_free(st);
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
  int run;
  if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
    fprintf(stderr, "usage: %s CORPUS_FILE\n", argv[0]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = malloc((size_t)size);
  if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  if (runs < 1 || runs > RUNS) runs = RUNS;
  for (run = 0; run < runs; run++) {
    ssefold_sse_decoder *d = NULL;
    size_t at = 0;
    double start = now(), elapsed;
    s.events = s.data_bytes = 0;
    if (fold) {
      if (fold_once(bytes, (size_t)size, &s)) return 1;
      times[run] = now() - start;
      continue;
    }
    if (ssefold_sse_decoder_new(NULL, &d) != SSEFOLD_RESULT_OK) return 1;
    ssefold_sse_decoder_set_callback(d, on_event, &s);
    while (at < (size_t)size) {
      size_t n = (size_t)size - at < 16384 ? (size_t)size - at : 16384, consumed = 0;
      if (ssefold_sse_decoder_feed(d, bytes + at, n, &consumed) != SSEFOLD_RESULT_OK) return 1;
      at += n;
    }
    ssefold_sse_decoder_free(d);
    elapsed = now() - start;
    times[run] = elapsed;
  }
  qsort(times, (size_t)runs, sizeof times[0], cmp_double);
  printf("c-abi bytes=%ld events=%llu data_bytes=%llu median_MB/s=%.1f MB/s=%.1f\n", size, s.events, s.data_bytes,
         (double)size / times[runs / 2] / 1e6, (double)size / times[0] / 1e6);
  free(bytes);
  return 0;
}
