/* Two-thread scaling of independent SSE decoders through the C ABI
 * (BENCHMARKS.md "Hostile input and scale"):
 *   bench_threads FILE [REPEATS] [CHUNK]
 * times one thread decoding FILE REPEATS times, then two threads each doing
 * the same on their own decoder, and prints 2 x t(one) / t(two). */
#define _POSIX_C_SOURCE 199309L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ssefold.h"

struct job {
  const unsigned char *data;
  size_t len, chunk;
  int repeats;
  unsigned long events;
};

static int on_event(void *user_data, const ssefold_sse_event *e) {
  (void)e;
  ((struct job *)user_data)->events++;
  return 0;
}

static void *run(void *arg) {
  struct job *j = (struct job *)arg;
  int r;
  for (r = 0; r < j->repeats; r++) {
    ssefold_sse_decoder *d = NULL;
    size_t at = 0;
    ssefold_sse_decoder_new(NULL, &d);
    ssefold_sse_decoder_set_callback(d, on_event, j);
    while (at < j->len) {
      size_t n = j->len - at < j->chunk ? j->len - at : j->chunk, consumed = 0;
      ssefold_sse_decoder_feed(d, j->data + at, n, &consumed);
      at += consumed ? consumed : n;
    }
    ssefold_sse_decoder_free(d);
  }
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  FILE *f;
  long len;
  unsigned char *data;
  struct job a, b;
  pthread_t ta, tb;
  double t1 = 1e9, t2 = 1e9, s;
  int i;
  if (argc < 2 || !(f = fopen(argv[1], "rb"))) {
    fprintf(stderr, "usage: bench_threads FILE [REPEATS] [CHUNK]\n");
    return 2;
  }
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = (unsigned char *)malloc((size_t)len);
  if (!data || fread(data, 1, (size_t)len, f) != (size_t)len) return 1;
  fclose(f);
  a.data = data;
  a.len = (size_t)len;
  a.repeats = argc > 2 ? atoi(argv[2]) : 20;
  a.chunk = argc > 3 ? (size_t)atol(argv[3]) : 65536;
  a.events = 0;
  b = a;
  for (i = 0; i < 3; i++) {
    s = now();
    run(&a);
    if (now() - s < t1) t1 = now() - s;
    s = now();
    pthread_create(&ta, NULL, run, &a);
    pthread_create(&tb, NULL, run, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    if (now() - s < t2) t2 = now() - s;
  }
  printf("%.1f MB x %d, %zu-byte chunks: one thread %.3f s, two threads %.3f s: %.2fx\n", (double)len / 1e6,
         a.repeats, a.chunk, t1, t2, 2 * t1 / t2);
  free(data);
  return 0;
}
