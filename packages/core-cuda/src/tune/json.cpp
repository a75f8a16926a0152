#include "json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>

namespace bsrmm::tuner {

Json Json::boolean(bool value) {
  Json json;
  json.kind_ = Kind::boolean;
  json.bool_ = value;
  return json;
}

Json Json::number(double value) {
  Json json;
  json.kind_ = Kind::number;
  json.number_ = value;
  return json;
}

Json Json::string(std::string value) {
  Json json;
  json.kind_ = Kind::string;
  json.string_ = std::move(value);
  return json;
}

Json Json::array(std::vector<Json> items) {
  Json json;
  json.kind_ = Kind::array;
  json.items_ = std::move(items);
  return json;
}

Json Json::object(Members members) {
  Json json;
  json.kind_ = Kind::object;
  json.members_ = std::move(members);
  return json;
}

const Json* Json::find(const std::string& key) const {
  for (const auto& member : members_)
    if (member.first == key) return &member.second;
  return nullptr;
}

void Json::set(std::string key, Json value) {
  for (auto& member : members_) {
    if (member.first == key) {
      member.second = std::move(value);
      return;
    }
  }
  members_.emplace_back(std::move(key), std::move(value));
}

namespace {

// Deep enough for any cache file; a hostile file cannot exhaust the stack.
constexpr int max_depth = 32;

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Json document() {
    Json value = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) fail("the end of the document");
    return value;
  }

 private:
  [[noreturn]] void fail(const char* expected) const {
    std::ostringstream message;
    message << "invalid JSON at byte " << pos_ << ": expected " << expected;
    if (pos_ >= text_.size()) message << ", found the end of the text (truncated?)";
    throw JsonError(message.str());
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool take(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect_word(const char* word) {
    for (const char* p = word; *p; ++p)
      if (!take(*p)) fail(word);
  }

  Json parse_value(int depth) {
    if (depth > max_depth) fail("less nesting (depth limit 32)");
    skip_space();
    if (pos_ >= text_.size()) fail("a value");
    switch (text_[pos_]) {
      case '{': return parse_object(depth);
      case '[': return parse_array(depth);
      case '"': return Json::string(parse_string());
      case 't': expect_word("true"); return Json::boolean(true);
      case 'f': expect_word("false"); return Json::boolean(false);
      case 'n': expect_word("null"); return Json();
      default: return Json::number(parse_number());
    }
  }

  Json parse_object(int depth) {
    ++pos_;  // '{'
    Json object = Json::object();
    skip_space();
    if (take('}')) return object;
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') fail("a member name in quotes");
      const std::size_t name_at = pos_;
      std::string name = parse_string();
      if (object.find(name) != nullptr) {
        pos_ = name_at;
        fail("a member name not used before in this object (duplicate key)");
      }
      skip_space();
      if (!take(':')) fail("':'");
      Json value = parse_value(depth + 1);
      object.set(std::move(name), std::move(value));
      skip_space();
      if (take('}')) return object;
      if (!take(',')) fail("',' or '}'");
    }
  }

  Json parse_array(int depth) {
    ++pos_;  // '['
    Json array = Json::array();
    skip_space();
    if (take(']')) return array;
    for (;;) {
      array.push_back(parse_value(depth + 1));
      skip_space();
      if (take(']')) return array;
      if (!take(',')) fail("',' or ']'");
    }
  }

  unsigned hex4() {
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      if (pos_ >= text_.size()) fail("4 hex digits after \\u");
      const char c = text_[pos_++];
      value <<= 4;
      if (c >= '0' && c <= '9') value |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') value |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') value |= static_cast<unsigned>(c - 'A' + 10);
      else fail("4 hex digits after \\u");
    }
    return value;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string parse_string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) fail("a closing '\"'");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("no raw control character inside a string");
      ++pos_;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("an escape character after '\\'");
      switch (text_[pos_++]) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xDC00 && code <= 0xDFFF) fail("a high surrogate before a low one");
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!take('\\') || !take('u')) fail("a low surrogate \\uDC00..\\uDFFF");
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("a low surrogate \\uDC00..\\uDFFF");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default: --pos_; fail("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
      }
    }
  }

  bool digit_at(std::size_t at) const {
    return at < text_.size() && text_[at] >= '0' && text_[at] <= '9';
  }

  // The RFC's grammar is checked here; from_chars alone would accept "01", ".5" or "1.".
  double parse_number() {
    const std::size_t start = pos_;
    take('-');
    if (take('0')) {
      if (digit_at(pos_)) fail("no leading zero");
    } else {
      if (!digit_at(pos_)) fail("a value");
      while (digit_at(pos_)) ++pos_;
    }
    if (take('.')) {
      if (!digit_at(pos_)) fail("a digit after '.'");
      while (digit_at(pos_)) ++pos_;
    }
    if (take('e') || take('E')) {
      if (!take('+')) take('-');
      if (!digit_at(pos_)) fail("a digit in the exponent");
      while (digit_at(pos_)) ++pos_;
    }
    double value = 0;
    const auto result = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (result.ec != std::errc() || !std::isfinite(value)) {
      pos_ = start;
      fail("a number within the range of a double");
    }
    return value;
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

void write_string(std::string& out, const std::string& text) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

void write_number(std::string& out, double value) {
  if (!std::isfinite(value)) throw JsonError("JSON has no representation for NaN or infinity");
  char buffer[32];
  // Shortest text that reads back as the same double; integers come out without a fraction.
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

void write_value(std::string& out, const Json& value, int indent) {
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  switch (value.kind()) {
    case Json::Kind::null: out += "null"; return;
    case Json::Kind::boolean: out += value.as_bool() ? "true" : "false"; return;
    case Json::Kind::number: write_number(out, value.as_number()); return;
    case Json::Kind::string: write_string(out, value.as_string()); return;
    case Json::Kind::array: {
      if (value.items().empty()) {
        out += "[]";
        return;
      }
      out += "[\n";
      for (std::size_t i = 0; i < value.items().size(); ++i) {
        out += pad;
        write_value(out, value.items()[i], indent + 2);
        out += i + 1 < value.items().size() ? ",\n" : "\n";
      }
      out.append(static_cast<std::size_t>(indent), ' ');
      out += ']';
      return;
    }
    case Json::Kind::object: {
      if (value.members().empty()) {
        out += "{}";
        return;
      }
      out += "{\n";
      for (std::size_t i = 0; i < value.members().size(); ++i) {
        out += pad;
        write_string(out, value.members()[i].first);
        out += ": ";
        write_value(out, value.members()[i].second, indent + 2);
        out += i + 1 < value.members().size() ? ",\n" : "\n";
      }
      out.append(static_cast<std::size_t>(indent), ' ');
      out += '}';
      return;
    }
  }
}

}  // namespace

Json parse_json(const std::string& text) { return Parser(text).document(); }

std::string to_json_text(const Json& value) {
  std::string out;
  write_value(out, value, 0);
  out += '\n';
  return out;
}

}  // namespace bsrmm::tuner
