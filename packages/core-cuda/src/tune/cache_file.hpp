// The tuning cache on disk: where it lives, reading it without trusting it, and the locked
// read-merge-write that lets any number of processes store into one file.
//
//   { "format": "bsrmm-tuning-cache", "format_version": 1, "entries": [ <Entry>, ... ] }
//
// Writers take an exclusive flock on "<path>.lock", re-read the file, apply their change to
// what it holds now, write a temporary file in the same directory and rename() it over the
// old one. Readers take no lock: rename is atomic, so a reader sees the old file or the new one,
// never half of either.
#pragma once

#include "cache_entry.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bsrmm::tuner {

constexpr int cache_format_version = 1;

// $BSRMM_TUNING_CACHE (a file path), else $XDG_CACHE_HOME/bsrmm/tuning.json (when absolute, as
// the XDG spec requires), else ~/.cache/bsrmm/tuning.json; "" when there is no home either.
std::string default_cache_path();

// What identifies one version of the file, to notice another process's write.
struct FileStamp {
  bool exists = false;
  uint64_t device = 0, inode = 0;
  int64_t size = 0, modified_ns = 0;
  bool operator==(const FileStamp& other) const;
  bool operator!=(const FileStamp& other) const { return !(*this == other); }
};
FileStamp stamp_of(const std::string& path);

struct CacheFile {
  std::vector<Entry> entries;
  // Why the file's content was ignored (unreadable, not JSON, truncated, another format
  // version, a malformed entry); "" when it was fine or does not exist.
  std::string ignored_because;
  FileStamp stamp;
};

// Never throws for a bad file: its content is then ignored and the reason given.
CacheFile read_cache_file(const std::string& path);

// Creates the directory if needed, then under the lock: re-reads the file (a bad one counts as
// empty), calls change(entries), and atomically replaces the file with the result. Returns what
// was written (ignored_because tells whether an existing file was discarded). Throws
// detail::Error(BSRMM_STATUS_IO_ERROR) naming the path and the system's reason.
CacheFile update_cache_file(const std::string& path,
                            const std::function<void(std::vector<Entry>&)>& change);

// The document for `entries` (what update_cache_file writes).
std::string cache_document(const std::vector<Entry>& entries);

}  // namespace bsrmm::tuner
