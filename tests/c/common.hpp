// Helpers shared by the GoogleTest files.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ssefold.h"

struct OwnedEvent {
  std::string event, data;
  std::optional<std::string> id;
  std::optional<uint64_t> retry;
  bool operator==(const OwnedEvent &o) const {
    return event == o.event && data == o.data && id == o.id && retry == o.retry;
  }
};

inline std::string S(ssefold_str s) { return s.ptr ? std::string(s.ptr, s.len) : std::string(); }
inline ssefold_str V(const std::string &s) { return ssefold_str{s.data(), s.size()}; }
inline ssefold_str V(const char *s) { return ssefold_str{s, std::char_traits<char>::length(s)}; }
inline ssefold_str ABSENT() { return ssefold_str{nullptr, 0}; }
inline const uint8_t *B(const std::string &s) { return reinterpret_cast<const uint8_t *>(s.data()); }

/// The divisor the environment variable `name` sets for a test's work (the
/// valgrind run's SSEFOLD_TURN_SAMPLE, SSEFOLD_HOSTILE_SCALE): 1 when unset or
/// not a number above 1.
inline size_t env_divisor(const char *name) {
  const char *value = std::getenv(name);
  const int n = value != nullptr ? std::atoi(value) : 1;
  return n > 1 ? static_cast<size_t>(n) : 1;
}

/// Collects events; stops after `stop_after` events of one feed when >= 0.
struct Collector {
  std::vector<OwnedEvent> events;
  int stop_every = 0;  // 0: never stop; n: stop after every n-th event
  int seen = 0;
  static int callback(void *user_data, const ssefold_sse_event *e) {
    auto *c = static_cast<Collector *>(user_data);
    OwnedEvent o{S(e->event), S(e->data), std::nullopt, std::nullopt};
    if (e->id.ptr) o.id = S(e->id);
    if (e->has_retry) o.retry = e->retry_ms;
    c->events.push_back(o);
    c->seen++;
    return (c->stop_every > 0 && c->seen % c->stop_every == 0) ? 1 : 0;
  }
};

inline std::string last_error(const ssefold_sse_decoder *d) {
  ssefold_str s{nullptr, 0};
  if (ssefold_sse_decoder_last_error(d, &s) != SSEFOLD_RESULT_OK) return "<last_error failed>";
  return S(s);
}

inline std::string read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Feeds `bytes` in chunks of `chunk` bytes, resuming after every stop and
/// decode error; returns the decode errors seen.
inline std::vector<ssefold_result> feed_chunks(ssefold_sse_decoder *d, const std::string &bytes, size_t chunk) {
  std::vector<ssefold_result> errors;
  for (size_t at = 0; at < bytes.size();) {
    size_t n = std::min(chunk, bytes.size() - at);
    size_t off = 0;
    while (true) {
      size_t consumed = SIZE_MAX;
      ssefold_result rc = ssefold_sse_decoder_feed(d, B(bytes) + at + off, n - off, &consumed);
      if (consumed == SIZE_MAX || consumed > n - off) {
        errors.push_back(SSEFOLD_RESULT_PANIC);  // never: consumed must be written and in range
        return errors;
      }
      off += consumed;
      if (rc == SSEFOLD_RESULT_OK) break;
      if (rc != SSEFOLD_RESULT_STOPPED) errors.push_back(rc);
    }
    at += n;
  }
  return errors;
}
