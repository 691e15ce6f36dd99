// Streams a Server-Sent Events response over HTTP with libcurl and prints
// each event's data as it arrives, with the RAII wrappers of ssefold.hpp.
//
//   stream_cpp URL
#include <curl/curl.h>

#include <cstdio>
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
  auto *decoder = static_cast<ssefold::SseDecoder *>(user_data);
  try {
    decoder->feed_all(std::string_view(ptr, size * nmemb), [](ssefold_result, std::string_view message) {
      std::cerr << "skipping a bad event: " << message << "\n";
    });
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
  ssefold::SseDecoder decoder;
  unsigned long events = 0;
  decoder.on_event([&events](const ssefold::Event &e) {
    ++events;
    std::cout << e.data << '\n' << std::flush;  // views live only during the callback
    return true;
  });

  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, "Accept: text/event-stream"), &curl_slist_free_all);
  curl_easy_setopt(curl.get(), CURLOPT_URL, argv[1]);
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &decoder);
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);
  CURLcode res = curl_easy_perform(curl.get());
  int status = 0;
  if (res != CURLE_OK) {
    std::cerr << "curl: " << curl_easy_strerror(res) << "\n";
    status = 1;
  }
  ssefold_sse_end end = decoder.finish();
  if (end.discarded_bytes > 0) std::cerr << "stream ended mid-event (" << end.discarded_bytes << " bytes discarded)\n";
  std::cerr << events << " events\n";
  return status;
}
