#include "cache_file.hpp"

#include "../common/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bsrmm::tuner {

namespace {

constexpr const char* format_name = "bsrmm-tuning-cache";
// Far above any real cache (an entry is ~400 bytes); a larger file is not ours to load.
constexpr int64_t max_file_bytes = 64ll << 20;

std::string system_error(int error) { return std::strerror(error); }

[[noreturn]] void io_failure(const std::string& what, const std::string& path, int error) {
  detail::fail(BSRMM_STATUS_IO_ERROR, what, " '", path, "': ", system_error(error));
}

// What a path that should be a regular file is instead: "a FIFO" (the words of a message).
const char* irregular_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string not_regular(mode_t mode) {
  return std::string("it is not a regular file (") + irregular_kind(mode) + ")";
}

// Opens `path` for `flags` without waiting on whatever it is (a FIFO's open blocks until the
// other end opens; O_NONBLOCK does not) and keeps the descriptor only if it is a regular file,
// as fstat on the open descriptor says (a check before open could be raced). Returns -1 with
// `refused` set to why the path is unusable; errno holds the system's reason when that is "".
int open_regular(const std::string& path, int flags, std::string& refused) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) return -1;
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  if (!S_ISREG(info.st_mode)) {
    close(fd);
    refused = not_regular(info.st_mode);
    return -1;
  }
  return fd;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string home_directory() {
  std::string home = env("HOME");
  if (!home.empty()) return home;
  const long size_hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::string buffer(size_hint > 0 ? static_cast<std::size_t>(size_hint) : 16384, '\0');
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
      found->pw_dir)
    return found->pw_dir;
  return "";
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// mkdir -p; new directories are private to the user, as XDG asks for cache directories.
void make_directories(const std::string& directory) {
  struct stat info {};
  if (directory.empty() || stat(directory.c_str(), &info) == 0) return;
  make_directories(parent_of(directory));
  if (mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST)
    io_failure("cannot create the directory", directory, errno);
}

bool read_all(int fd, std::string& text) {
  char buffer[65536];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got == 0) return true;
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.append(buffer, static_cast<std::size_t>(got));
    if (static_cast<int64_t>(text.size()) > max_file_bytes) {
      errno = EFBIG;
      return false;
    }
  }
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t wrote = write(fd, text.data() + done, text.size() - done);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      io_failure("cannot write", path, errno);
    }
    done += static_cast<std::size_t>(wrote);
  }
}

std::vector<Entry> parse_document(const std::string& text) {
  const Json document = parse_json(text);
  if (!document.is(Json::Kind::object)) throw JsonError("the document is not a JSON object");
  const Json* format = document.find("format");
  if (format == nullptr || !format->is(Json::Kind::string) || format->as_string() != format_name)
    throw JsonError(std::string("\"format\" is not \"") + format_name + "\"");
  const Json* version = document.find("format_version");
  if (version == nullptr || !version->is(Json::Kind::number))
    throw JsonError("\"format_version\" is missing");
  if (version->as_number() != cache_format_version) {
    std::string found = to_json_text(*version);
    found.pop_back();  // the newline
    throw JsonError("format_version " + found + " is not the version this library reads (" +
                    std::to_string(cache_format_version) + ")");
  }
  const Json* entries = document.find("entries");
  if (entries == nullptr || !entries->is(Json::Kind::array))
    throw JsonError("\"entries\" is not an array");
  std::vector<Entry> result;
  result.reserve(entries->items().size());
  for (std::size_t i = 0; i < entries->items().size(); ++i) {
    try {
      result.push_back(entry_from_json(entries->items()[i]));
    } catch (const JsonError& error) {
      throw JsonError("entries[" + std::to_string(i) + "]: " + error.what());
    }
  }
  return result;
}

FileStamp stamp_from(const struct stat& info) {
  FileStamp stamp;
  stamp.exists = true;
  stamp.device = static_cast<uint64_t>(info.st_dev);
  stamp.inode = static_cast<uint64_t>(info.st_ino);
  stamp.size = static_cast<int64_t>(info.st_size);
  stamp.modified_ns = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  return stamp;
}

// Holds "<path>.lock" exclusively for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : path_(path + ".lock") {
    std::string refused;
    fd_ = open_regular(path_, O_RDWR | O_CREAT, refused);
    if (fd_ < 0 && !refused.empty())
      detail::fail(BSRMM_STATUS_IO_ERROR, "cannot use the lock file '", path_, "': ", refused);
    if (fd_ < 0) io_failure("cannot open the lock file", path_, errno);
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd_);
      io_failure("cannot lock", path_, error);
    }
  }
  ~FileLock() {
    flock(fd_, LOCK_UN);
    close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

std::string default_cache_path() {
  const std::string explicit_path = env("BSRMM_TUNING_CACHE");
  if (!explicit_path.empty()) return explicit_path;
  const std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return xdg + "/bsrmm/tuning.json";
  const std::string home = home_directory();
  if (home.empty()) return "";
  return home + "/.cache/bsrmm/tuning.json";
}

bool FileStamp::operator==(const FileStamp& other) const {
  return exists == other.exists && device == other.device && inode == other.inode &&
         size == other.size && modified_ns == other.modified_ns;
}

FileStamp stamp_of(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return FileStamp{};
  return stamp_from(info);
}

CacheFile read_cache_file(const std::string& path) {
  CacheFile file;
  std::string refused;
  const int fd = open_regular(path, O_RDONLY, refused);
  if (fd < 0) {
    if (!refused.empty()) {
      file.ignored_because = refused;
    } else if (errno != ENOENT) {
      file.ignored_because = "it cannot be read: " + system_error(errno);
    }
    return file;
  }
  std::string text;
  const bool complete = read_all(fd, text);
  const int error = errno;
  // The stamp of what was read: a rename after this point shows up as a new stamp.
  struct stat info {};
  if (fstat(fd, &info) == 0) file.stamp = stamp_from(info);
  close(fd);
  if (!complete) {
    file.ignored_because = "it cannot be read: " + system_error(error);
    return file;
  }
  try {
    file.entries = parse_document(text);
  } catch (const JsonError& bad) {
    file.entries.clear();
    file.ignored_because = bad.what();
  }
  return file;
}

std::string cache_document(const std::vector<Entry>& entries) {
  return to_json_text(Json::object({{"format", Json::string(format_name)},
                                    {"format_version", Json::number(cache_format_version)},
                                    {"entries", entries_to_json(entries)}}));
}

CacheFile update_cache_file(const std::string& path,
                            const std::function<void(std::vector<Entry>&)>& change) {
  make_directories(parent_of(path));
  FileLock lock(path);
  // rename() would replace a FIFO or a device (as root, /dev/null) with the cache: a path that
  // exists must already be a regular file.
  struct stat existing {};
  if (stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))
    detail::fail(BSRMM_STATUS_IO_ERROR, "cannot replace '", path, "': ", not_regular(existing.st_mode));
  CacheFile file = read_cache_file(path);
  change(file.entries);
  const std::string text = cache_document(file.entries);

  std::string temporary = path + ".tmp.XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) io_failure("cannot create a temporary file beside", path, errno);
  try {
    write_all(fd, text, temporary);
    // mkstemp makes the file private. Keep the permissions a user gave the existing file (a
    // cache shared by a group); a new one is readable by all, as it holds nothing secret.
    struct stat existing {};
    const mode_t mode = stat(path.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : 0644;
    if (fchmod(fd, mode) != 0) io_failure("cannot set permissions of", temporary, errno);
    // The rename must not expose a file whose data are still in flight after a crash.
    if (fsync(fd) != 0) io_failure("cannot flush", temporary, errno);
  } catch (...) {
    close(fd);
    unlink(temporary.c_str());
    throw;
  }
  close(fd);
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    io_failure("cannot replace", path, error);
  }
  file.stamp = stamp_of(path);
  return file;
}

}  // namespace bsrmm::tuner
