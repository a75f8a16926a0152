#include "cache_entry.hpp"

#include <bsrmm/bsrmm.h>

#include <cmath>
#include <ctime>

namespace bsrmm::tuner {

namespace {

const Json& field(const Json& json, const char* name, Json::Kind kind, const char* kind_name) {
  const Json* value = json.find(name);
  if (value == nullptr) throw JsonError(std::string("entry has no \"") + name + "\"");
  if (!value->is(kind)) {
    throw JsonError(std::string("entry field \"") + name + "\" is not " + kind_name);
  }
  return *value;
}

std::string text_field(const Json& json, const char* name, bool may_be_empty = false) {
  const std::string& text = field(json, name, Json::Kind::string, "a string").as_string();
  if (text.empty() && !may_be_empty) {
    throw JsonError(std::string("entry field \"") + name + "\" is empty");
  }
  return text;
}

int32_t count_field(const Json& json, const char* name) {
  const double value = field(json, name, Json::Kind::number, "a number").as_number();
  if (!(value >= 0 && value <= 1e6) || std::floor(value) != value) {
    throw JsonError(std::string("entry field \"") + name + "\" is not a count (0..1e6)");
  }
  return static_cast<int32_t>(value);
}

}  // namespace

bool same_slot(const Entry& a, const Entry& b) {
  return a.key == b.key && a.device == b.device && a.library_version == b.library_version;
}

std::string library_version() {
  return std::to_string(BSRMM_VERSION_MAJOR) + "." + std::to_string(BSRMM_VERSION_MINOR) + "." +
         std::to_string(BSRMM_VERSION_PATCH);
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Json entry_to_json(const Entry& entry) {
  return Json::object({{"key", Json::string(entry.key)},
                       {"device", Json::string(entry.device)},
                       {"library_version", Json::string(entry.library_version)},
                       {"variant", Json::string(entry.variant)},
                       {"threads", Json::number(entry.threads)},
                       {"time_ms", Json::number(entry.time_ms)},
                       {"candidates", Json::number(entry.candidates)},
                       {"measured_at", Json::string(entry.measured_at)}});
}

Entry entry_from_json(const Json& json) {
  if (!json.is(Json::Kind::object)) throw JsonError("an entry is not a JSON object");
  Entry entry;
  entry.key = text_field(json, "key");
  entry.device = text_field(json, "device");
  entry.library_version = text_field(json, "library_version");
  entry.variant = text_field(json, "variant");
  entry.threads = count_field(json, "threads");
  entry.time_ms = field(json, "time_ms", Json::Kind::number, "a number").as_number();
  if (!(entry.time_ms >= 0)) throw JsonError("entry field \"time_ms\" is negative");
  entry.candidates = count_field(json, "candidates");
  entry.measured_at = text_field(json, "measured_at", true);
  return entry;
}

Json entries_to_json(const std::vector<Entry>& entries) {
  Json array = Json::array();
  for (const Entry& entry : entries) array.push_back(entry_to_json(entry));
  return array;
}

}  // namespace bsrmm::tuner
