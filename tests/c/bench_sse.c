/* The C side of the C ABI benchmark (`make c-bench`): decodes CORPUS_FILE
 * through ssefold_sse_decoder_feed in 16 KiB chunks (a libcurl write), one
 * callback per event summing the data lengths, best and median of 25 runs; prints MB/s
 * and the checksum that must match the Rust run (examples/capi_bench.rs). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
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
