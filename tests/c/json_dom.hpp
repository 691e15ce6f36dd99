// A small JSON reader for the tests: parses a document into a tree to look
// members up (the outcome of an agent turn, an event's JSON form). Strict
// enough for what ssefold writes (serde_json output); throws on bad input.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace json {

struct Value {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  bool boolean = false;
  double number = 0;
  std::string text;                                     // String; Number: its JSON text
  std::vector<Value> items;                             // Array
  std::vector<std::pair<std::string, Value>> members;  // Object, in document order

  /// The member `key` of an object (a null value when absent or not an object).
  const Value &operator[](const std::string &key) const {
    static const Value none;
    if (type == Object)
      for (const auto &m : members)
        if (m.first == key) return m.second;
    return none;
  }
  /// Element `i` of an array (a null value when out of range).
  const Value &operator[](size_t i) const {
    static const Value none;
    return type == Array && i < items.size() ? items[i] : none;
  }
  bool is_null() const { return type == Null; }
  bool has(const std::string &key) const {
    if (type == Object)
      for (const auto &m : members)
        if (m.first == key) return true;
    return false;
  }
};

class Parser {
 public:
  explicit Parser(const std::string &s) : s_(s) {}
  Value document() {
    Value v = value();
    ws();
    if (at_ != s_.size()) fail("trailing data");
    return v;
  }

 private:
  [[noreturn]] void fail(const char *why) const {
    throw std::runtime_error(std::string("json: ") + why + " at " + std::to_string(at_));
  }
  void ws() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\r' || s_[at_] == '\t')) at_++;
  }
  bool eat(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(at_, n, word) != 0) return false;
    at_ += n;
    return true;
  }
  char peek() {
    ws();
    if (at_ >= s_.size()) fail("unexpected end");
    return s_[at_];
  }
  Value value() {
    Value v;
    char c = peek();
    if (c == '{') {
      v.type = Value::Object;
      at_++;
      if (peek() == '}') return at_++, v;
      for (;;) {
        if (peek() != '"') fail("expected a key");
        std::string key = string();
        if (peek() != ':') fail("expected ':'");
        at_++;
        v.members.emplace_back(std::move(key), value());
        char d = peek();
        at_++;
        if (d == '}') return v;
        if (d != ',') fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.type = Value::Array;
      at_++;
      if (peek() == ']') return at_++, v;
      for (;;) {
        v.items.push_back(value());
        char d = peek();
        at_++;
        if (d == ']') return v;
        if (d != ',') fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.type = Value::String;
      v.text = string();
      return v;
    }
    if (eat("null")) return v;
    if (eat("true")) {
      v.type = Value::Bool;
      v.boolean = true;
      return v;
    }
    if (eat("false")) {
      v.type = Value::Bool;
      return v;
    }
    size_t start = at_;
    while (at_ < s_.size() && std::string("+-0123456789.eE").find(s_[at_]) != std::string::npos) at_++;
    if (start == at_) fail("unexpected character");
    v.type = Value::Number;
    v.text = s_.substr(start, at_ - start);
    v.number = std::stod(v.text);
    return v;
  }
  static void utf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  uint32_t hex4() {
    if (at_ + 4 > s_.size()) fail("short \\u escape");
    uint32_t cp = static_cast<uint32_t>(std::stoul(s_.substr(at_, 4), nullptr, 16));
    at_ += 4;
    return cp;
  }
  std::string string() {
    at_++;  // the opening quote
    std::string out;
    for (;;) {
      if (at_ >= s_.size()) fail("unterminated string");
      char c = s_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= s_.size()) fail("unterminated escape");
      char e = s_[at_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(at_, 2, "\\u") == 0) {
            at_ += 2;
            uint32_t lo = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  const std::string &s_;
  size_t at_ = 0;
};

inline Value parse(const std::string &text) { return Parser(text).document(); }

}  // namespace json
