// The cache file: a round trip, merge with what another writer stored, and every kind of bad
// file (garbage, truncated, another format version, a malformed entry, an unwritable place)
// ignored with a reason, never trusted, and replaced by the next write.
#include "tune/cache_file.hpp"

#include "../../src/common/error.hpp"
#include "cache_sandbox.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace bsrmm::tuner {
namespace {

Entry sample(const std::string& key, const std::string& variant = "cpu_blocked_simd") {
  Entry e;
  e.key = key;
  e.device = "test cpu (2 hardware threads)";
  e.library_version = library_version();
  e.variant = variant;
  e.threads = 2;
  e.time_ms = 0.125;
  e.candidates = 4;
  e.measured_at = utc_timestamp();
  return e;
}

void expect_same(const Entry& a, const Entry& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.library_version, b.library_version);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.time_ms, b.time_ms);
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.measured_at, b.measured_at);
}

TEST(CacheFile, MissingFileIsEmptyAndFine) {
  test::CacheSandbox sandbox;
  const CacheFile file = read_cache_file(sandbox.path());
  EXPECT_TRUE(file.entries.empty());
  EXPECT_EQ(file.ignored_because, "");
  EXPECT_FALSE(file.stamp.exists);
}

TEST(CacheFile, RoundTripCreatesDirectories) {
  test::CacheSandbox sandbox;
  const std::string path = sandbox.dir() + "/deeper/still/tuning.json";
  const std::vector<Entry> entries{sample("k1"), sample("k\"2\\", "sm90_x")};
  const CacheFile written =
      update_cache_file(path, [&](std::vector<Entry>& current) { current = entries; });
  EXPECT_EQ(written.ignored_because, "");
  EXPECT_TRUE(written.stamp.exists);
  EXPECT_EQ(stamp_of(path), written.stamp);

  const CacheFile read = read_cache_file(path);
  EXPECT_EQ(read.ignored_because, "");
  ASSERT_EQ(read.entries.size(), 2u);
  expect_same(read.entries[0], entries[0]);
  expect_same(read.entries[1], entries[1]);
  EXPECT_EQ(read.stamp, written.stamp);

  struct stat info {};
  ASSERT_EQ(stat((sandbox.dir() + "/deeper").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u) << "new cache directories are private (XDG)";
  for (const auto& item : std::filesystem::directory_iterator(sandbox.dir() + "/deeper/still")) {
    const std::string name = item.path().filename().string();
    EXPECT_TRUE(name == "tuning.json" || name == "tuning.json.lock") << "left behind: " << name;
  }
}

TEST(CacheFile, UpdateMergesWithWhatIsOnDiskNow) {
  test::CacheSandbox sandbox;
  update_cache_file(sandbox.path(), [](std::vector<Entry>& e) { e.push_back(sample("mine")); });
  // Another process stores meanwhile: the next update must start from its file, not from ours.
  update_cache_file(sandbox.path(), [](std::vector<Entry>& e) { e.push_back(sample("theirs")); });
  const CacheFile file = read_cache_file(sandbox.path());
  ASSERT_EQ(file.entries.size(), 2u);
  EXPECT_EQ(file.entries[0].key, "mine");
  EXPECT_EQ(file.entries[1].key, "theirs");
}

TEST(CacheFile, KeepsTheUsersPermissions) {
  test::CacheSandbox sandbox;
  update_cache_file(sandbox.path(), [](std::vector<Entry>& e) { e.push_back(sample("a")); });
  ASSERT_EQ(chmod(sandbox.path().c_str(), 0640), 0);
  update_cache_file(sandbox.path(), [](std::vector<Entry>& e) { e.push_back(sample("b")); });
  struct stat info {};
  ASSERT_EQ(stat(sandbox.path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

struct BadFile {
  const char* what;
  std::string text;
  const char* reason;  // a part of the reason given
};

std::vector<BadFile> bad_files() {
  const std::string valid = cache_document({sample("k1"), sample("k2")});
  std::string wrong_version = valid;
  wrong_version.replace(wrong_version.find("\"format_version\": 1"), 19, "\"format_version\": 2");
  std::string missing_field = valid;
  missing_field.replace(missing_field.find("\"variant\""), 9, "\"variety\"");
  std::string negative_threads = valid;
  negative_threads.replace(negative_threads.find("\"threads\": 2"), 12, "\"threads\": -1");
  std::string empty_variant = valid;
  empty_variant.replace(empty_variant.find("\"cpu_blocked_simd\""), 18, "\"\"");
  return {
      {"garbage", "this is not json at all", "invalid JSON"},
      {"empty", "", "truncated"},
      {"truncated", valid.substr(0, valid.size() / 2), "truncated"},
      {"binary", std::string("\0\x01\x02{", 4), "invalid JSON"},
      {"a list", "[]", "not a JSON object"},
      {"another program's JSON", R"({"entries": []})", "\"format\""},
      {"another format version", wrong_version, "format_version 2"},
      {"a missing field", missing_field, "entries[0]: entry has no \"variant\""},
      {"a negative count", negative_threads, "\"threads\" is not a count"},
      {"an empty variant", empty_variant, "\"variant\" is empty"},
  };
}

TEST(CacheFile, BadFilesAreIgnoredWithAReasonAndReplacedOnUpdate) {
  for (const BadFile& bad : bad_files()) {
    SCOPED_TRACE(bad.what);
    test::CacheSandbox sandbox;
    sandbox.write(bad.text);
    const CacheFile read = read_cache_file(sandbox.path());
    EXPECT_TRUE(read.entries.empty()) << "a bad file's entries are never trusted";
    EXPECT_NE(read.ignored_because.find(bad.reason), std::string::npos) << read.ignored_because;

    const CacheFile written = update_cache_file(
        sandbox.path(), [](std::vector<Entry>& e) { e.push_back(sample("fresh")); });
    EXPECT_NE(written.ignored_because, "");
    const CacheFile again = read_cache_file(sandbox.path());
    EXPECT_EQ(again.ignored_because, "") << "the next write leaves a valid file";
    ASSERT_EQ(again.entries.size(), 1u);
    EXPECT_EQ(again.entries[0].key, "fresh");
  }
}

TEST(CacheFile, UnwritableLocationIsAnIoError) {
  test::CacheSandbox sandbox;
  sandbox.write("a file where a directory should be");
  const std::string path = sandbox.path() + "/tuning.json";  // its parent is a regular file
  try {
    update_cache_file(path, [](std::vector<Entry>& e) { e.push_back(sample("x")); });
    FAIL() << "wrote below a regular file";
  } catch (const detail::Error& error) {
    EXPECT_EQ(error.status(), BSRMM_STATUS_IO_ERROR);
    EXPECT_NE(std::string(error.what()).find(sandbox.path()), std::string::npos) << error.what();
  }
  const CacheFile read = read_cache_file(path);
  EXPECT_TRUE(read.entries.empty());
}

// A FIFO would block open() until a writer came (every multiply of the process would hang), and
// rename() would replace it, or a device, with the cache: neither is read, written or replaced.
TEST(CacheFile, NonRegularFilesAreRefusedWithoutWaiting) {
  test::CacheSandbox sandbox;
  ASSERT_EQ(mkfifo(sandbox.path().c_str(), 0600), 0);
  test::expect_no_wait_on_fifo(sandbox.path(), [&] {
    const CacheFile read = read_cache_file(sandbox.path());
    EXPECT_TRUE(read.entries.empty());
    EXPECT_EQ(read.ignored_because, "it is not a regular file (a FIFO)");
  });
  test::expect_no_wait_on_fifo(sandbox.path(), [&] {
    try {
      update_cache_file(sandbox.path(), [](std::vector<Entry>& e) { e.push_back(sample("x")); });
      ADD_FAILURE() << "replaced a FIFO";
    } catch (const detail::Error& error) {
      EXPECT_EQ(error.status(), BSRMM_STATUS_IO_ERROR);
      EXPECT_EQ(std::string(error.what()),
                "cannot replace '" + sandbox.path() + "': it is not a regular file (a FIFO)");
    }
  });
  EXPECT_TRUE(std::filesystem::is_fifo(sandbox.path())) << "the FIFO is left as it was";

  EXPECT_EQ(read_cache_file("/dev/null").ignored_because,
            "it is not a regular file (a character device)");

  const std::string lock = sandbox.dir() + "/other.json.lock";
  ASSERT_EQ(mkfifo(lock.c_str(), 0600), 0);
  try {
    update_cache_file(sandbox.dir() + "/other.json", [](std::vector<Entry>&) {});
    FAIL() << "locked through a FIFO";
  } catch (const detail::Error& error) {
    EXPECT_EQ(error.status(), BSRMM_STATUS_IO_ERROR);
    EXPECT_NE(std::string(error.what()).find("lock file '" + lock + "': it is not a regular file (a FIFO)"),
              std::string::npos)
        << error.what();
  }
}

TEST(CacheFile, DefaultPathFollowsTheEnvironment) {
  test::CacheSandbox sandbox;  // restores BSRMM_TUNING_CACHE afterwards
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = xdg ? xdg : "";
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";

  EXPECT_EQ(default_cache_path(), sandbox.path());
  unsetenv("BSRMM_TUNING_CACHE");
  setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  EXPECT_EQ(default_cache_path(), "/xdg/cache/bsrmm/tuning.json");
  setenv("XDG_CACHE_HOME", "relative/cache", 1);  // the XDG spec says to ignore it
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_cache_path(), "/home/someone/.cache/bsrmm/tuning.json");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_cache_path(), "/home/someone/.cache/bsrmm/tuning.json");

  if (saved_xdg.empty()) unsetenv("XDG_CACHE_HOME");
  else setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (saved_home.empty()) unsetenv("HOME");
  else setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace bsrmm::tuner
