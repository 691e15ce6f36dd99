/* Streams an LLM response (Server-Sent Events over HTTP) with libcurl and
 * prints its text as it arrives, through ssefold's C API: the provider
 * stream turns body bytes into normalized events (text deltas, tool calls,
 * usage, ...) and folds the final message.
 *
 *   stream_c URL
 *
 * libcurl's write callback hands us the body in whatever chunks the network
 * produced; ssefold reassembles lines, events and JSON across them. */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "ssefold.h"

struct app {
  ssefold_stream *stream;
  ssefold_result error; /* the first failure, to stop the transfer */
  unsigned long deltas;
};

static void on_event(void *user_data, const ssefold_stream_event *event) {
  struct app *app = (struct app *)user_data;
  /* Views are valid only during this call: print (or copy) them now. */
  if (event->kind == SSEFOLD_STREAM_EVENT_KIND_TEXT_DELTA) {
    app->deltas++;
    fwrite(event->text.ptr, 1, event->text.len, stdout);
    fflush(stdout);
  }
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user_data) {
  struct app *app = (struct app *)user_data;
  size_t len = size * nmemb;
  ssefold_result rc = ssefold_stream_feed(app->stream, (const uint8_t *)ptr, len);
  if (rc != SSEFOLD_RESULT_OK) {
    app->error = rc;
    return 0; /* the stream is closed: abort the transfer */
  }
  return len;
}

int main(int argc, char **argv) {
  struct app app = {NULL, SSEFOLD_RESULT_OK, 0};
  CURL *curl;
  CURLcode res;
  struct curl_slist *headers = NULL;
  ssefold_result rc;
  ssefold_str text;
  int status = 0;

  if (argc != 2) {
    fprintf(stderr, "usage: %s URL\n", argv[0]);
    return 2;
  }
  if (ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, NULL, &app.stream) != SSEFOLD_RESULT_OK ||
      ssefold_stream_set_callback(app.stream, on_event, &app, false) != SSEFOLD_RESULT_OK) {
    fprintf(stderr, "ssefold: cannot create the stream\n");
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
  rc = app.error != SSEFOLD_RESULT_OK ? app.error : ssefold_stream_finish(app.stream); /* end of body */
  putchar('\n');
  if (res != CURLE_OK && app.error == SSEFOLD_RESULT_OK) {
    fprintf(stderr, "curl: %s\n", curl_easy_strerror(res));
    status = 1;
  }
  if (rc != SSEFOLD_RESULT_OK) {
    ssefold_stream_last_error(app.stream, &text);
    fprintf(stderr, "ssefold: %s: %s\n", ssefold_result_str(rc), text.ptr);
    status = 1;
  }
  /* The folded message stays readable, even after an error. */
  if (ssefold_stream_message_json(app.stream, &text) == SSEFOLD_RESULT_OK)
    fprintf(stderr, "%lu text deltas; message: %.*s\n", app.deltas, (int)text.len, text.ptr);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  curl_global_cleanup();
  ssefold_stream_free(app.stream);
  return status;
}
