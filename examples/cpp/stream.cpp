// Streams an LLM response (Server-Sent Events over HTTP) with libcurl and
// prints its text as it arrives, with the RAII wrappers of ssefold.hpp.
//
//   stream_cpp URL
#include <curl/curl.h>

#include <iostream>
#include <memory>
#include <string_view>

#include "ssefold.hpp"

namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};

size_t on_body(char *ptr, size_t size, size_t nmemb, void *user_data) {
  auto *stream = static_cast<ssefold::Stream *>(user_data);
  try {
    stream->feed(std::string_view(ptr, size * nmemb));
  } catch (const std::exception &e) {
    std::cerr << "ssefold: " << e.what() << "\n";
    return 0;  // abort the transfer; never let an exception unwind through libcurl
  }
  return size * nmemb;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " URL\n";
    return 2;
  }
  CurlGlobal global;
  ssefold::Stream stream(SSEFOLD_PROVIDER_AUTO);
  unsigned long deltas = 0;
  stream.on_event([&deltas](const ssefold_stream_event &e) {
    if (e.kind == SSEFOLD_STREAM_EVENT_KIND_TEXT_DELTA) {
      ++deltas;
      std::cout << ssefold::view(e.text) << std::flush;  // views live only during the callback
    }
  });

  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, "Accept: text/event-stream"), &curl_slist_free_all);
  curl_easy_setopt(curl.get(), CURLOPT_URL, argv[1]);
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &stream);
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);
  CURLcode res = curl_easy_perform(curl.get());
  int status = 0;
  try {
    if (res == CURLE_OK) stream.finish();  // end of body: the terminal event must have come
  } catch (const ssefold::Error &e) {
    std::cerr << "ssefold: " << e.what() << "\n";
    status = 1;
  }
  std::cout << '\n';
  if (res != CURLE_OK) {
    std::cerr << "curl: " << curl_easy_strerror(res) << "\n";
    status = 1;
  }
  std::cerr << deltas << " text deltas; message: " << stream.message_json() << "\n";
  return status;
}
