// ssefold_agent_turn: a turn driven through the C ABI with its tools on a
// real thread pool, over every golden fixture and every recording that has
// tool calls; the typed tool call of the stream events against their JSON
// form; the actions (start, cancel, close, reconnect), the callback and
// every misuse status.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <dirent.h>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common.hpp"
#include "json_dom.hpp"
#include "ssefold.hpp"

namespace {

std::string root() { return SSEFOLD_ROOT; }

uint32_t provider_of(const std::string &dialect) {
  static const std::map<std::string, uint32_t> names = {
      {"anthropic", SSEFOLD_PROVIDER_ANTHROPIC}, {"openai_chat", SSEFOLD_PROVIDER_OPENAI_CHAT},
      {"openai_responses", SSEFOLD_PROVIDER_OPENAI_RESPONSES}, {"gemini", SSEFOLD_PROVIDER_GEMINI},
      {"ollama", SSEFOLD_PROVIDER_OLLAMA}, {"bedrock", SSEFOLD_PROVIDER_BEDROCK},
      {"bedrock_converse", SSEFOLD_PROVIDER_BEDROCK_CONVERSE},
  };
  auto it = names.find(dialect);
  return it == names.end() ? UINT32_MAX : it->second;
}

struct Body {
  std::string path;
  uint32_t provider;
};

/// Every golden fixture body and every recording of the manifest.
std::vector<Body> bodies() {
  std::vector<Body> out;
  for (const char *dialect :
       {"anthropic", "openai_chat", "openai_responses", "gemini", "ollama", "bedrock", "bedrock_converse"}) {
    std::string dir = root() + "/tests/fixtures/" + dialect;
    DIR *dp = opendir(dir.c_str());
    EXPECT_NE(dp, nullptr) << dir;
    if (!dp) continue;
    std::vector<std::string> names;
    while (dirent *e = readdir(dp)) {
      std::string n = e->d_name;
      for (const char *ext : {".sse", ".ndjson", ".bin"}) {
        size_t k = std::char_traits<char>::length(ext);
        if (n.size() > k && n.compare(n.size() - k, k, ext) == 0) names.push_back(dir + "/" + n);
      }
    }
    closedir(dp);
    std::sort(names.begin(), names.end());
    for (const auto &n : names) out.push_back({n, provider_of(dialect)});
  }
  json::Value manifest = json::parse(read_file(root() + "/tests/recordings/manifest.json"));
  for (const json::Value &entry : manifest.items) {
    out.push_back({root() + "/tests/recordings/" + entry["file"].text, provider_of(entry["dialect"].text)});
  }
  return out;
}

/// A tool call as a plain stream reports it at its PART_END.
struct SeenCall {
  uint32_t part;
  std::string id, name, arguments, outcome;
  bool provider_executed;
  uint64_t choice;
};

std::string input_format_name(ssefold_tool_input_format f) { return f == SSEFOLD_TOOL_INPUT_FORMAT_TEXT ? "text" : "json"; }

/// Checks the typed `tool_call` member of a stream event against the
/// `tool_call` member of its JSON form (the same call, field by field).
void check_typed_call(const ssefold_stream_event &e, const std::string &where) {
  const bool part_event = e.kind == SSEFOLD_STREAM_EVENT_KIND_PART_START || e.kind == SSEFOLD_STREAM_EVENT_KIND_PART_END;
  if (!part_event) {
    EXPECT_FALSE(e.tool_call.present) << where << " " << S(e.name);
    return;
  }
  json::Value doc = json::parse(S(e.json));
  const json::Value &call = doc["tool_call"];
  ASSERT_EQ(e.tool_call.present, doc["kind"].text == "tool_call") << where << " " << S(e.json);
  ASSERT_EQ(e.tool_call.present, doc.has("tool_call")) << where << " " << S(e.json);
  if (!e.tool_call.present) {
    EXPECT_EQ(e.tool_call.id.ptr, nullptr);
    EXPECT_EQ(e.tool_call.name.ptr, nullptr);
    EXPECT_EQ(e.tool_call.arguments.ptr, nullptr);
    return;
  }
  const ssefold_tool_call &t = e.tool_call;
  auto same = [&](ssefold_str typed, const json::Value &v, const char *field) {
    if (v.is_null()) {
      EXPECT_EQ(typed.ptr, nullptr) << where << " " << field << " " << S(e.json);
    } else {
      EXPECT_NE(typed.ptr, nullptr) << where << " " << field;
      EXPECT_EQ(S(typed), v.text) << where << " " << field;
    }
  };
  same(t.id, call["id"], "id");
  same(t.name, call["name"], "name");
  EXPECT_EQ(input_format_name(t.input_format), call["input_format"].text) << where;
  EXPECT_EQ(t.provider_executed, call["provider_executed"].boolean) << where;
  if (e.kind == SSEFOLD_STREAM_EVENT_KIND_PART_START) {
    EXPECT_EQ(t.arguments.ptr, nullptr) << where << ": no arguments at the start";
    EXPECT_FALSE(t.id_synthesized);
  } else {
    same(t.arguments, call["arguments"], "arguments");
    EXPECT_NE(t.id.ptr, nullptr) << where << ": a call's end always has its id";
    EXPECT_EQ(t.id_synthesized, call["id_synthesized"].boolean) << where;
  }
}

/// The tool calls of a body, folded by a plain stream (the reference), and
/// the dialect detected.
struct Reference {
  std::vector<SeenCall> calls;
  std::string where;
  std::map<uint32_t, uint64_t> choices;
  static void callback(void *user_data, const ssefold_stream_event *e) {
    auto *r = static_cast<Reference *>(user_data);
    check_typed_call(*e, r->where);
    if (!e->tool_call.present) return;
    json::Value doc = json::parse(S(e->json));
    if (e->kind == SSEFOLD_STREAM_EVENT_KIND_PART_START) {
      r->choices[e->part] = static_cast<uint64_t>(doc["choice"].number);
      return;
    }
    const ssefold_tool_call &t = e->tool_call;
    r->calls.push_back(SeenCall{e->part, S(t.id), S(t.name), S(t.arguments), doc["outcome"].text,
                                t.provider_executed, r->choices[e->part]});
  }
};

Reference reference(uint32_t provider, const std::string &body, const std::string &where) {
  Reference r;
  r.where = where;
  ssefold_stream *s = nullptr;
  EXPECT_EQ(ssefold_stream_new(provider, nullptr, &s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_set_callback(s, &Reference::callback, &r, true), SSEFOLD_RESULT_OK);
  if (ssefold_stream_feed(s, B(body), body.size()) == SSEFOLD_RESULT_OK) ssefold_stream_finish(s);
  ssefold_stream_free(s);
  return r;
}

// ------------------------------------------------------------ the pool

/// A small pool of worker threads running tool functions. The driving
/// thread posts jobs; workers post each call's output back to a queue the
/// driving thread reads (only the driving thread calls the turn).
class Pool {
 public:
  struct Job {
    std::string call_id, name, arguments;
  };
  struct Done {
    std::string call_id, output;
    bool is_error;
  };

  explicit Pool(size_t workers) {
    for (size_t i = 0; i < workers; i++) threads_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    for (auto &t : threads_) t.join();
  }
  void post(Job job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }
  /// Pops a finished call: waits up to `wait` (zero: does not wait).
  bool pop(Done *out, std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait_for(lock, wait, [this] { return !done_.empty(); });
    if (done_.empty()) return false;
    *out = std::move(done_.front());
    done_.pop_front();
    return true;
  }
  /// The calls the workers ran, each with its name and arguments, and how
  /// many times; then forgets them.
  std::map<std::string, std::pair<Job, int>> take_ran() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(ran_, {});
  }
  int most_at_once() const { return most_; }
  /// The output the tool function gives for a call.
  static std::string output_of(const Job &j) { return "ran " + j.name + " for " + j.call_id; }

 private:
  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return closing_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
        auto &r = ran_[job.call_id];
        r.first = job;
        r.second++;
        most_ = std::max(most_, ++running_);
      }
      // The tool's work: a short sleep, so that calls overlap and finish
      // out of order.
      std::this_thread::sleep_for(std::chrono::microseconds(50 + (job.call_id.size() * 37) % 200));
      Done d{job.call_id, output_of(job), false};
      {
        std::lock_guard<std::mutex> lock(mu_);
        running_--;
        done_.push_back(std::move(d));
      }
      done_cv_.notify_one();
    }
  }
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<Job> jobs_;
  std::deque<Done> done_;
  std::map<std::string, std::pair<Job, int>> ran_;
  int running_ = 0, most_ = 0;
  bool closing_ = false;
};

// ------------------------------------------------------------ driving a turn

std::string turn_error(ssefold_agent_turn *t) {
  ssefold_str s{nullptr, 0};
  if (ssefold_agent_turn_last_error(t, &s) != SSEFOLD_RESULT_OK) return "<last_error failed>";
  return S(s);
}

/// What the callback saw.
struct TurnLog {
  int stream_events = 0;
  std::vector<std::string> tool_events;  // "name call_id"
  int both_or_neither = 0;
  static void callback(void *user_data, const ssefold_stream_event *s, const ssefold_tool_event *t) {
    auto *log = static_cast<TurnLog *>(user_data);
    if ((s == nullptr) == (t == nullptr)) {
      log->both_or_neither++;
      return;
    }
    if (s) log->stream_events++;
    if (t) log->tool_events.push_back(S(t->name) + " " + S(t->call_id));
  }
};

struct Ran {
  std::vector<Pool::Job> started;  // in START_TOOL order
  std::vector<std::string> cancelled;
  json::Value outcome;
  TurnLog log;
  bool finished = false;
};

/// Takes every action queued: START_TOOL goes to the pool.
void drain_actions(ssefold_agent_turn *t, Pool &pool, Ran &ran, size_t &in_flight) {
  for (;;) {
    ssefold_agent_turn_action a;
    bool has = false;
    ASSERT_EQ(ssefold_agent_turn_poll_action(t, &a, &has), SSEFOLD_RESULT_OK) << turn_error(t);
    if (!has) return;
    switch (a.kind) {
      case SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL: {
        Pool::Job job{S(a.call_id), S(a.name), S(a.arguments)};
        ran.started.push_back(job);
        pool.post(std::move(job));
        in_flight++;
        break;
      }
      case SSEFOLD_AGENT_TURN_ACTION_KIND_CANCEL_TOOL:
        ran.cancelled.push_back(S(a.call_id));
        break;
      default:
        ADD_FAILURE() << "no connection action without a reconnection policy: " << a.kind;
    }
  }
}

/// Hands the pool's finished calls to the turn, waiting up to `wait` for
/// each (zero: takes what is there).
void collect_results(ssefold_agent_turn *t, Pool &pool, Ran &ran, size_t &in_flight, std::chrono::milliseconds wait) {
  Pool::Done d;
  while (in_flight > 0 && pool.pop(&d, wait)) {
    in_flight--;
    ASSERT_EQ(ssefold_agent_turn_tool_result(t, V(d.call_id), V(d.output), d.is_error), SSEFOLD_RESULT_OK)
        << turn_error(t);
    drain_actions(t, pool, ran, in_flight);
  }
}

/// Runs a turn over `body` fed in `chunk`-byte pieces, every name in
/// `tools` registered, the calls run on `pool`.
Ran run_turn(uint32_t provider, const std::string &body, const std::set<std::string> &tools, size_t chunk,
             Pool &pool) {
  Ran ran;
  ssefold_agent_turn_config config;
  EXPECT_EQ(ssefold_agent_turn_config_default(&config), SSEFOLD_RESULT_OK);
  config.provider = provider;
  config.reconnect = false;  // one body: an early end fails the turn (no connection actions)
  ssefold_agent_turn *t = nullptr;
  EXPECT_EQ(ssefold_agent_turn_new(&config, &t), SSEFOLD_RESULT_OK);
  if (!t) return ran;
  EXPECT_EQ(ssefold_agent_turn_set_callback(t, &TurnLog::callback, &ran.log, false), SSEFOLD_RESULT_OK);
  const ssefold_tool_options options{false, false, SSEFOLD_TOOL_START_AUTO, false};
  for (const std::string &name : tools) {
    EXPECT_EQ(ssefold_agent_turn_add_tool(t, V(name), options), SSEFOLD_RESULT_OK);
  }
  size_t in_flight = 0;
  uint64_t now = 0;
  EXPECT_EQ(ssefold_agent_turn_connected(t, now), SSEFOLD_RESULT_OK);
  for (size_t at = 0; at < body.size(); at += chunk) {
    size_t n = std::min(chunk, body.size() - at);
    EXPECT_EQ(ssefold_agent_turn_feed(t, B(body) + at, n, ++now), SSEFOLD_RESULT_OK) << turn_error(t);
    drain_actions(t, pool, ran, in_flight);
    collect_results(t, pool, ran, in_flight, std::chrono::milliseconds(0));
  }
  EXPECT_EQ(ssefold_agent_turn_end_of_body(t, ++now), SSEFOLD_RESULT_OK);
  drain_actions(t, pool, ran, in_flight);
  for (int spins = 0; spins < 1000; spins++) {
    bool finished = false;
    EXPECT_EQ(ssefold_agent_turn_is_finished(t, &finished), SSEFOLD_RESULT_OK);
    if (finished) {
      ran.finished = true;
      break;
    }
    // One result at least (a call is running: the turn waits for it).
    Pool::Done d;
    if (in_flight > 0 && pool.pop(&d, std::chrono::milliseconds(100))) {
      in_flight--;
      EXPECT_EQ(ssefold_agent_turn_tool_result(t, V(d.call_id), V(d.output), d.is_error), SSEFOLD_RESULT_OK)
          << turn_error(t);
      drain_actions(t, pool, ran, in_flight);
    }
  }
  // Cancelled calls still come back from the pool: their late results are dropped.
  collect_results(t, pool, ran, in_flight, std::chrono::milliseconds(10000));
  EXPECT_EQ(in_flight, 0u);
  ssefold_str out{nullptr, 0};
  EXPECT_EQ(ssefold_agent_turn_outcome_json(t, &out), SSEFOLD_RESULT_OK);
  ran.outcome = json::parse(S(out));
  ssefold_agent_turn_free(t);
  return ran;
}

/// How many results the next request's tool results hold, whatever the
/// dialect's shape: a list of messages or items, or one message whose
/// `content` / `parts` list holds them.
size_t next_result_count(const json::Value &tool_results) {
  if (tool_results.type == json::Value::Array) return tool_results.items.size();
  if (tool_results.type == json::Value::Object)
    for (const auto &m : tool_results.members)
      if (m.second.type == json::Value::Array) return m.second.items.size();
  return 0;
}

}  // namespace

TEST(AgentTurn, EveryFixtureAndRecordingWithToolCallsOnAThreadPool) {
  Pool pool(3);
  size_t with_calls = 0, index = 0, ran_calls = 0, checked_next = 0, position = 0;
  // SSEFOLD_TURN_SAMPLE=N (the valgrind run): one body in N; the native run
  // takes them all.
  const size_t sample = env_divisor("SSEFOLD_TURN_SAMPLE");
  for (const Body &b : bodies()) {
    ASSERT_NE(b.provider, UINT32_MAX) << b.path;
    if (position++ % sample != 0) continue;
    std::string body = read_file(b.path);
    const std::string &name = b.path;
    Reference ref = reference(b.provider, body, name);
    if (ref.calls.empty()) continue;
    with_calls++;
    index++;
    std::set<std::string> tools;
    for (const auto &c : ref.calls)
      if (!c.name.empty()) tools.insert(c.name);
    // One chunking per body, varied over the corpus; the dialect given or
    // detected.
    size_t chunk = index % 4 == 0 ? body.size() : 1 + (index * 37) % 211;
    uint32_t provider = index % 2 == 0 ? static_cast<uint32_t>(SSEFOLD_PROVIDER_AUTO) : b.provider;
    Ran ran = run_turn(provider, body, tools, chunk, pool);
    ASSERT_TRUE(ran.finished) << name;
    EXPECT_EQ(ran.log.both_or_neither, 0) << name;
    EXPECT_GT(ran.log.stream_events, 0) << name;

    std::vector<const SeenCall *> host_run, answered;
    for (const auto &c : ref.calls) {
      if (c.choice != 0 || c.provider_executed) continue;
      answered.push_back(&c);
      if (c.outcome == "complete" && !c.name.empty()) host_run.push_back(&c);
    }
    const json::Value &out = ran.outcome;
    const bool failed = !out["failure"].is_null();
    // Each complete, host-run call ran exactly once on the pool, with the
    // fold's name and arguments.
    auto pool_ran = pool.take_ran();
    EXPECT_EQ(pool_ran.size(), ran.started.size()) << name;
    for (const Pool::Job &s : ran.started) {
      auto it = pool_ran.find(s.call_id);
      ASSERT_NE(it, pool_ran.end()) << name << " " << s.call_id;
      EXPECT_EQ(it->second.second, 1) << name << ": " << s.call_id << " ran more than once";
      EXPECT_EQ(it->second.first.name, s.name);
      EXPECT_EQ(it->second.first.arguments, s.arguments);
    }
    if (!failed) {
      ASSERT_EQ(ran.started.size(), host_run.size()) << name;
      for (size_t i = 0; i < host_run.size(); i++) {
        EXPECT_EQ(ran.started[i].call_id, host_run[i]->id) << name;
        EXPECT_EQ(ran.started[i].name, host_run[i]->name) << name;
        EXPECT_EQ(ran.started[i].arguments, host_run[i]->arguments) << name;
      }
      EXPECT_TRUE(ran.cancelled.empty()) << name;
    } else {
      for (const Pool::Job &s : ran.started) {
        bool found = false;
        for (const SeenCall *c : host_run)
          found |= c->id == s.call_id && c->name == s.name && c->arguments == s.arguments;
        EXPECT_TRUE(found) << name << ": started " << s.call_id << " as the fold has no ready call";
      }
    }
    ran_calls += ran.started.size();
    // Every call gets exactly one result, in call order.
    const json::Value &results = out["results"];
    ASSERT_EQ(results.items.size(), answered.size()) << name;
    std::set<std::string> ids;
    for (size_t i = 0; i < answered.size(); i++) {
      const json::Value &r = results[i];
      const SeenCall &c = *answered[i];
      EXPECT_EQ(r["call_id"].text, c.id) << name;
      ids.insert(r["call_id"].text);
      std::string want = c.outcome == "incomplete"          ? "incomplete"
                         : c.outcome == "invalid_arguments" ? "invalid_input"
                         : c.name.empty()                   ? "unnamed"
                         : failed && r["kind"].text == "aborted" ? "aborted"
                                                                 : "ran";
      EXPECT_EQ(r["kind"].text, want) << name << " " << c.id;
      EXPECT_EQ(r["is_error"].boolean, want != "ran") << name;
      if (want == "ran") {
        EXPECT_EQ(r["output"].text, Pool::output_of({c.id, c.name, c.arguments})) << name;
      }
    }
    EXPECT_EQ(ids.size(), answered.size()) << name << ": ids unique";
    // The tool events: one start per started call, one finish per call answered.
    size_t starts = 0, finishes = 0;
    for (const auto &e : ran.log.tool_events) {
      starts += e.rfind("tool_execution_started ", 0) == 0;
      finishes += e.rfind("tool_execution_finished ", 0) == 0;
    }
    EXPECT_EQ(starts, ran.started.size()) << name;
    EXPECT_EQ(finishes, answered.size()) << name;
    // The next request: one result per call.
    if (!out["next"].is_null()) {
      EXPECT_EQ(next_result_count(out["next"]["tool_results"]), answered.size()) << name;
      EXPECT_GE(out["next"]["append"].items.size(), 1u) << name;
      checked_next++;
    }
  }
  EXPECT_GE(with_calls * sample, 500u);
  EXPECT_GE(checked_next * sample, 400u);
  EXPECT_GT(ran_calls * sample, 400u);
  // Calls overlapping on the pool needs a turn's calls posted while another
  // runs: the native run (every body, ~500 turns with calls) always has
  // some; valgrind runs one thread at a time and samples ~65 bodies, where
  // two calls of one turn may never meet (seen once on CI), so it is not
  // asked there: the native run of this same test checks it.
  if (sample == 1) {
    EXPECT_GT(pool.most_at_once(), 1) << "the pool ran calls at once";
  }
  std::printf("%zu streams with tool calls, %zu calls run on the pool, %zu next requests checked\n", with_calls,
              ran_calls, checked_next);
}

namespace {

// An OpenAI Chat answer with one call of `add` (id call_1), SSE ids 1..3.
const std::string CHAT_CALL =
    "id: 1\n"
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
    "{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":"
    "{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n"
    "id: 2\n"
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
    "\"finish_reason\":\"tool_calls\"}]}\n\n";
const std::string DONE = "id: 3\ndata: [DONE]\n\n";

/// A turn handle freed at the end of the scope.
struct Turn {
  ssefold_agent_turn *t = nullptr;
  explicit Turn(const ssefold_agent_turn_config *config = nullptr) {
    EXPECT_EQ(ssefold_agent_turn_new(config, &t), SSEFOLD_RESULT_OK);
  }
  ~Turn() { ssefold_agent_turn_free(t); }
  std::vector<ssefold_agent_turn_action_kind> kinds;
  std::vector<std::string> ids;
  /// Drains the actions: their kinds and call ids (cursor / delay of a
  /// RECONNECT in `last`).
  ssefold_agent_turn_action last{};
  void drain() {
    for (;;) {
      ssefold_agent_turn_action a;
      bool has = false;
      ASSERT_EQ(ssefold_agent_turn_poll_action(t, &a, &has), SSEFOLD_RESULT_OK);
      if (!has) return;
      kinds.push_back(a.kind);
      ids.push_back(S(a.call_id));
      last = a;
      if (a.kind == SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT) {
        // Copy what the next call invalidates.
        last_event_id = S(a.cursor.last_event_id);
      }
    }
  }
  std::string last_event_id;
  bool finished() {
    bool f = false;
    EXPECT_EQ(ssefold_agent_turn_is_finished(t, &f), SSEFOLD_RESULT_OK);
    return f;
  }
  json::Value outcome() {
    ssefold_str out{nullptr, 0};
    EXPECT_EQ(ssefold_agent_turn_outcome_json(t, &out), SSEFOLD_RESULT_OK);
    return json::parse(S(out));
  }
  void feed(const std::string &bytes, uint64_t now) {
    ASSERT_EQ(ssefold_agent_turn_feed(t, B(bytes), bytes.size(), now), SSEFOLD_RESULT_OK);
  }
};

const ssefold_tool_options SAFE{false, false, SSEFOLD_TOOL_START_AUTO, false};

}  // namespace

TEST(AgentTurn, StartAnswerAndTheNextRequest) {
  Turn turn;
  TurnLog log;
  ASSERT_EQ(ssefold_agent_turn_set_callback(turn.t, &TurnLog::callback, &log, true), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_add_tool(turn.t, V("add"), SAFE), SSEFOLD_RESULT_OK);
  turn.feed(CHAT_CALL + DONE, 1);
  turn.drain();
  ASSERT_EQ(turn.kinds, std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL});
  EXPECT_EQ(turn.ids[0], "call_1");
  bool ended = false;
  ASSERT_EQ(ssefold_agent_turn_is_stream_ended(turn.t, &ended), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(ended);
  EXPECT_FALSE(turn.finished()) << "the call has no result yet";
  ASSERT_EQ(ssefold_agent_turn_tool_update(turn.t, V("call_1"), V("half")), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_tool_result(turn.t, V("call_1"), V("2"), false), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(turn.finished());
  EXPECT_EQ(log.tool_events, (std::vector<std::string>{"tool_execution_started call_1",
                                                       "tool_execution_update call_1",
                                                       "tool_execution_finished call_1"}));
  EXPECT_EQ(log.both_or_neither, 0);
  json::Value out = turn.outcome();
  EXPECT_EQ(out["provider"].text, "openai_chat");
  EXPECT_EQ(out["stop_reason"].text, "tool_calls");
  EXPECT_TRUE(out["failure"].is_null());
  EXPECT_FALSE(out["aborted"].boolean);
  EXPECT_EQ(out["calls"][0]["id"].text, "call_1");
  EXPECT_EQ(out["calls"][0]["outcome"].text, "complete");
  EXPECT_EQ(out["results"][0]["output"].text, "2");
  EXPECT_EQ(out["results"][0]["kind"].text, "ran");
  EXPECT_EQ(out["next"]["append"][0]["tool_calls"][0]["id"].text, "call_1");
  EXPECT_EQ(out["next"]["append"][1]["tool_call_id"].text, "call_1");
  EXPECT_EQ(out["next"]["tool_results"][0]["content"].text, "2");
  ssefold_turn_failure f;
  ASSERT_EQ(ssefold_agent_turn_failure(turn.t, &f), SSEFOLD_RESULT_OK);
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_NONE);
  EXPECT_EQ(f.message.ptr, nullptr);
}

TEST(AgentTurn, UnknownUnnamedAndInvalidCallsGetErrorResultsAndNeverStart) {
  Turn turn;  // nothing registered
  turn.feed(CHAT_CALL + DONE, 1);
  turn.drain();
  EXPECT_TRUE(turn.kinds.empty());
  EXPECT_TRUE(turn.finished());
  json::Value out = turn.outcome();
  EXPECT_EQ(out["results"][0]["kind"].text, "unknown_tool");
  EXPECT_EQ(out["results"][0]["output"].text, "No such tool available: add");
  EXPECT_TRUE(out["results"][0]["is_error"].boolean);
}

TEST(AgentTurn, AbortCancelsTheRunningCallAndDropsItsLateResult) {
  Turn turn;
  ASSERT_EQ(ssefold_agent_turn_add_tool(turn.t, V("add"), SAFE), SSEFOLD_RESULT_OK);
  turn.feed(CHAT_CALL, 1);  // the call is complete at the finish reason; no [DONE] yet
  turn.drain();
  ASSERT_EQ(turn.kinds, std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL});
  ASSERT_EQ(ssefold_agent_turn_abort(turn.t, V("user")), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_EQ(turn.kinds.back(), SSEFOLD_AGENT_TURN_ACTION_KIND_CANCEL_TOOL);
  EXPECT_EQ(turn.ids.back(), "call_1");
  EXPECT_TRUE(turn.finished());
  EXPECT_EQ(ssefold_agent_turn_tool_result(turn.t, V("call_1"), V("late"), false), SSEFOLD_RESULT_OK)
      << "a late result is dropped";
  EXPECT_EQ(ssefold_agent_turn_abort(turn.t, V("again")), SSEFOLD_RESULT_OK) << "idempotent";
  json::Value out = turn.outcome();
  EXPECT_TRUE(out["aborted"].boolean);
  EXPECT_EQ(out["results"][0]["kind"].text, "aborted");
  EXPECT_EQ(out["results"][0]["output"].text, "Aborted: user");
  EXPECT_EQ(out["stop_reason"].text, "aborted");
}

TEST(AgentTurn, AStreamFailureIsTypedAndEndsTheTurn) {
  // Its chunks announce the usage, which never comes (and no [DONE]): the
  // answer is not whole, so the end of the body is a stream failure.
  std::string early = CHAT_CALL;
  const std::string announced = ",\"usage\":null}\n\n";
  for (size_t at = 0; (at = early.find("}\n\n", at)) != std::string::npos; at += announced.size()) {
    early.replace(at, 3, announced);
  }
  // Without reconnection (the default resumes it from its Last-Event-ID).
  ssefold_agent_turn_config once;
  ASSERT_EQ(ssefold_agent_turn_config_default(&once), SSEFOLD_RESULT_OK);
  once.reconnect = false;
  Turn incomplete(&once);
  incomplete.feed(early, 1);
  ASSERT_EQ(ssefold_agent_turn_end_of_body(incomplete.t, 2), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(incomplete.finished());
  ssefold_turn_failure f;
  ASSERT_EQ(ssefold_agent_turn_failure(incomplete.t, &f), SSEFOLD_RESULT_OK);
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_STREAM);
  EXPECT_EQ(f.status, SSEFOLD_RESULT_STREAM_INCOMPLETE);
  EXPECT_FALSE(f.retryable);
  EXPECT_EQ(S(f.message).rfind("stream ended before", 0), 0u) << S(f.message);
  EXPECT_EQ(incomplete.outcome()["failure"]["kind"].text, "stream");

  Turn provider_error(&once);
  provider_error.feed("data: {\"error\": {\"message\": \"busy\", \"type\": \"server_error\"}}\n\n", 1);
  ASSERT_EQ(ssefold_agent_turn_failure(provider_error.t, &f), SSEFOLD_RESULT_OK);
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_STREAM);
  EXPECT_EQ(f.status, SSEFOLD_RESULT_STREAM_RETRYABLE_PROVIDER_ERROR);
  EXPECT_TRUE(f.retryable);

  Turn transport(&once);
  ASSERT_EQ(ssefold_agent_turn_connection_failed(transport.t, V("reset by peer"), 1), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(transport.finished());
  ASSERT_EQ(ssefold_agent_turn_failure(transport.t, &f), SSEFOLD_RESULT_OK);
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_TRANSPORT);
  EXPECT_EQ(f.status, SSEFOLD_RESULT_OK);
  EXPECT_TRUE(f.retryable);
  EXPECT_NE(S(f.message).find("reset by peer"), std::string::npos);
  EXPECT_EQ(transport.outcome()["failure"]["kind"].text, "transport");
}

TEST(AgentTurn, AnEarlyEndIsReconnectedWithItsCursorAndTheAnswerResumes) {
  ssefold_agent_turn_config c;
  ASSERT_EQ(ssefold_agent_turn_config_default(&c), SSEFOLD_RESULT_OK);
  EXPECT_EQ(c.provider, static_cast<uint32_t>(SSEFOLD_PROVIDER_AUTO));
  EXPECT_TRUE(c.reconnect);
  EXPECT_EQ(c.reconnect_policy.initial_delay_ms, 1000u);
  EXPECT_EQ(c.reconnect_policy.jitter, 0.2);
  EXPECT_EQ(c.approval_timeout_ms, 0u);
  EXPECT_EQ(c.jitter_seed, 0u);
  EXPECT_EQ(c.scheduler.max_calls, 4096u);
  EXPECT_EQ(c.stream.max_parts, 4096u);
  c.reconnect_policy.jitter = 0;  // exact delays
  // The body ends after the call's arguments, before the finish reason.
  const size_t cut = CHAT_CALL.find("id: 2\n");
  ASSERT_NE(cut, std::string::npos);
  Turn turn(&c);
  ASSERT_EQ(ssefold_agent_turn_add_tool(turn.t, V("add"), SAFE), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 0), SSEFOLD_RESULT_OK);
  turn.feed(CHAT_CALL.substr(0, cut), 1);
  ASSERT_EQ(ssefold_agent_turn_end_of_body(turn.t, 2), SSEFOLD_RESULT_OK);
  turn.drain();
  ASSERT_EQ(turn.kinds, std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  EXPECT_EQ(turn.last.delay_ms, 1000u);
  EXPECT_EQ(turn.last.attempt, 1u);
  EXPECT_EQ(turn.last.cursor.kind, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
  EXPECT_EQ(turn.last.replay, SSEFOLD_REPLAY_RESUME) << "output was delivered: resumed, not sent again";
  EXPECT_EQ(turn.last_event_id, "1");
  bool ended = true;
  ASSERT_EQ(ssefold_agent_turn_is_stream_ended(turn.t, &ended), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(ended);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 1002), SSEFOLD_RESULT_OK);
  turn.feed(CHAT_CALL.substr(cut) + DONE, 1003);
  turn.drain();
  ASSERT_EQ(turn.kinds, (std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT,
                                                                     SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL}));
  EXPECT_EQ(turn.ids.back(), "call_1");
  ASSERT_EQ(ssefold_agent_turn_tool_result(turn.t, V("call_1"), V("2"), false), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_TRUE(turn.finished());
  json::Value out = turn.outcome();
  EXPECT_TRUE(out["failure"].is_null()) << out["failure"]["message"].text;
  EXPECT_TRUE(out["output_started"].boolean);
  EXPECT_TRUE(out["gave_up"].is_null());
  EXPECT_EQ(out["results"].items.size(), 1u);
}

TEST(AgentTurn, AnIdleConnectionIsClosedThenReconnectedOrEndsTheTurn) {
  ssefold_agent_turn_config c;
  ASSERT_EQ(ssefold_agent_turn_config_default(&c), SSEFOLD_RESULT_OK);
  c.reconnect = true;
  c.reconnect_policy.jitter = 0;
  c.reconnect_policy.idle_timeout_ms = 100;
  c.reconnect_policy.max_retries = 1;
  Turn turn(&c);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 0), SSEFOLD_RESULT_OK);
  bool has = false;
  uint64_t deadline = 0;
  ASSERT_EQ(ssefold_agent_turn_deadline_ms(turn.t, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(deadline, 100u);
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 50), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_TRUE(turn.kinds.empty());
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 150), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_EQ(turn.kinds, (std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_CLOSE_CONNECTION,
                                                                     SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT}));
  ASSERT_EQ(ssefold_agent_turn_deadline_ms(turn.t, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has) << "no connection streams while reconnecting";
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 1200), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 1400), SSEFOLD_RESULT_OK);  // idle again: out of retries
  turn.drain();
  EXPECT_EQ(turn.kinds.back(), SSEFOLD_AGENT_TURN_ACTION_KIND_CLOSE_CONNECTION);
  EXPECT_TRUE(turn.finished());
  ssefold_turn_failure f;
  ASSERT_EQ(ssefold_agent_turn_failure(turn.t, &f), SSEFOLD_RESULT_OK);
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_IDLE_TIMEOUT);
}

namespace {
struct ReEnter {
  ssefold_agent_turn *t = nullptr;
  std::vector<ssefold_result> got;
  static void callback(void *user_data, const ssefold_stream_event *, const ssefold_tool_event *) {
    auto *r = static_cast<ReEnter *>(user_data);
    r->got.push_back(ssefold_agent_turn_feed(r->t, nullptr, 0, 0));
    bool finished;
    r->got.push_back(ssefold_agent_turn_is_finished(r->t, &finished));
    ssefold_agent_turn_free(r->t);  // ignored while the turn is busy
  }
};
}  // namespace

TEST(AgentTurn, TheCallbackCannotReEnterTheTurn) {
  Turn turn;
  ReEnter r{turn.t, {}};
  ASSERT_EQ(ssefold_agent_turn_set_callback(turn.t, &ReEnter::callback, &r, false), SSEFOLD_RESULT_OK);
  turn.feed(CHAT_CALL, 1);
  ASSERT_FALSE(r.got.empty());
  for (ssefold_result rc : r.got) EXPECT_EQ(rc, SSEFOLD_RESULT_BAD_STATE);
  ASSERT_EQ(ssefold_agent_turn_set_callback(turn.t, nullptr, nullptr, false), SSEFOLD_RESULT_OK);
  turn.feed(DONE, 2);
  EXPECT_TRUE(turn.finished());
}

TEST(AgentTurn, MisuseIsATypedStatusWithAMessage) {
  EXPECT_EQ(ssefold_agent_turn_config_default(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_agent_turn_config c;
  ASSERT_EQ(ssefold_agent_turn_config_default(&c), SSEFOLD_RESULT_OK);
  ssefold_agent_turn *t = nullptr;
  EXPECT_EQ(ssefold_agent_turn_new(&c, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  c.provider = 42;
  EXPECT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(ssefold_agent_turn_config_default(&c), SSEFOLD_RESULT_OK);
  c.scheduler.max_calls = 0;
  EXPECT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(ssefold_agent_turn_config_default(&c), SSEFOLD_RESULT_OK);
  c.reconnect = true;
  c.reconnect_policy.growth = 0.5;
  EXPECT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_INVALID_ARGUMENT);
  c.reconnect = false;  // the policy's stall timeouts still apply: it is read all the same
  EXPECT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_INVALID_ARGUMENT);
  c.reconnect_policy.growth = 1.5;
  ASSERT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_OK);
  ssefold_agent_turn_free(t);
  ASSERT_EQ(ssefold_agent_turn_config_default(&c), SSEFOLD_RESULT_OK);
  c.stream.sse.utf8_mode = 9;
  EXPECT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_INVALID_ARGUMENT);

  Turn turn;
  EXPECT_EQ(ssefold_agent_turn_add_tool(turn.t, ABSENT(), SAFE), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(turn_error(turn.t), "name is required");
  EXPECT_EQ(ssefold_agent_turn_add_tool(turn.t, V("\xff"), SAFE), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_EQ(ssefold_agent_turn_add_tool(nullptr, V("x"), SAFE), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_feed(turn.t, nullptr, 3, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_feed(turn.t, B(DONE), SIZE_MAX, 0), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_agent_turn_tool_result(turn.t, V("nope"), V(""), false), SSEFOLD_RESULT_TOOL_UNKNOWN_CALL_ID);
  EXPECT_NE(turn_error(turn.t).find("nope"), std::string::npos) << turn_error(turn.t);
  EXPECT_EQ(ssefold_agent_turn_tool_result(turn.t, ABSENT(), V(""), false), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_tool_update(turn.t, V("nope"), V("")), SSEFOLD_RESULT_TOOL_UNKNOWN_CALL_ID);
  ASSERT_EQ(ssefold_agent_turn_add_tool(turn.t, V("add"), SAFE), SSEFOLD_RESULT_OK);
  EXPECT_EQ(turn_error(turn.t), "") << "success clears the last error";
  turn.feed(CHAT_CALL + DONE, 1);
  turn.drain();
  ASSERT_EQ(ssefold_agent_turn_tool_result(turn.t, V("call_1"), V("1"), false), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_agent_turn_tool_result(turn.t, V("call_1"), V("1"), false), SSEFOLD_RESULT_TOOL_ALREADY_FINISHED);
  ssefold_agent_turn_action a;
  bool has;
  EXPECT_EQ(ssefold_agent_turn_poll_action(turn.t, nullptr, &has), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_poll_action(turn.t, &a, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_poll_action(nullptr, &a, &has), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_is_finished(turn.t, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_is_stream_ended(nullptr, &has), SSEFOLD_RESULT_NULL_PARAMETER);
  uint64_t ms;
  EXPECT_EQ(ssefold_agent_turn_deadline_ms(turn.t, nullptr, &ms), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_outcome_json(turn.t, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_failure(turn.t, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_connection_failed(turn.t, ssefold_str{nullptr, 2}, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_str s;
  EXPECT_EQ(ssefold_agent_turn_last_error(nullptr, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_last_error(turn.t, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_set_callback(nullptr, nullptr, nullptr, false), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_agent_turn_free(nullptr);
}

TEST(AgentTurn, CppWrapperCopiesActionsAndRethrowsCallbackExceptions) {
  ssefold::AgentTurn turn(std::nullopt, true);
  std::vector<std::string> shown;
  turn.on_stream_event([&](const ssefold_stream_event &e) {
    if (e.tool_call.present) shown.push_back(std::string(ssefold::view(e.name)) + " " + S(e.tool_call.id));
  });
  turn.on_tool_event([&](const ssefold_tool_event &e) { shown.push_back(S(e.name)); });
  turn.add_tool("add");
  turn.connected(0);
  turn.feed(CHAT_CALL + DONE, 1);
  auto a = turn.poll_action();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL);
  EXPECT_EQ(a->arguments, "{\"a\":1}");
  EXPECT_FALSE(a->id_synthesized);
  EXPECT_FALSE(turn.poll_action());
  try {
    turn.tool_result("nope", "x");
    FAIL() << "an unknown call id must throw";
  } catch (const ssefold::Error &e) {
    EXPECT_EQ(e.code(), SSEFOLD_RESULT_TOOL_UNKNOWN_CALL_ID);
  }
  turn.tool_result(a->call_id, "2");
  EXPECT_TRUE(turn.is_finished());
  EXPECT_EQ(turn.failure().kind, SSEFOLD_TURN_FAILURE_KIND_NONE);
  EXPECT_EQ(json::parse(turn.outcome_json())["results"][0]["output"].text, "2");
  EXPECT_EQ(shown, (std::vector<std::string>{"part_start call_1", "part_end call_1", "tool_execution_started",
                                             "tool_execution_finished"}));

  ssefold::AgentTurn throwing;
  throwing.on_stream_event([](const ssefold_stream_event &) { throw std::runtime_error("from the callback"); });
  EXPECT_THROW(throwing.feed(CHAT_CALL, 1), std::runtime_error);
  throwing.on_stream_event(nullptr);
  throwing.feed(DONE, 2);
  EXPECT_TRUE(throwing.is_stream_ended());
}
