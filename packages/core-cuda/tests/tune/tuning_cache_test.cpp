// The process-wide cache: lookups match key, device and library version; another process's
// stores are seen; a bad or unwritable file never fails anything, warns once on stderr and is
// queryable; a change of BSRMM_TUNING_CACHE switches files.
#include "tune/tuning_cache.hpp"

#include "../../src/common/error.hpp"
#include "cache_sandbox.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <sys/stat.h>

namespace bsrmm::tuner {
namespace {

Entry sample(const std::string& key, const std::string& device = "dev") {
  Entry e;
  e.key = key;
  e.device = device;
  e.library_version = library_version();
  e.variant = "cpu_blocked_simd";
  e.threads = 1;
  e.time_ms = 1.5;
  e.candidates = 2;
  e.measured_at = utc_timestamp();
  return e;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TuningCache, LookupMatchesKeyDeviceAndVersion) {
  test::CacheSandbox sandbox;
  TuningCache& cache = TuningCache::instance();
  EXPECT_EQ(cache.path(), sandbox.path());
  EXPECT_FALSE(cache.lookup("k", "dev"));
  cache.store(sample("k"));
  ASSERT_TRUE(cache.lookup("k", "dev"));
  EXPECT_EQ(cache.lookup("k", "dev")->variant, "cpu_blocked_simd");
  EXPECT_FALSE(cache.lookup("k", "another device"));
  EXPECT_FALSE(cache.lookup("k2", "dev"));

  Entry old = sample("k");
  old.library_version = "0.0.1";
  old.variant = "cpu_reference_f64acc";
  update_cache_file(sandbox.path(), [&](std::vector<Entry>& e) { e.push_back(old); });
  EXPECT_EQ(cache.lookup("k", "dev")->variant, "cpu_blocked_simd")
      << "another library version's entry is kept but not used";
  EXPECT_EQ(cache.entries().size(), 2u);

  Entry replaced = sample("k");
  replaced.variant = "cpu_reference_f64acc";
  cache.store(replaced);
  EXPECT_EQ(cache.lookup("k", "dev")->variant, "cpu_reference_f64acc");
  EXPECT_EQ(read_cache_file(sandbox.path()).entries.size(), 2u) << "replaced, not appended";
}

TEST(TuningCache, SeesAnotherProcesssStore) {
  test::CacheSandbox sandbox;
  TuningCache& cache = TuningCache::instance();
  cache.store(sample("ours"));
  EXPECT_FALSE(cache.lookup("theirs", "dev"));
  // What another process does: a locked read-merge-write of the same file.
  update_cache_file(sandbox.path(), [](std::vector<Entry>& e) { e.push_back(sample("theirs")); });
  EXPECT_TRUE(cache.lookup("theirs", "dev"));
  EXPECT_TRUE(cache.lookup("ours", "dev"));
}

TEST(TuningCache, CorruptFileWarnsOnceAndIsRewritten) {
  test::CacheSandbox sandbox;
  sandbox.write("{\"format\": \"bsrmm-tuning-cache\", \"format_version\": 1, \"entries\": [");
  TuningCache& cache = TuningCache::instance();
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.lookup("k", "dev"));
  const std::string warning = cache.last_warning();
  EXPECT_TRUE(contains(warning, "ignoring the tuning cache '" + sandbox.path() + "'")) << warning;
  EXPECT_TRUE(contains(warning, "truncated")) << warning;
  // The same problem met again (the file is re-read when it changes) is not printed again.
  sandbox.write("{\"format\": \"bsrmm-tuning-cache\", \"format_version\": 1, \"entries\": [ ");
  EXPECT_FALSE(cache.lookup("k", "dev"));
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(printed, "bsrmm: ignoring the tuning cache")) << printed;
  EXPECT_EQ(printed.find("bsrmm: ignoring"), printed.rfind("bsrmm: ignoring")) << printed;

  testing::internal::CaptureStderr();
  cache.store(sample("k"));
  testing::internal::GetCapturedStderr();
  const CacheFile file = read_cache_file(sandbox.path());
  EXPECT_EQ(file.ignored_because, "");
  ASSERT_EQ(file.entries.size(), 1u);
  EXPECT_EQ(file.entries[0].key, "k");
}

TEST(TuningCache, UnwritableFileKeepsChoicesInMemory) {
  test::CacheSandbox sandbox;
  sandbox.write("not a directory");
  sandbox.use(sandbox.path() + "/tuning.json");  // below a regular file: cannot be created
  TuningCache& cache = TuningCache::instance();
  testing::internal::CaptureStderr();
  cache.store(sample("k"));
  cache.store(sample("k2"));
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(printed, "bsrmm: cannot write the tuning cache")) << printed;
  EXPECT_EQ(printed.find("bsrmm: cannot"), printed.rfind("bsrmm: cannot")) << "printed once";
  EXPECT_TRUE(contains(cache.last_warning(), "kept in memory")) << cache.last_warning();
  ASSERT_TRUE(cache.lookup("k", "dev")) << "the choice still serves this process";
  EXPECT_EQ(cache.entries().size(), 2u);
  cache.clear();  // nothing on disk to clear
  EXPECT_FALSE(cache.lookup("k", "dev"));
}

TEST(TuningCache, ADirectoryInPlaceOfTheFileIsNeverFatal) {
  test::CacheSandbox sandbox;
  const std::string directory = sandbox.dir() + "/a_directory";
  ASSERT_TRUE(std::filesystem::create_directory(directory));
  sandbox.use(directory);
  TuningCache& cache = TuningCache::instance();
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.lookup("k", "dev"));
  EXPECT_TRUE(contains(cache.last_warning(), "it is not a regular file (a directory)")) << cache.last_warning();
  cache.store(sample("k"));
  EXPECT_TRUE(contains(cache.last_warning(), "cannot write")) << cache.last_warning();
  EXPECT_TRUE(cache.lookup("k", "dev"));
  EXPECT_THROW(cache.clear(), detail::Error) << "an explicit clear reports the failure";
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.lookup("k", "dev")) << "and forgets the entries all the same";
  EXPECT_TRUE(std::filesystem::is_directory(directory));
}

TEST(TuningCache, AFifoInPlaceOfTheFileIsNeverWaitedOn) {
  test::CacheSandbox sandbox;
  ASSERT_EQ(mkfifo(sandbox.path().c_str(), 0600), 0);
  TuningCache& cache = TuningCache::instance();
  testing::internal::CaptureStderr();
  test::expect_no_wait_on_fifo(sandbox.path(), [&] {
    EXPECT_FALSE(cache.lookup("k", "dev"));
    EXPECT_TRUE(contains(cache.last_warning(), "it is not a regular file (a FIFO)")) << cache.last_warning();
    cache.store(sample("k"));
    EXPECT_TRUE(contains(cache.last_warning(), "cannot write")) << cache.last_warning();
    EXPECT_TRUE(cache.lookup("k", "dev")) << "the choice is kept in memory";
  });
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(printed, "bsrmm: ignoring the tuning cache")) << printed;
  EXPECT_TRUE(std::filesystem::is_fifo(sandbox.path()));
}

TEST(TuningCache, FollowsBsrmmTuningCache) {
  test::CacheSandbox sandbox;
  TuningCache& cache = TuningCache::instance();
  cache.store(sample("first file"));
  sandbox.use(sandbox.dir() + "/other.json");
  EXPECT_EQ(cache.path(), sandbox.dir() + "/other.json");
  EXPECT_FALSE(cache.lookup("first file", "dev"));
  cache.store(sample("second file"));
  sandbox.use(sandbox.path());
  EXPECT_TRUE(cache.lookup("first file", "dev"));
  EXPECT_FALSE(cache.lookup("second file", "dev"));
}

TEST(TuningCache, ClearEmptiesMemoryAndFile) {
  test::CacheSandbox sandbox;
  TuningCache& cache = TuningCache::instance();
  cache.store(sample("a"));
  cache.store(sample("b"));
  EXPECT_EQ(cache.entries().size(), 2u);
  cache.clear();
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_FALSE(cache.lookup("a", "dev"));
  const CacheFile file = read_cache_file(sandbox.path());
  EXPECT_EQ(file.ignored_because, "");
  EXPECT_TRUE(file.entries.empty());
}

}  // namespace
}  // namespace bsrmm::tuner
