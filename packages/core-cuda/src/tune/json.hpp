// A minimal, strict JSON value for the tuning cache (RFC 8259: no comments, no trailing commas,
// no NaN, no duplicate keys, nothing after the document). Written here rather than taken from a
// library because the core must build from an sdist on machines with only a compiler: a JSON
// dependency would have to travel with every wheel, crate and npm build for a file whose schema
// this module owns and keeps small. Numbers are doubles (every integer the cache holds is far
// below 2^53), parsed and printed locale-independently (from_chars / to_chars).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bsrmm::tuner {

class Json {
 public:
  enum class Kind { null, boolean, number, string, array, object };
  using Members = std::vector<std::pair<std::string, Json>>;  // in document order

  Json() = default;  // null
  static Json boolean(bool value);
  static Json number(double value);
  static Json string(std::string value);
  static Json array(std::vector<Json> items = {});
  static Json object(Members members = {});

  Kind kind() const { return kind_; }
  bool is(Kind kind) const { return kind_ == kind; }
  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }
  const std::vector<Json>& items() const { return items_; }
  const Members& members() const { return members_; }

  // The member named `key`, or null when this is not an object or has no such member.
  const Json* find(const std::string& key) const;
  void push_back(Json item) { items_.push_back(std::move(item)); }
  void set(std::string key, Json value);  // appends, or replaces an existing member

 private:
  Kind kind_ = Kind::null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<Json> items_;
  Members members_;
};

// A document that is not valid JSON; the message names the byte offset and what was expected.
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws JsonError.
Json parse_json(const std::string& text);

// Two-space indented, members in order, a newline at the end. Throws JsonError for a
// non-finite number (JSON has none).
std::string to_json_text(const Json& value);

}  // namespace bsrmm::tuner
