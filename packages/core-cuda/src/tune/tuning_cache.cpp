#include "tuning_cache.hpp"

#include "../common/error.hpp"

#include <algorithm>
#include <cstdio>

namespace bsrmm::tuner {

namespace {

void put(std::vector<Entry>& entries, const Entry& entry) {
  for (Entry& existing : entries) {
    if (same_slot(existing, entry)) {
      existing = entry;
      return;
    }
  }
  entries.push_back(entry);
}

}  // namespace

TuningCache& TuningCache::instance() {
  // Never destroyed: multiplies may still run from other threads while the process exits.
  static TuningCache* cache = new TuningCache();
  return *cache;
}

void TuningCache::warn_locked(const char* kind, const std::string& message) {
  last_warning_ = message;
  // Once per kind of problem and file: a corrupt file re-read after every change of it, or a
  // store that fails on every tuning, would otherwise repeat itself.
  if (printed_.insert(path_ + '\n' + kind).second)
    std::fprintf(stderr, "bsrmm: %s\n", message.c_str());
}

void TuningCache::refresh_locked() {
  const std::string current = default_cache_path();
  if (current != path_ || !loaded_) {
    path_ = current;
    file_entries_.clear();
    unsaved_.clear();
    stamp_ = FileStamp{};
    loaded_ = false;
    load_locked();
  }
}

void TuningCache::load_locked() {
  loaded_ = true;
  remembered_.clear();
  if (path_.empty()) {
    warn_locked("no location", "no tuning cache location (set BSRMM_TUNING_CACHE, XDG_CACHE_HOME or HOME); "
                "tuned choices are kept in memory for this process only");
    return;
  }
  CacheFile file = read_cache_file(path_);
  if (!file.ignored_because.empty()) {
    warn_locked("ignored", "ignoring the tuning cache '" + path_ + "': " + file.ignored_because +
                "; it will be rewritten on the next tuning");
  }
  file_entries_ = std::move(file.entries);
  stamp_ = file.stamp;
}

std::vector<Entry> TuningCache::merged_locked() const {
  std::vector<Entry> all = file_entries_;
  for (const Entry& entry : unsaved_) put(all, entry);
  return all;
}

std::string TuningCache::path() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  return path_;
}

std::optional<Entry> TuningCache::lookup(const std::string& key, const std::string& device) {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  Entry wanted;
  wanted.key = key;
  wanted.device = device;
  wanted.library_version = library_version();
  auto find = [&]() -> std::optional<Entry> {
    for (const std::vector<Entry>* list : {&unsaved_, &file_entries_})
      for (const Entry& entry : *list)
        if (same_slot(entry, wanted)) return entry;
    return std::nullopt;
  };
  if (std::optional<Entry> found = find()) return found;
  // Another process may have tuned this problem since the file was read.
  if (!path_.empty() && stamp_of(path_) != stamp_) {
    load_locked();
    return find();
  }
  return std::nullopt;
}

void TuningCache::store(const Entry& entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  put(unsaved_, entry);
  remembered_.clear();
  if (path_.empty()) return;
  try {
    const std::vector<Entry> pending = unsaved_;
    CacheFile written = update_cache_file(path_, [&](std::vector<Entry>& entries) {
      for (const Entry& update : pending) put(entries, update);
    });
    if (!written.ignored_because.empty()) {
      warn_locked("ignored", "replaced the tuning cache '" + path_ + "', whose content was ignored: " +
                  written.ignored_because);
    }
    file_entries_ = std::move(written.entries);
    stamp_ = written.stamp;
    unsaved_.clear();
  } catch (const detail::Error& error) {
    warn_locked("unwritable", std::string("cannot write the tuning cache: ") + error.what() +
                "; tuned choices are kept in memory for this process");
  }
}

void TuningCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  file_entries_.clear();
  unsaved_.clear();
  remembered_.clear();
  if (path_.empty() || !stamp_of(path_).exists) return;
  try {
    CacheFile written =
        update_cache_file(path_, [](std::vector<Entry>& entries) { entries.clear(); });
    stamp_ = written.stamp;
  } catch (const detail::Error&) {
    // The process forgets the entries all the same: the file is not re-read until another
    // process replaces it.
    stamp_ = stamp_of(path_);
    throw;
  }
}

std::vector<Entry> TuningCache::entries() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  if (!path_.empty() && stamp_of(path_) != stamp_) load_locked();
  return merged_locked();
}

std::string TuningCache::last_warning() {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_warning_;
}

std::optional<Choice> TuningCache::recall(const CallSignature& signature) {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  auto found = remembered_.find(signature);
  if (found == remembered_.end()) return std::nullopt;
  return found->second;
}

void TuningCache::remember(const CallSignature& signature, const Choice& choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  remembered_[signature] = choice;
}

}  // namespace bsrmm::tuner
