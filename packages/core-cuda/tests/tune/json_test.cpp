// The cache's JSON reader and writer: round trips, and every malformed document is refused with
// the offset where it went wrong (a corrupt cache must never be half-trusted).
#include "tune/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace bsrmm::tuner {
namespace {

TEST(Json, RoundTripsEveryKind) {
  const std::string text =
      R"({"s": "a\"b\\c\n\t\u0001é", "n": -12.5e-3, "i": 1712345678, "t": true, "f": false,)"
      R"( "z": null, "a": [1, [], {}], "o": {"k": "v"}})";
  const Json value = parse_json(text);
  ASSERT_TRUE(value.is(Json::Kind::object));
  EXPECT_EQ(value.find("s")->as_string(), "a\"b\\c\n\t\x01\xc3\xa9");
  EXPECT_DOUBLE_EQ(value.find("n")->as_number(), -12.5e-3);
  EXPECT_EQ(value.find("i")->as_number(), 1712345678.0);
  EXPECT_TRUE(value.find("t")->as_bool());
  EXPECT_FALSE(value.find("f")->as_bool());
  EXPECT_TRUE(value.find("z")->is(Json::Kind::null));
  EXPECT_EQ(value.find("a")->items().size(), 3u);
  EXPECT_EQ(value.find("o")->find("k")->as_string(), "v");
  EXPECT_EQ(value.find("missing"), nullptr);

  const std::string written = to_json_text(value);
  EXPECT_EQ(to_json_text(parse_json(written)), written) << "writing is a fixed point";
  EXPECT_EQ(written.back(), '\n');
}

TEST(Json, NumbersReadBackBitForBit) {
  for (double x : {0.1, 1.0 / 3.0, 1e-300, 123456789.125, -0.0, 4.9e-324, 1.7976931348623157e308}) {
    const Json back = parse_json(to_json_text(Json::number(x)));
    EXPECT_EQ(back.as_number(), x) << x;
  }
  EXPECT_EQ(to_json_text(Json::number(42)), "42\n") << "integers are written without a fraction";
  EXPECT_THROW(to_json_text(Json::number(std::nan(""))), JsonError);
}

TEST(Json, DecodesSurrogatePairs) {
  EXPECT_EQ(parse_json(R"("\ud83d\ude00")").as_string(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(parse_json(R"("\u00e9\u4e2d")").as_string(), "\xc3\xa9\xe4\xb8\xad");
}

TEST(Json, RefusesMalformedDocuments) {
  const char* const bad[] = {
      "",                       // empty
      "{",                      // truncated
      R"({"a": 1)",             // truncated
      R"({"a": "x)",            // truncated inside a string
      R"({"a": 1,})",           // trailing comma
      R"([1, 2,])",             // trailing comma
      R"({"a": 1, "a": 2})",    // duplicate key
      R"({a: 1})",              // unquoted key
      R"({"a" 1})",             // missing colon
      "01",                     // leading zero
      ".5",                     // no integer part
      "1.",                     // no fraction digits
      "1e",                     // no exponent digits
      "-",                      // sign alone
      "NaN",                    // not JSON
      "Infinity",               // not JSON
      "1e999",                  // out of range
      "\"a\tb\"",               // raw control character
      R"("\x")",                // unknown escape
      R"("\u12g4")",            // bad hex
      R"("\udc00")",            // low surrogate first
      R"("\ud800x")",           // lone high surrogate
      "tru",                    // truncated literal
      "{} {}",                  // two documents
      "[1] x",                  // trailing garbage
      "// comment\n{}",         // comments are not JSON
  };
  for (const char* text : bad) {
    EXPECT_THROW(parse_json(text), JsonError) << "accepted: " << text;
  }
}

TEST(Json, ErrorsNameTheOffset) {
  try {
    parse_json(R"({"a": [1, 2,]})");
    FAIL() << "accepted a trailing comma";
  } catch (const JsonError& error) {
    EXPECT_NE(std::string(error.what()).find("at byte 12"), std::string::npos) << error.what();
  }
  try {
    parse_json(R"({"a": )");
    FAIL() << "accepted a truncated document";
  } catch (const JsonError& error) {
    EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
  }
}

TEST(Json, RefusesDeepNesting) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_THROW(parse_json(deep), JsonError);
  std::string fine(20, '[');
  fine += std::string(20, ']');
  EXPECT_NO_THROW(parse_json(fine));
}

}  // namespace
}  // namespace bsrmm::tuner
