// ssefold.hpp: header-only C++17 RAII wrappers over the C API (ssefold.h).
//
// Handles are move-only objects that free themselves; failures of the API
// (misuse, invalid arguments) throw ssefold::Error with the status and the
// handle's last error message. Decode errors of SSE are not thrown: feed()
// returns them with the number of bytes consumed, like the C API, and
// feed_all() reports them to an optional error callback and goes on.
// Exceptions thrown by your event callback are caught before they reach C
// and rethrown from feed() once the C call has returned.
#ifndef SSEFOLD_HPP
#define SSEFOLD_HPP

#if !defined(__cplusplus)
#error "ssefold.hpp is C++: from C, include ssefold.h"
#elif (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 201703L
#error "ssefold.hpp needs C++17 or later (e.g. -std=c++17; MSVC: /std:c++17); for C++14 and older, use the C API in ssefold.h"
#endif

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ssefold.h"

namespace ssefold {

/// A failed call: the status and the handle's last error message.
class Error : public std::runtime_error {
 public:
  Error(ssefold_result code, const std::string &message)
      : std::runtime_error(message.empty() ? std::string(ssefold_result_str(code)) : message), code_(code) {}
  ssefold_result code() const noexcept { return code_; }

 private:
  ssefold_result code_;
};

namespace detail {

/// The one owner of a C handle, written once for every class below: frees
/// it with `Free` when destroyed (also when the class's constructor throws
/// after `_new`), moves it (the source left empty), never copies it. Reads
/// as the raw pointer, so a class passes `handle_` to the C functions as is.
template <typename T, void (*Free)(T *)>
class Owned {
 public:
  Owned() = default;
  ~Owned() { Free(ptr_); }
  Owned(Owned &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  Owned &operator=(Owned &&o) noexcept {
    if (this != &o) {
      Free(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
    }
    return *this;
  }
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;

  /// Where `_new` writes the handle (only while empty).
  T **out() noexcept { return &ptr_; }
  operator T *() const noexcept { return ptr_; }

 private:
  T *ptr_ = nullptr;
};

}  // namespace detail

/// A view as a string_view (empty when absent).
inline std::string_view view(ssefold_str s) noexcept {
  return s.ptr ? std::string_view(s.ptr, s.len) : std::string_view();
}

/// A view as an optional string_view (nullopt when absent).
inline std::optional<std::string_view> optional_view(ssefold_str s) noexcept {
  if (!s.ptr) return std::nullopt;
  return std::string_view(s.ptr, s.len);
}

/// A string_view as an input view.
inline ssefold_str str(std::string_view s) noexcept { return ssefold_str{s.data() ? s.data() : "", s.size()}; }

/// An absent input view.
inline ssefold_str absent() noexcept { return ssefold_str{nullptr, 0}; }

/// The library version at run time.
inline std::string_view version() { return ssefold_version(); }

/// What a refused response's headers (name, value) say about retrying it:
/// `retry-after-ms`, `Retry-After` (seconds, or an HTTP date counted from
/// `now_unix_ms`, the wall clock), `x-should-retry`. For
/// AgentTurn::http_status and Reconnector::on_http_status. Throws Error on
/// a header that is not UTF-8.
inline ssefold_retry_hints retry_hints_from_headers(
    const std::vector<std::pair<std::string_view, std::string_view>> &headers, std::uint64_t now_unix_ms) {
  std::vector<ssefold_str> names, values;
  names.reserve(headers.size());
  values.reserve(headers.size());
  for (const auto &h : headers) {
    names.push_back(str(h.first));
    values.push_back(str(h.second));
  }
  ssefold_retry_hints hints{};
  ssefold_result rc =
      ssefold_retry_hints_from_headers(names.data(), values.data(), headers.size(), now_unix_ms, &hints);
  if (rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  return hints;
}

/// Tool options (ssefold_tool_options) with every member given (`start`
/// and `needs_approval` are an AgentTurn's: a ToolScheduler ignores them).
inline ssefold_tool_options tool_options(bool exclusive = false, bool abort_siblings_on_error = false,
                                         ssefold_tool_start start = SSEFOLD_TOOL_START_AUTO,
                                         bool needs_approval = false) noexcept {
  return ssefold_tool_options{exclusive, abort_siblings_on_error, static_cast<std::uint32_t>(start), needs_approval};
}

/// The name of a connection state (`"connected"`, ...; `"unknown"` for any
/// other number).
inline std::string_view connection_state_name(ssefold_connection_state state) noexcept {
  return ssefold_connection_state_name(static_cast<std::uint32_t>(state));
}

/// Whether a provider error type is transient (`overloaded_error`,
/// `rate_limit_error`, ...: sending the same request again may succeed).
/// Throws Error on a type that is not UTF-8.
inline bool is_retryable_error_type(std::string_view error_type) {
  bool retryable = false;
  if (ssefold_result rc = ssefold_reconnect_is_retryable_error_type(str(error_type), &retryable);
      rc != SSEFOLD_RESULT_OK)
    throw Error(rc, "");
  return retryable;
}

/// The delay before retry number `attempt` (0 for the first retry) under
/// `policy`: the server's `retry:` time when it sent one, else the capped
/// exponential backoff, spread by the policy's jitter with `random_unit` in
/// [0, 1) from the host (0.5 for none). Throws Error (a policy out of range).
inline std::uint64_t next_delay_ms(const ssefold_reconnect_policy &policy, std::uint32_t attempt,
                                   std::optional<std::uint64_t> server_retry_ms, double random_unit) {
  std::uint64_t ms = 0;
  if (ssefold_result rc = ssefold_reconnect_next_delay_ms(
          &policy, attempt, server_retry_ms ? &*server_retry_ms : nullptr, random_unit, &ms);
      rc != SSEFOLD_RESULT_OK)
    throw Error(rc, "");
  return ms;
}

/// One SSE event; views valid only during the callback.
struct Event {
  std::string_view event;
  std::string_view data;
  std::optional<std::string_view> id;
  std::optional<std::uint64_t> retry_ms;
};

/// The result of one SseDecoder::feed call.
struct FeedResult {
  ssefold_result status;  ///< OK, STOPPED, or an SSE decode error.
  std::size_t consumed;   ///< Bytes decoded; feed the rest again.
};

/// An incremental SSE decoder.
class SseDecoder {
 public:
  /// Returns true to continue, false to stop feed() (STOPPED).
  using Callback = std::function<bool(const Event &)>;

  explicit SseDecoder(const ssefold_sse_decoder_config *config = nullptr) : state_(new State) {
    check_new(ssefold_sse_decoder_new(config, handle_.out()));
    check(ssefold_sse_decoder_set_callback(handle_, &SseDecoder::trampoline, state_.get()));
  }

  /// Sets the event callback.
  void on_event(Callback cb) { state_->callback = std::move(cb); }

  /// Feeds bytes once: OK, STOPPED or a decode error, with bytes consumed.
  /// Throws Error on misuse, and rethrows what the callback threw.
  FeedResult feed(std::string_view bytes) {
    std::size_t consumed = 0;
    ssefold_result rc = ssefold_sse_decoder_feed(
        handle_, reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size(), &consumed);
    if (state_->pending) std::rethrow_exception(std::exchange(state_->pending, nullptr));
    if (rc != SSEFOLD_RESULT_OK && rc != SSEFOLD_RESULT_STOPPED && (rc < 200 || rc >= 300)) throw error(rc);
    return FeedResult{rc, consumed};
  }

  /// Feeds all of `bytes`, resuming after stops and decode errors;
  /// `on_error` (if set) gets each decode error and its message.
  void feed_all(std::string_view bytes,
                const std::function<void(ssefold_result, std::string_view)> &on_error = nullptr) {
    while (true) {
      FeedResult r = feed(bytes);
      if (r.status != SSEFOLD_RESULT_OK && r.status != SSEFOLD_RESULT_STOPPED && on_error)
        on_error(r.status, last_error());
      bytes.remove_prefix(r.consumed);
      if (r.status == SSEFOLD_RESULT_OK) return;
    }
  }

  /// Ends the stream: bytes discarded (an unterminated event is not dispatched).
  ssefold_sse_end finish() {
    ssefold_sse_end end;
    check(ssefold_sse_decoder_finish(handle_, &end));
    return end;
  }

  /// Forgets everything, the last event ID and reconnection time included:
  /// a fresh decoder with the same options and callback.
  void reset() { check(ssefold_sse_decoder_reset(handle_)); }

  /// The last event ID, if any (valid until the next call).
  std::optional<std::string_view> last_event_id() const {
    ssefold_str s;
    check(ssefold_sse_decoder_last_event_id(handle_, &s));
    return optional_view(s);
  }

  /// The stream's reconnection time, if a valid retry field was seen.
  std::optional<std::uint64_t> reconnection_time() const {
    bool has = false;
    std::uint64_t ms = 0;
    check(ssefold_sse_decoder_reconnection_time(handle_, &has, &ms));
    if (!has) return std::nullopt;
    return ms;
  }

  /// The last error message of the handle.
  std::string last_error() const {
    ssefold_str s{nullptr, 0};
    if (ssefold_sse_decoder_last_error(handle_, &s) != SSEFOLD_RESULT_OK) return {};
    return std::string(view(s));
  }

  /// The C handle, for calls not wrapped here.
  ssefold_sse_decoder *get() const noexcept { return handle_; }

 private:
  struct State {
    Callback callback;
    std::exception_ptr pending;
  };

  static int trampoline(void *user_data, const ssefold_sse_event *e) noexcept {
    auto *state = static_cast<State *>(user_data);
    if (!state->callback) return 0;
    try {
      Event ev{view(e->event), view(e->data), optional_view(e->id),
               e->has_retry ? std::optional<std::uint64_t>(e->retry_ms) : std::nullopt};
      return state->callback(ev) ? 0 : 1;
    } catch (...) {
      state->pending = std::current_exception();
      return 1;
    }
  }

  static void check_new(ssefold_result rc) {
    if (rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  }
  void check(ssefold_result rc) const {
    if (rc != SSEFOLD_RESULT_OK) throw error(rc);
  }
  Error error(ssefold_result rc) const { return Error(rc, last_error()); }

  std::unique_ptr<State> state_;
  detail::Owned<ssefold_sse_decoder, ssefold_sse_decoder_free> handle_;  // after state_: freed first
};

/// An SSE encoder writing into a buffer it owns.
class SseEncoder {
 public:
  SseEncoder() {
    if (ssefold_result rc = ssefold_sse_encoder_new(handle_.out()); rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  }

  /// Appends an event (throws Error for a line break in event/id, a NUL in id).
  void event(std::string_view data, std::optional<std::string_view> event = std::nullopt,
             std::optional<std::string_view> id = std::nullopt, std::optional<std::uint64_t> retry_ms = std::nullopt) {
    const std::uint64_t *retry = retry_ms ? &*retry_ms : nullptr;
    check(ssefold_sse_encoder_event(handle_, event ? str(*event) : absent(), str(data), id ? str(*id) : absent(),
                                    retry));
  }
  void comment(std::string_view text) { check(ssefold_sse_encoder_comment(handle_, str(text))); }
  void keep_alive() { check(ssefold_sse_encoder_keep_alive(handle_)); }
  void retry(std::uint64_t ms) { check(ssefold_sse_encoder_retry(handle_, ms)); }
  void clear() { check(ssefold_sse_encoder_clear(handle_)); }

  /// The bytes written since the last clear (valid until the next call).
  std::string_view bytes() const {
    ssefold_bytes b;
    check(ssefold_sse_encoder_bytes(handle_, &b));
    return std::string_view(reinterpret_cast<const char *>(b.ptr), b.len);
  }

  ssefold_sse_encoder *get() const noexcept { return handle_; }

 private:
  void check(ssefold_result rc) const {
    if (rc == SSEFOLD_RESULT_OK) return;
    ssefold_str s{nullptr, 0};
    ssefold_sse_encoder_last_error(handle_, &s);
    throw Error(rc, std::string(view(s)));
  }
  detail::Owned<ssefold_sse_encoder, ssefold_sse_encoder_free> handle_;
};

/// The reconnection state machine of one logical stream.
class Reconnector {
 public:
  explicit Reconnector(const ssefold_reconnect_policy *policy = nullptr) {
    if (ssefold_result rc = ssefold_reconnector_new(policy, handle_.out()); rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  }

  void on_connected(std::uint64_t now_ms) { check(ssefold_reconnector_on_connected(handle_, now_ms)); }
  void on_activity(std::uint64_t now_ms) { check(ssefold_reconnector_on_activity(handle_, now_ms)); }
  void on_event(std::optional<std::string_view> id, std::optional<std::uint64_t> seq = std::nullopt,
                std::optional<std::uint64_t> retry_ms = std::nullopt) {
    check(ssefold_reconnector_on_event(handle_, id ? str(*id) : absent(), seq ? &*seq : nullptr,
                                       retry_ms ? &*retry_ms : nullptr));
  }
  /// The decision (views valid until the next call on this reconnector).
  ssefold_reconnect_decision on_end(ssefold_stream_end_kind kind, std::string_view message = {},
                                    std::string_view error_type = {}) {
    ssefold_stream_end end{static_cast<std::uint32_t>(kind), str(error_type), str(message), 0, ssefold_retry_hints{}};
    ssefold_reconnect_decision d;
    check(ssefold_reconnector_on_end(handle_, &end, &d));
    return d;
  }
  /// The response was refused with `status` (an HTTP_STATUS end; `hints`
  /// from retry_hints_from_headers). Views valid until the next call.
  ssefold_reconnect_decision on_http_status(std::uint16_t status, const ssefold_retry_hints &hints = {}) {
    ssefold_stream_end end{static_cast<std::uint32_t>(SSEFOLD_STREAM_END_KIND_HTTP_STATUS), absent(), absent(), status,
                           hints};
    ssefold_reconnect_decision d;
    check(ssefold_reconnector_on_end(handle_, &end, &d));
    return d;
  }
  /// Content reached the host (ssefold_stream_event.is_content): the
  /// content timeouts restart, and the answer has output from now on.
  void on_content(std::uint64_t now_ms) { check(ssefold_reconnector_on_content(handle_, now_ms)); }
  /// Seeds the retry jitter with a random number from the host.
  void seed_jitter(std::uint64_t seed) { check(ssefold_reconnector_seed_jitter(handle_, seed)); }
  /// Which timeout has passed at `now_ms`, if one has.
  std::optional<ssefold_stall_kind> stall(std::uint64_t now_ms) const {
    bool stalled = false;
    ssefold_stall_kind kind = SSEFOLD_STALL_KIND_IDLE;
    check(ssefold_reconnector_stall(handle_, now_ms, &stalled, &kind, nullptr));
    return stalled ? std::optional<ssefold_stall_kind>(kind) : std::nullopt;
  }
  /// Whether output was delivered (a reconnection is then a resume, or a
  /// restart only when the policy opted in).
  bool output_started() const {
    bool started = false;
    check(ssefold_reconnector_output_started(handle_, &started, nullptr));
    return started;
  }
  /// Whether sending the request again now is safe: no output yet, or a
  /// resume cursor to send.
  bool replay_safe() const {
    bool safe = false;
    check(ssefold_reconnector_output_started(handle_, nullptr, &safe));
    return safe;
  }
  /// The cursor to send on the next connection (views valid until the
  /// next call on this reconnector).
  ssefold_resume_cursor cursor() {
    ssefold_resume_cursor c;
    check(ssefold_reconnector_cursor(handle_, &c));
    return c;
  }
  /// When the current connection counts as idle (host clock), if a
  /// timeout applies.
  std::optional<std::uint64_t> idle_deadline_ms() const {
    bool has = false;
    std::uint64_t ms = 0;
    check(ssefold_reconnector_idle_deadline_ms(handle_, &has, &ms));
    return has ? std::optional<std::uint64_t>(ms) : std::nullopt;
  }
  /// Whether the idle deadline has passed at `now_ms`.
  bool is_idle(std::uint64_t now_ms) const {
    bool idle = false;
    check(ssefold_reconnector_is_idle(handle_, now_ms, &idle));
    return idle;
  }
  ssefold_connection_state state() const {
    ssefold_connection_state s;
    std::uint32_t attempts = 0;
    check(ssefold_reconnector_state(handle_, &s, &attempts));
    return s;
  }
  ssefold_reconnector *get() const noexcept { return handle_; }

 private:
  void check(ssefold_result rc) const {
    if (rc == SSEFOLD_RESULT_OK) return;
    ssefold_str s{nullptr, 0};
    ssefold_reconnector_last_error(handle_, &s);
    throw Error(rc, std::string(view(s)));
  }
  detail::Owned<ssefold_reconnector, ssefold_reconnector_free> handle_;
};

/// An incremental partial-JSON parser; values come back as JSON text.
class PartialJson {
 public:
  explicit PartialJson(const ssefold_partial_json_limits *limits = nullptr) {
    if (ssefold_result rc = ssefold_partial_json_new(limits, handle_.out()); rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  }

  /// Feeds a fragment (throws Error on invalid JSON or an exceeded limit).
  void push(std::string_view fragment) {
    check(ssefold_partial_json_push(handle_, reinterpret_cast<const std::uint8_t *>(fragment.data()),
                                    fragment.size()));
  }
  /// The best-effort current value as JSON text, if a value has begun.
  std::optional<std::string> value(bool partial_strings = true) {
    bool has = false;
    ssefold_str json{nullptr, 0};
    check(ssefold_partial_json_value(handle_, partial_strings, &has, &json));
    if (!has) return std::nullopt;
    return std::string(view(json));
  }
  /// The complete value as JSON text (throws Error when incomplete or invalid).
  std::string finish() {
    ssefold_str json{nullptr, 0};
    check(ssefold_partial_json_finish(handle_, &json));
    return std::string(view(json));
  }
  void reset() { check(ssefold_partial_json_reset(handle_)); }
  /// Whether a complete top-level value was parsed.
  bool is_complete() const {
    bool complete = false;
    std::uint64_t n = 0;
    check(ssefold_partial_json_status(handle_, &complete, &n));
    return complete;
  }
  /// How many bytes were accepted so far.
  std::uint64_t bytes_pushed() const {
    bool complete = false;
    std::uint64_t n = 0;
    check(ssefold_partial_json_status(handle_, &complete, &n));
    return n;
  }
  /// One-shot best-effort parse of `text` as JSON text (independent of the
  /// pushed document), if a value has begun.
  std::optional<std::string> parse(std::string_view text, bool partial_strings = true) {
    bool has = false;
    ssefold_str json{nullptr, 0};
    check(ssefold_partial_json_parse(handle_, str(text), partial_strings, &has, &json));
    if (!has) return std::nullopt;
    return std::string(view(json));
  }
  ssefold_partial_json *get() const noexcept { return handle_; }

 private:
  void check(ssefold_result rc) const {
    if (rc == SSEFOLD_RESULT_OK) return;
    ssefold_str s{nullptr, 0};
    ssefold_partial_json_last_error(handle_, &s);
    throw Error(rc, std::string(view(s)));
  }
  detail::Owned<ssefold_partial_json, ssefold_partial_json_free> handle_;
};

/// A provider stream: body bytes in, normalized events out, the folded
/// message as JSON text. Failures (invalid JSON, limits, provider errors,
/// an incomplete stream at finish) throw ssefold::Error; the stream is then
/// closed and message_json() still returns the fold so far.
class Stream {
 public:
  /// Gets each normalized event (views valid only during the call).
  using Callback = std::function<void(const ssefold_stream_event &)>;

  explicit Stream(ssefold_provider provider = SSEFOLD_PROVIDER_AUTO, const ssefold_stream_config *config = nullptr,
                  bool event_json = false)
      : state_(new State) {
    if (ssefold_result rc = ssefold_stream_new(provider, config, handle_.out()); rc != SSEFOLD_RESULT_OK)
      throw Error(rc, "");
    check(ssefold_stream_set_callback(handle_, &Stream::trampoline, state_.get(), event_json));
  }

  void on_event(Callback cb) { state_->callback = std::move(cb); }

  /// Feeds body bytes; rethrows what the callback threw.
  void feed(std::string_view bytes) {
    ssefold_result rc =
        ssefold_stream_feed(handle_, reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size());
    rethrow();
    check(rc);
  }
  /// Ends the stream (throws when the terminal event never came).
  void finish() {
    ssefold_result rc = ssefold_stream_finish(handle_);
    rethrow();
    check(rc);
  }
  /// The folded message so far as JSON text.
  std::string message_json() {
    ssefold_str s{nullptr, 0};
    check(ssefold_stream_message_json(handle_, &s));
    return std::string(view(s));
  }
  /// Aborts the turn: one TURN_END (stop reason "aborted") reaches the
  /// callback; idempotent.
  void abort() {
    ssefold_result rc = ssefold_stream_abort(handle_);
    rethrow();
    check(rc);
  }
  bool is_aborted() const {
    bool aborted = false;
    check(ssefold_stream_is_aborted(handle_, &aborted));
    return aborted;
  }
  /// The dialect (the one given, or the detected one; AUTO until detection).
  ssefold_provider provider() const {
    ssefold_provider p = SSEFOLD_PROVIDER_AUTO;
    bool terminated = false;
    check(ssefold_stream_status(handle_, &p, &terminated));
    return p;
  }
  /// Whether the terminal event was seen.
  bool is_terminated() const {
    ssefold_provider p = SSEFOLD_PROVIDER_AUTO;
    bool terminated = false;
    check(ssefold_stream_status(handle_, &p, &terminated));
    return terminated;
  }
  /// Whether the body may end here (asked before finish() when a
  /// connection's body ends): the terminal event came, or the answer is
  /// whole without one (OpenAI Chat without [DONE], Gemini, ...).
  bool is_complete_at_end() const {
    bool complete = false;
    check(ssefold_stream_is_complete_at_end(handle_, &complete));
    return complete;
  }
  /// Call before feeding a new connection's body (restart or resume).
  void reconnect() { check(ssefold_stream_reconnect(handle_)); }
  /// The cursor to send when reconnecting (owning copy of the id).
  struct ResumeCursor {
    ssefold_cursor_kind kind;
    std::string last_event_id;
    std::uint64_t starting_after;
  };
  ResumeCursor resume_cursor() {
    ssefold_resume_cursor c;
    check(ssefold_stream_resume_cursor(handle_, &c));
    return ResumeCursor{c.kind, std::string(view(c.last_event_id)), c.starting_after};
  }
  /// The server's `retry:` reconnection time, if it sent one.
  std::optional<std::uint64_t> reconnection_time() const {
    bool has = false;
    std::uint64_t ms = 0;
    check(ssefold_stream_reconnection_time(handle_, &has, &ms));
    return has ? std::optional<std::uint64_t>(ms) : std::nullopt;
  }
  /// Attaches the UI state model (call before the first feed).
  void enable_ui() { check(ssefold_stream_enable_ui(handle_)); }
  /// The host clock (ms) stamped on the following UI updates.
  void set_time(std::uint64_t now_ms) { check(ssefold_stream_set_time(handle_, now_ms)); }
  /// The UI state snapshot as JSON text.
  std::string ui_snapshot_json() {
    ssefold_str s{nullptr, 0};
    check(ssefold_stream_ui_snapshot_json(handle_, &s));
    return std::string(view(s));
  }
  void set_connection(ssefold_connection_state state) {
    check(ssefold_stream_set_connection(handle_, static_cast<std::uint32_t>(state)));
  }
  /// `json`: the progress as JSON text.
  void set_tool_progress(std::string_view id, std::string_view json) {
    check(ssefold_stream_set_tool_progress(handle_, str(id), str(json)));
  }
  ssefold_stream *get() const noexcept { return handle_; }

 private:
  struct State {
    Callback callback;
    std::exception_ptr pending;
  };
  static void trampoline(void *user_data, const ssefold_stream_event *e) noexcept {
    auto *state = static_cast<State *>(user_data);
    if (!state->callback || state->pending) return;
    try {
      state->callback(*e);
    } catch (...) {
      state->pending = std::current_exception();  // rethrown by feed/finish; later events are skipped
    }
  }
  void rethrow() {
    if (state_->pending) std::rethrow_exception(std::exchange(state_->pending, nullptr));
  }
  void check(ssefold_result rc) const {
    if (rc == SSEFOLD_RESULT_OK) return;
    ssefold_str s{nullptr, 0};
    ssefold_stream_last_error(handle_, &s);
    throw Error(rc, std::string(view(s)));
  }
  std::unique_ptr<State> state_;
  detail::Owned<ssefold_stream, ssefold_stream_free> handle_;  // after state_: freed first
};

/// A tool scheduler (ssefold_tool_scheduler): which ready tool calls to run
/// now, results handed back in call order. Lists are copied out, so they
/// outlive the next call. Misuse (unknown id, finishing twice, adding after
/// discard) throws Error with a SSEFOLD_RESULT_TOOL_* status.
class ToolScheduler {
 public:
  /// One call's result, copied.
  struct Result {
    std::string call_id, name, output;
    bool is_error = false;
    ssefold_tool_result_kind kind = SSEFOLD_TOOL_RESULT_KIND_RAN;
    bool id_synthesized = false;  ///< call_id was synthesized (the provider sent none)
  };
  /// One tool_execution_* event, copied.
  struct Event {
    ssefold_tool_event_kind kind = SSEFOLD_TOOL_EVENT_KIND_STARTED;
    std::string name, call_id, tool_name, text, json;
    bool is_error = false;
    std::string approval_id;  ///< APPROVAL_REQUESTED: the id to approve or deny
  };
  /// What finish() did: whether the result was recorded, and the running
  /// siblings to cancel now.
  struct Finished {
    bool recorded = false;
    std::vector<std::string> cancel;
  };

  explicit ToolScheduler(std::optional<ssefold_tool_scheduler_config> config = std::nullopt) {
    ssefold_result rc = ssefold_tool_scheduler_new(config ? &*config : nullptr, handle_.out());
    if (rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  }

  void add(std::string_view call_id, std::string_view name, std::string_view input_json, bool exclusive = false,
           bool abort_siblings_on_error = false) {
    check(ssefold_tool_scheduler_add(handle_, str(call_id), str(name), str(input_json),
                                     tool_options(exclusive, abort_siblings_on_error)));
  }
  void add_unknown(std::string_view call_id, std::string_view name) {
    check(ssefold_tool_scheduler_add_unknown(handle_, str(call_id), str(name)));
  }
  std::vector<std::string> startable() {
    const ssefold_str *ids = nullptr;
    size_t n = 0;
    check(ssefold_tool_scheduler_startable(handle_, &ids, &n));
    return copy_ids(ids, n);
  }
  void update(std::string_view call_id, std::string_view text) {
    check(ssefold_tool_scheduler_update(handle_, str(call_id), str(text)));
  }
  Finished finish(std::string_view call_id, std::string_view output, bool is_error) {
    Finished f;
    const ssefold_str *ids = nullptr;
    size_t n = 0;
    check(ssefold_tool_scheduler_finish(handle_, str(call_id), str(output), is_error, &f.recorded, &ids, &n));
    f.cancel = copy_ids(ids, n);
    return f;
  }
  std::vector<Result> results() {
    const ssefold_tool_result *r = nullptr;
    size_t n = 0;
    check(ssefold_tool_scheduler_results(handle_, &r, &n));
    return copy_results(r, n);
  }
  std::vector<Result> all_results() {
    const ssefold_tool_result *r = nullptr;
    size_t n = 0;
    check(ssefold_tool_scheduler_all_results(handle_, &r, &n));
    return copy_results(r, n);
  }
  std::vector<std::string> discard() {
    const ssefold_str *ids = nullptr;
    size_t n = 0;
    check(ssefold_tool_scheduler_discard(handle_, &ids, &n));
    return copy_ids(ids, n);
  }
  std::vector<std::string> abort(std::string_view reason = {}) {
    const ssefold_str *ids = nullptr;
    size_t n = 0;
    check(ssefold_tool_scheduler_abort(handle_, str(reason), &ids, &n));
    return copy_ids(ids, n);
  }
  std::optional<Event> next_event() {
    ssefold_tool_event e;
    bool has = false;
    check(ssefold_tool_scheduler_next_event(handle_, &e, &has));
    if (!has) return std::nullopt;
    return Event{e.kind,
                 std::string(view(e.name)),
                 std::string(view(e.call_id)),
                 std::string(view(e.tool_name)),
                 std::string(view(e.text)),
                 std::string(view(e.json)),
                 e.is_error,
                 std::string(view(e.approval_id))};
  }
  /// Every result shaped for the next request of `provider` (JSON text).
  std::string tool_results(ssefold_provider provider) {
    ssefold_str s{nullptr, 0};
    check(ssefold_tool_scheduler_tool_results(handle_, static_cast<uint32_t>(provider), &s));
    return std::string(view(s));
  }
  bool is_settled() const {
    bool settled = false;
    check(ssefold_tool_scheduler_status(handle_, nullptr, nullptr, &settled));
    return settled;
  }
  size_t running() const {
    size_t n = 0;
    check(ssefold_tool_scheduler_status(handle_, nullptr, &n, nullptr));
    return n;
  }

  ssefold_tool_scheduler *get() const noexcept { return handle_; }

 private:
  static std::vector<std::string> copy_ids(const ssefold_str *ids, size_t n) {
    std::vector<std::string> out;
    out.reserve(n);
    for (size_t i = 0; i < n; i++) out.emplace_back(view(ids[i]));
    return out;
  }
  static std::vector<Result> copy_results(const ssefold_tool_result *r, size_t n) {
    std::vector<Result> out;
    out.reserve(n);
    for (size_t i = 0; i < n; i++)
      out.push_back(Result{std::string(view(r[i].call_id)), std::string(view(r[i].name)),
                           std::string(view(r[i].output)), r[i].is_error, r[i].kind, r[i].id_synthesized});
    return out;
  }
  void check(ssefold_result rc) const {
    if (rc == SSEFOLD_RESULT_OK) return;
    ssefold_str s{nullptr, 0};
    ssefold_tool_scheduler_last_error(handle_, &s);
    throw Error(rc, std::string(view(s)));
  }
  detail::Owned<ssefold_tool_scheduler, ssefold_tool_scheduler_free> handle_;
};

/// One agent turn (ssefold_agent_turn), sans-IO: report what happened
/// (request_sent, connected, http_status, feed, end_of_body,
/// connection_failed, tick, tool_result, approve / deny, cancel_tool,
/// abort), then drain poll_action (start a tool on your thread, cancel one,
/// reconnect).
/// Events reach the callbacks during the call that produced them; an
/// exception thrown by a callback is rethrown once the C call returned.
/// Misuse (an unknown call id, a result twice) throws Error with a
/// SSEFOLD_RESULT_TOOL_* status.
class AgentTurn {
 public:
  /// Gets each normalized stream event (views valid only during the call).
  using StreamCallback = std::function<void(const ssefold_stream_event &)>;
  /// Gets each tool_execution_* event (views valid only during the call).
  using ToolCallback = std::function<void(const ssefold_tool_event &)>;
  /// One action, copied.
  struct Action {
    ssefold_agent_turn_action_kind kind = SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL;
    std::string call_id, name, arguments;
    ssefold_tool_input_format input_format = SSEFOLD_TOOL_INPUT_FORMAT_JSON;
    bool id_synthesized = false;
    std::uint64_t delay_ms = 0;
    std::uint32_t attempt = 0;
    ssefold_cursor_kind cursor_kind = SSEFOLD_CURSOR_KIND_NONE;
    std::string last_event_id;
    std::uint64_t starting_after = 0;
    ssefold_replay replay = SSEFOLD_REPLAY_RETRY;  ///< RECONNECT: a retry, a resume or a restart
  };
  /// Why the turn failed, copied (kind NONE: it did not).
  struct Failure {
    ssefold_turn_failure_kind kind = SSEFOLD_TURN_FAILURE_KIND_NONE;
    ssefold_result status = SSEFOLD_RESULT_OK;
    std::string message;
    bool retryable = false;
    ssefold_stall_kind stall = SSEFOLD_STALL_KIND_IDLE;  ///< IDLE_TIMEOUT: which timeout fired
    std::uint64_t after_ms = 0;                           ///< IDLE_TIMEOUT: its length
    std::uint16_t http_status = 0;                        ///< HTTP: the status
  };

  explicit AgentTurn(std::optional<ssefold_agent_turn_config> config = std::nullopt, bool event_json = false)
      : state_(new State) {
    if (ssefold_result rc = ssefold_agent_turn_new(config ? &*config : nullptr, handle_.out());
        rc != SSEFOLD_RESULT_OK)
      throw Error(rc, "");
    check(ssefold_agent_turn_set_callback(handle_, &AgentTurn::trampoline, state_.get(), event_json));
  }

  void on_stream_event(StreamCallback cb) { state_->stream = std::move(cb); }
  void on_tool_event(ToolCallback cb) { state_->tool = std::move(cb); }
  void add_tool(std::string_view name, bool exclusive = false, bool abort_siblings_on_error = false) {
    add_tool(name, tool_options(exclusive, abort_siblings_on_error));
  }
  /// Registers a tool with every option (`start`, `needs_approval`: see
  /// tool_options()).
  void add_tool(std::string_view name, const ssefold_tool_options &options) {
    check(ssefold_agent_turn_add_tool(handle_, str(name), options));
  }
  /// The request was sent (optional: the timings count from the first).
  void request_sent(std::uint64_t now_ms) { check(ssefold_agent_turn_request_sent(handle_, now_ms)); }
  void connected(std::uint64_t now_ms) { check(ssefold_agent_turn_connected(handle_, now_ms)); }
  /// The response was refused with a non-2xx `status`: retried (a
  /// RECONNECT action) or the turn fails (failure HTTP).
  void http_status(std::uint16_t status, const std::optional<ssefold_retry_hints> &hints, std::uint64_t now_ms) {
    done(ssefold_agent_turn_http_status(handle_, status, hints ? &*hints : nullptr, now_ms));
  }
  void feed(std::string_view bytes, std::uint64_t now_ms) {
    done(ssefold_agent_turn_feed(handle_, reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size(), now_ms));
  }
  void end_of_body(std::uint64_t now_ms) { done(ssefold_agent_turn_end_of_body(handle_, now_ms)); }
  void connection_failed(std::string_view error, std::uint64_t now_ms) {
    done(ssefold_agent_turn_connection_failed(handle_, str(error), now_ms));
  }
  void tick(std::uint64_t now_ms) { done(ssefold_agent_turn_tick(handle_, now_ms)); }
  /// When tick() should be called next, if ever.
  std::optional<std::uint64_t> deadline_ms() const {
    bool has = false;
    std::uint64_t ms = 0;
    check(ssefold_agent_turn_deadline_ms(handle_, &has, &ms));
    return has ? std::optional<std::uint64_t>(ms) : std::nullopt;
  }
  void tool_update(std::string_view call_id, std::string_view text) {
    done(ssefold_agent_turn_tool_update(handle_, str(call_id), str(text)));
  }
  void tool_result(std::string_view call_id, std::string_view output, bool is_error = false) {
    done(ssefold_agent_turn_tool_result(handle_, str(call_id), str(output), is_error));
  }
  /// Approves the call waiting for `approval_id` (its APPROVAL_REQUESTED
  /// tool event); throws TOOL_NOT_AWAITING_APPROVAL for another id.
  void approve(std::string_view approval_id) { done(ssefold_agent_turn_approve(handle_, str(approval_id))); }
  /// Denies it: its result is "Denied by the user[: reason]".
  void deny(std::string_view approval_id, std::string_view reason = {}) {
    done(ssefold_agent_turn_deny(handle_, str(approval_id), str(reason)));
  }
  /// Cancels a running call (after a RUNNING_AFTER_STOP tool event, say).
  void cancel_tool(std::string_view call_id) { done(ssefold_agent_turn_cancel_tool(handle_, str(call_id))); }
  void abort(std::string_view reason = {}) { done(ssefold_agent_turn_abort(handle_, str(reason))); }
  /// The next thing to do, or nullopt.
  std::optional<Action> poll_action() {
    ssefold_agent_turn_action a;
    bool has = false;
    check(ssefold_agent_turn_poll_action(handle_, &a, &has));
    if (!has) return std::nullopt;
    return Action{a.kind,
                  std::string(view(a.call_id)),
                  std::string(view(a.name)),
                  std::string(view(a.arguments)),
                  a.input_format,
                  a.id_synthesized,
                  a.delay_ms,
                  a.attempt,
                  a.cursor.kind,
                  std::string(view(a.cursor.last_event_id)),
                  a.cursor.starting_after,
                  a.replay};
  }
  bool is_finished() const {
    bool out = false;
    check(ssefold_agent_turn_is_finished(handle_, &out));
    return out;
  }
  bool is_stream_ended() const {
    bool out = false;
    check(ssefold_agent_turn_is_stream_ended(handle_, &out));
    return out;
  }
  Failure failure() {
    ssefold_turn_failure f;
    check(ssefold_agent_turn_failure(handle_, &f));
    return Failure{f.kind, f.status, std::string(view(f.message)), f.retryable, f.stall, f.after_ms, f.http_status};
  }
  /// The outcome as one JSON document (final once is_finished()).
  std::string outcome_json() {
    ssefold_str s{nullptr, 0};
    check(ssefold_agent_turn_outcome_json(handle_, &s));
    return std::string(view(s));
  }
  ssefold_agent_turn *get() const noexcept { return handle_; }

 private:
  struct State {
    StreamCallback stream;
    ToolCallback tool;
    std::exception_ptr pending;
  };
  static void trampoline(void *user_data, const ssefold_stream_event *s, const ssefold_tool_event *t) noexcept {
    auto *state = static_cast<State *>(user_data);
    if (state->pending) return;
    try {
      if (s && state->stream) state->stream(*s);
      if (t && state->tool) state->tool(*t);
    } catch (...) {
      state->pending = std::current_exception();  // rethrown once the C call returned; later events are skipped
    }
  }
  void done(ssefold_result rc) {
    if (state_->pending) std::rethrow_exception(std::exchange(state_->pending, nullptr));
    check(rc);
  }
  void check(ssefold_result rc) const {
    if (rc == SSEFOLD_RESULT_OK) return;
    ssefold_str s{nullptr, 0};
    ssefold_agent_turn_last_error(handle_, &s);
    throw Error(rc, std::string(view(s)));
  }
  std::unique_ptr<State> state_;
  detail::Owned<ssefold_agent_turn, ssefold_agent_turn_free> handle_;  // after state_: freed first
};

/// The browser bytes of a relay call, or its provider stream's failure.
struct Relayed {
  std::string bytes;             ///< Send these to the browser.
  ssefold_result stream_status;  ///< OK, or the stream's failure (an `error` event is in `bytes`).
};

/// Normalized events (or provider bytes) in, the browser's SSE bytes out.
/// Each call returns an owning copy of the bytes to send now.
class Relay {
 public:
  /// A relay of pushed events (`config` NULL: the AI SDK defaults).
  explicit Relay(const ssefold_relay_config *config = nullptr) {
    if (ssefold_result rc = ssefold_relay_new(config, handle_.out()); rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  }
  /// A relay that folds `provider` bytes itself (`feed`).
  Relay(const ssefold_relay_config *config, ssefold_provider provider,
        const ssefold_stream_config *stream_config = nullptr) {
    ssefold_result rc = ssefold_relay_new_with_stream(config, provider, stream_config, handle_.out());
    if (rc != SSEFOLD_RESULT_OK) throw Error(rc, "");
  }

  /// Provider bytes through the relay's stream.
  Relayed feed(std::string_view bytes) {
    ssefold_bytes out{nullptr, 0};
    ssefold_result status = SSEFOLD_RESULT_OK;
    check(ssefold_relay_feed(handle_, reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size(), &out,
                             &status));
    return Relayed{copy(out), status};
  }
  /// The end of the provider's body.
  Relayed end_of_input() {
    ssefold_bytes out{nullptr, 0};
    ssefold_result status = SSEFOLD_RESULT_OK;
    check(ssefold_relay_end_of_input(handle_, &out, &status));
    return Relayed{copy(out), status};
  }
  /// One normalized event in its JSON form (`event.json` of a Stream made
  /// with `event_json`).
  std::string push_json(std::string_view event_json) {
    return call([&](ssefold_bytes *out) { return ssefold_relay_push_json(handle_, str(event_json), out); });
  }
  /// A tool's result; `output_json` is JSON text.
  std::string tool_result(std::string_view call_id, std::string_view output_json, bool is_error = false,
                          std::optional<std::uint64_t> duration_ms = std::nullopt) {
    return call([&](ssefold_bytes *out) {
      return ssefold_relay_tool_result(handle_, str(call_id), str(output_json), is_error,
                                       duration_ms ? &*duration_ms : nullptr, out);
    });
  }
  /// A tool call waits for approval; `input_json` is JSON text; `message`
  /// the sentence the user reads (empty: `Allow NAME to run?`).
  std::string approval_required(std::string_view approval_id, std::string_view call_id, std::string_view name,
                                std::string_view input_json, std::string_view message = {}) {
    return call([&](ssefold_bytes *out) {
      return ssefold_relay_approval_required(handle_, str(approval_id), str(call_id), str(name), str(input_json),
                                             str(message), out);
    });
  }
  /// A log line: `timestamp` the host's ISO 8601 time (`iso_timestamp`),
  /// `trace_id` its trace, `metadata_json` JSON text (absent: left out).
  std::string log(std::string_view level, std::string_view message, std::string_view timestamp,
                  std::string_view trace_id, std::optional<std::string_view> metadata_json = std::nullopt) {
    return call([&](ssefold_bytes *out) {
      return ssefold_relay_log(handle_, str(level), str(message), metadata_json ? str(*metadata_json) : absent(),
                               str(timestamp), str(trace_id), out);
    });
  }
  /// An error for the UI; `code` empty: none.
  std::string error(std::string_view message, bool recoverable, std::string_view code = {}) {
    return call(
        [&](ssefold_bytes *out) { return ssefold_relay_error(handle_, str(message), str(code), recoverable, out); });
  }
  /// The ISO 8601 UTC time of `unix_ms` (a log line's `timestamp`).
  static std::string iso_timestamp(std::uint64_t unix_ms) {
    char buf[32];
    std::size_t n = 0;
    if (ssefold_result rc = ssefold_relay_iso_timestamp(unix_ms, reinterpret_cast<std::uint8_t *>(buf), sizeof buf, &n);
        rc != SSEFOLD_RESULT_OK)
      throw Error(rc, "");
    return std::string(buf, n);
  }
  std::string finish_step() {
    return call([&](ssefold_bytes *out) { return ssefold_relay_finish_step(handle_, out); });
  }
  /// The host's metadata of the answer (a JSON object, e.g. timings): AI
  /// SDK `message-metadata`; nothing in the catalog.
  std::string message_metadata(std::string_view metadata_json) {
    return call([&](ssefold_bytes *out) { return ssefold_relay_message_metadata(handle_, str(metadata_json), out); });
  }
  /// The end of the answer; `usage_json` (nullopt: the folded usage).
  std::string finish(std::optional<std::string_view> usage_json = std::nullopt) {
    return call([&](ssefold_bytes *out) {
      return ssefold_relay_finish(handle_, usage_json ? str(*usage_json) : absent(), out);
    });
  }
  /// The host aborted the run: `abort` (catalog: `finish` `cancelled`);
  /// nothing can be sent afterwards.
  std::string abort() {
    return call([&](ssefold_bytes *out) { return ssefold_relay_abort(handle_, out); });
  }
  /// A keep-alive comment when one is due by the host clock (else empty).
  std::string keep_alive(std::uint64_t now_ms) {
    return call([&](ssefold_bytes *out) { return ssefold_relay_keep_alive(handle_, now_ms, out); });
  }
  /// Held-back tool input (`tool_input_coalesce_bytes`) due by the host
  /// clock `now_ms` (`tool_input_coalesce_ms`); empty when nothing is due.
  std::string tick(std::uint64_t now_ms) {
    return call([&](ssefold_bytes *out) { return ssefold_relay_tick(handle_, now_ms, out); });
  }
  /// Held-back tool input, whatever its age (empty when nothing is held).
  std::string flush() {
    return call([&](ssefold_bytes *out) { return ssefold_relay_flush(handle_, out); });
  }
  /// What a browser reconnecting with `Last-Event-ID` missed (throws
  /// RELAY_REPLAY_TOO_OLD / RELAY_UNKNOWN_EVENT_ID).
  std::string replay_after(std::string_view last_event_id) {
    return call([&](ssefold_bytes *out) { return ssefold_relay_replay_after(handle_, str(last_event_id), out); });
  }
  /// The response headers (name, value).
  std::vector<std::pair<std::string_view, std::string_view>> headers() const {
    std::size_t n = 0;
    check(ssefold_relay_header_count(handle_, &n));
    std::vector<std::pair<std::string_view, std::string_view>> out;
    for (std::size_t i = 0; i < n; i++) {
      ssefold_str name{nullptr, 0}, value{nullptr, 0};
      check(ssefold_relay_header(handle_, i, &name, &value));
      out.emplace_back(view(name), view(value));
    }
    return out;
  }
  std::uint64_t last_event_id() const {
    std::uint64_t id = 0;
    bool finished = false;
    check(ssefold_relay_status(handle_, &id, &finished));
    return id;
  }
  bool is_finished() const {
    std::uint64_t id = 0;
    bool finished = false;
    check(ssefold_relay_status(handle_, &id, &finished));
    return finished;
  }
  /// The frames of the last call's output as (event id, frame bytes),
  /// viewing the relay's buffer until its next call: what a host appends
  /// to a replay store shared across processes.
  std::vector<std::pair<std::uint64_t, std::string_view>> frames() const {
    std::size_t n = 0;
    check(ssefold_relay_frame_count(handle_, &n));
    std::vector<std::pair<std::uint64_t, std::string_view>> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; i++) {
      std::uint64_t id = 0;
      ssefold_bytes b{nullptr, 0};
      check(ssefold_relay_frame(handle_, i, &id, &b));
      out.emplace_back(id, b.len ? std::string_view(reinterpret_cast<const char *>(b.ptr), b.len) : std::string_view());
    }
    return out;
  }
  /// What a reader sends after the last frame (`data: [DONE]` in the AI
  /// SDK format, empty in the catalog).
  std::string_view trailer() const {
    ssefold_bytes b{nullptr, 0};
    check(ssefold_relay_trailer(handle_, &b));
    return b.len ? std::string_view(reinterpret_cast<const char *>(b.ptr), b.len) : std::string_view();
  }
  /// Where a replay store holding ids `oldest..=newest` (0, 0: none)
  /// resumes for `last_event_id` (throws RELAY_REPLAY_TOO_OLD /
  /// RELAY_UNKNOWN_EVENT_ID).
  static std::uint64_t resume_point(std::string_view last_event_id, std::uint64_t oldest, std::uint64_t newest) {
    std::uint64_t after = 0;
    if (ssefold_result rc = ssefold_relay_resume_point(str(last_event_id), oldest, newest, &after);
        rc != SSEFOLD_RESULT_OK)
      throw Error(rc, "");
    return after;
  }
  /// Every event name the catalog format sends (static strings): an
  /// EventSource needs a listener for each.
  static std::vector<std::string_view> catalog_event_names() {
    std::vector<std::string_view> names;
    ssefold_str name{nullptr, 0};
    while (ssefold_relay_catalog_event_name(names.size(), &name) == SSEFOLD_RESULT_OK) names.push_back(view(name));
    return names;
  }
  ssefold_relay *get() const noexcept { return handle_; }

 private:
  static std::string copy(ssefold_bytes b) {
    return b.len ? std::string(reinterpret_cast<const char *>(b.ptr), b.len) : std::string();
  }
  template <typename F>
  std::string call(F &&f) {
    ssefold_bytes out{nullptr, 0};
    check(f(&out));
    return copy(out);
  }
  void check(ssefold_result rc) const {
    if (rc == SSEFOLD_RESULT_OK) return;
    ssefold_str s{nullptr, 0};
    ssefold_relay_last_error(handle_, &s);
    throw Error(rc, std::string(view(s)));
  }
  detail::Owned<ssefold_relay, ssefold_relay_free> handle_;
};

}  // namespace ssefold

#endif  // SSEFOLD_HPP
