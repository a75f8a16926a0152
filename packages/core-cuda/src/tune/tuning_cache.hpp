// The process-wide tuning cache: the file's entries held in memory, read lazily, re-read when
// another process has replaced the file, and written through (cache_file.hpp) on every store.
//
// Nothing here fails a multiply: a file that cannot be read or trusted is ignored, one that
// cannot be written leaves the choices in memory for this process, and each kind of problem is
// printed to stderr once per file ("bsrmm: ...") and kept as last_warning() for callers that ask.
// The path is looked up again on every call, so a change of BSRMM_TUNING_CACHE takes effect
// (the entries of the old path are dropped from memory).
#pragma once

#include "cache_entry.hpp"
#include "cache_file.hpp"
#include "call_signature.hpp"
#include "choice.hpp"

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace bsrmm::tuner {

class TuningCache {
 public:
  static TuningCache& instance();

  // "" when no location exists (no BSRMM_TUNING_CACHE, XDG_CACHE_HOME or home directory).
  std::string path();
  // The entry of `key` measured on `device` by this library version, if any.
  std::optional<Entry> lookup(const std::string& key, const std::string& device);
  // Replaces the entry with the same key, device and library version, or adds it.
  void store(const Entry& entry);
  // Forgets every entry, in memory and in the file; throws detail::Error (IO_ERROR) when the
  // file cannot be rewritten, after forgetting them in memory.
  void clear();
  // Every entry of the file (all devices and library versions) plus unsaved ones.
  std::vector<Entry> entries();
  // The last problem met with the file in this process; "" if none.
  std::string last_warning();

  // Choices remembered per call signature (tuner.hpp: recall / remember); forgotten whenever
  // the entries in memory change.
  std::optional<Choice> recall(const CallSignature& signature);
  void remember(const CallSignature& signature, const Choice& choice);

 private:
  TuningCache() = default;

  // Switches to the current path (dropping the old one's entries) and loads it once.
  void refresh_locked();
  void load_locked();
  void warn_locked(const char* kind, const std::string& message);
  std::vector<Entry> merged_locked() const;

  std::mutex mutex_;
  std::string path_;
  bool loaded_ = false;
  std::vector<Entry> file_entries_;  // as last read or written
  std::vector<Entry> unsaved_;       // stored while the file could not be written
  FileStamp stamp_;                  // of the file file_entries_ came from
  std::unordered_map<CallSignature, Choice, CallSignatureHash> remembered_;
  std::string last_warning_;
  std::set<std::string> printed_;  // path and kind of the problems printed
};

}  // namespace bsrmm::tuner
