/* Streams a Server-Sent Events response over HTTP with libcurl and prints
 * each event's data as it arrives, through ssefold's C API.
 *
 *   stream_c URL
 *
 * libcurl's write callback hands us the body in whatever chunks the network
 * produced; ssefold reassembles lines and events across them and calls
 * on_event for each complete event. (When the provider streams are exposed
 * in the C API, this prints normalized text deltas instead of raw data.) */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "ssefold.h"

struct app {
  ssefold_sse_decoder *decoder;
  ssefold_result error; /* the first error, to stop the transfer */
  unsigned long events;
};

static int on_event(void *user_data, const ssefold_sse_event *event) {
  struct app *app = (struct app *)user_data;
  app->events++;
  /* Views are valid only during this call: print (or copy) them now. */
  fwrite(event->data.ptr, 1, event->data.len, stdout);
  fputc('\n', stdout);
  fflush(stdout);
  return 0;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user_data) {
  struct app *app = (struct app *)user_data;
  size_t len = size * nmemb, at = 0;
  while (at < len) {
    size_t consumed = 0;
    ssefold_result rc = ssefold_sse_decoder_feed(app->decoder, (const uint8_t *)ptr + at, len - at, &consumed);
    at += consumed;
    if (rc == SSEFOLD_RESULT_OK) break;
    if (rc >= SSEFOLD_RESULT_SSE_LINE_TOO_LONG && rc <= SSEFOLD_RESULT_SSE_INVALID_UTF8) {
      ssefold_str msg;
      ssefold_sse_decoder_last_error(app->decoder, &msg);
      fprintf(stderr, "skipping a bad event: %s\n", msg.ptr);
      continue; /* the decoder resumes at the next event */
    }
    app->error = rc;
    return 0; /* abort the transfer */
  }
  return len;
}

int main(int argc, char **argv) {
  struct app app = {NULL, SSEFOLD_RESULT_OK, 0};
  ssefold_sse_end end;
  CURL *curl;
  CURLcode res;
  struct curl_slist *headers = NULL;
  int status = 0;

  if (argc != 2) {
    fprintf(stderr, "usage: %s URL\n", argv[0]);
    return 2;
  }
  if (ssefold_sse_decoder_new(NULL, &app.decoder) != SSEFOLD_RESULT_OK ||
      ssefold_sse_decoder_set_callback(app.decoder, on_event, &app) != SSEFOLD_RESULT_OK) {
    fprintf(stderr, "ssefold: cannot create the decoder\n");
    return 1;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  curl = curl_easy_init();
  headers = curl_slist_append(headers, "Accept: text/event-stream");
  curl_easy_setopt(curl, CURLOPT_URL, argv[1]);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &app);
  curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
  res = curl_easy_perform(curl);
  if (res != CURLE_OK) {
    fprintf(stderr, "curl: %s\n", curl_easy_strerror(res));
    if (app.error != SSEFOLD_RESULT_OK) fprintf(stderr, "ssefold: %s\n", ssefold_result_str(app.error));
    status = 1;
  }
  /* End of body: an event without its closing blank line is not dispatched. */
  if (ssefold_sse_decoder_finish(app.decoder, &end) == SSEFOLD_RESULT_OK && end.discarded_bytes > 0)
    fprintf(stderr, "stream ended mid-event (%llu bytes discarded)\n", (unsigned long long)end.discarded_bytes);
  fprintf(stderr, "%lu events\n", app.events);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  curl_global_cleanup();
  ssefold_sse_decoder_free(app.decoder);
  return status;
}
