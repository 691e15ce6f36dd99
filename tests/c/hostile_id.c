/* The long-id reproducer through the C ABI, for peak-RSS measurement
 * (BENCHMARKS.md "Hostile input and scale"):
 *   hostile_id ID_BYTES EVENTS [MAX_ID_LEN]
 * builds "id: <ID_BYTES x>\n" then EVENTS "data: i\n\n" events, feeds them
 * in 64 KiB chunks and prints the number of events and decode errors.
 * A naive host that copies each event's id is simulated by summing the id
 * lengths (no copy: the views are valid during the callback only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssefold.h"

struct counts {
  unsigned long events, errors, id_bytes;
};

static int on_event(void *user_data, const ssefold_sse_event *e) {
  struct counts *c = (struct counts *)user_data;
  c->events++;
  c->id_bytes += (unsigned long)e->id.len;
  return 0;
}

int main(int argc, char **argv) {
  size_t id_len, n, len = 0, at;
  unsigned long i;
  char *input;
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder *d = NULL;
  struct counts c = {0, 0, 0};
  if (argc < 3) {
    fprintf(stderr, "usage: hostile_id ID_BYTES EVENTS [MAX_ID_LEN]\n");
    return 2;
  }
  id_len = (size_t)strtoul(argv[1], NULL, 10);
  n = (size_t)strtoul(argv[2], NULL, 10);
  input = (char *)malloc(id_len + 32 * n + 16);
  if (!input) return 1;
  memcpy(input, "id: ", 4);
  memset(input + 4, 'x', id_len);
  len = 4 + id_len;
  input[len++] = '\n';
  for (i = 0; i < n; i++) len += (size_t)sprintf(input + len, "data: %lu\n\n", i);
  ssefold_sse_decoder_config_default(&cfg);
  if (argc > 3) cfg.max_id_len = (size_t)strtoul(argv[3], NULL, 10);
  if (ssefold_sse_decoder_new(&cfg, &d) != SSEFOLD_RESULT_OK) return 1;
  ssefold_sse_decoder_set_callback(d, on_event, &c);
  for (at = 0; at < len;) {
    size_t chunk = len - at < 65536 ? len - at : 65536, off = 0;
    while (off < chunk) {
      size_t consumed = 0;
      ssefold_result r = ssefold_sse_decoder_feed(d, (const uint8_t *)input + at + off, chunk - off, &consumed);
      off += consumed;
      if (r == SSEFOLD_RESULT_OK) break;
      if (r >= 100 && r < 200) return 1;
      c.errors++;
    }
    at += chunk;
  }
  ssefold_sse_decoder_free(d);
  free(input);
  printf("%lu events, %lu errors, %lu id bytes seen\n", c.events, c.errors, c.id_bytes);
  return 0;
}
