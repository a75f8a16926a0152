// The cache between processes: a second process takes the first one's choice without measuring,
// FORCE in another process measures anyway, processes tuning one problem at once leave a valid
// file, and processes storing into one file at the same time leave a valid file holding every
// entry (the flock'd read-merge-write).
#include "cache_sandbox.hpp"
#include "tune/cache_file.hpp"
#include "tune/tuner.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <sys/wait.h>

#ifndef BSRMM_TUNE_CHILD
#error "BSRMM_TUNE_CHILD must name the bsrmm_tune_child executable (tests/tune/CMakeLists.txt)"
#endif

namespace bsrmm::test {
namespace {

// A running child; BSRMM_TUNING_CACHE is inherited from this process.
class Child {
 public:
  explicit Child(const std::string& arguments) {
    const std::string command = std::string(BSRMM_TUNE_CHILD) + " " + arguments + " 2>&1";
    pipe_ = popen(command.c_str(), "r");
    if (pipe_ == nullptr) ADD_FAILURE() << "cannot start " << command;
  }
  // Waits for the child; its output, with a failure when it exits non-zero.
  std::string finish() {
    std::string output;
    if (pipe_ == nullptr) return output;
    char buffer[4096];
    size_t got;
    while ((got = fread(buffer, 1, sizeof(buffer), pipe_)) > 0) output.append(buffer, got);
    const int status = pclose(pipe_);
    pipe_ = nullptr;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed:\n" << output;
    return output;
  }
  ~Child() {
    if (pipe_) finish();
  }

 private:
  FILE* pipe_ = nullptr;
};

struct Multiplied {
  int measurements = -1;
  std::string variant;
};

// The child's result line.
Multiplied parse_multiplied(const std::string& output) {
  std::smatch match;
  Multiplied result;
  if (!std::regex_search(output, match, std::regex("measurements=(\\d+) variant=(\\S+)"))) {
    ADD_FAILURE() << "no result line in the child's output:\n" << output;
    return result;
  }
  result.measurements = std::stoi(match[1]);
  result.variant = match[2];
  return result;
}

Multiplied multiply_in_child(uint64_t seed, const char* mode, int calls = 1) {
  return parse_multiplied(
      Child("multiply " + std::to_string(seed) + " " + mode + " " + std::to_string(calls)).finish());
}

TEST(CrossProcess, ASecondProcessReusesTheChoiceWithoutMeasuring) {
  CacheSandbox sandbox;
  EXPECT_EQ(multiply_in_child(6, "auto", tuner::auto_tuning_call - 1).measurements, 0)
      << "AUTO does not tune a key before its third call in a process";
  EXPECT_FALSE(tuner::read_cache_file(sandbox.path()).stamp.exists);
  const Multiplied first = multiply_in_child(7, "auto", tuner::auto_tuning_call);
  EXPECT_EQ(first.measurements, 1);
  const tuner::CacheFile after_first = tuner::read_cache_file(sandbox.path());
  ASSERT_EQ(after_first.entries.size(), 1u);
  EXPECT_EQ(after_first.entries[0].variant, first.variant);

  // Other values, the same key: a cached key serves AUTO from its first call.
  const Multiplied second = multiply_in_child(8, "auto");
  EXPECT_EQ(second.measurements, 0);
  EXPECT_EQ(second.variant, first.variant);
  const tuner::CacheFile after_second = tuner::read_cache_file(sandbox.path());
  ASSERT_EQ(after_second.entries.size(), 1u);
  EXPECT_EQ(after_second.entries[0].measured_at, after_first.entries[0].measured_at);
  EXPECT_EQ(after_second.stamp, after_first.stamp) << "a reusing process does not write";

  const Multiplied forced = multiply_in_child(9, "force");
  EXPECT_EQ(forced.measurements, 1) << "FORCE measures whatever the cache holds";
  const Multiplied off = multiply_in_child(9, "off");
  EXPECT_EQ(off.measurements, 0);
  EXPECT_TRUE(off.variant == "cpu_rowwise_simd" || off.variant == "cpu_blocked_simd") << off.variant;
}

// Processes tuning the same problem at the same moment (FORCE: each measures and stores): every
// child checks its C against float64, the file stays valid with the one key, holding a choice
// one of them made, and a later process takes that choice without measuring.
TEST(CrossProcess, ProcessesTuningAtOnceKeepAValidCache) {
  CacheSandbox sandbox;
  constexpr int processes = 4;
  std::vector<std::unique_ptr<Child>> children;
  for (int p = 0; p < processes; ++p)
    children.push_back(std::make_unique<Child>("multiply " + std::to_string(20 + p) + " force"));
  std::set<std::string> chosen;
  for (auto& child : children) {
    const Multiplied tuned = parse_multiplied(child->finish());
    EXPECT_EQ(tuned.measurements, 1);
    chosen.insert(tuned.variant);
  }
  const tuner::CacheFile file = tuner::read_cache_file(sandbox.path());
  EXPECT_EQ(file.ignored_because, "");
  ASSERT_EQ(file.entries.size(), 1u) << "one problem, one entry";
  EXPECT_EQ(chosen.count(file.entries[0].variant), 1u) << file.entries[0].variant << " was chosen by no process";
  const Multiplied reader = multiply_in_child(30, "auto");
  EXPECT_EQ(reader.measurements, 0);
  EXPECT_EQ(reader.variant, file.entries[0].variant);
  std::printf("[ stress   ] %d processes tuned one problem into one cache at once; another reused the choice\n",
              processes);
}

TEST(CrossProcess, ConcurrentWritersKeepEveryEntry) {
  CacheSandbox sandbox;
  constexpr int processes = 4;
  constexpr int stores = 20;
  {
    std::vector<std::unique_ptr<Child>> children;
    for (int p = 0; p < processes; ++p)
      children.push_back(std::make_unique<Child>("store writer" + std::to_string(p) + " " +
                                                 std::to_string(stores)));
    for (auto& child : children) child->finish();
  }
  const tuner::CacheFile file = tuner::read_cache_file(sandbox.path());
  EXPECT_EQ(file.ignored_because, "");
  std::set<std::string> keys;
  for (const tuner::Entry& entry : file.entries) keys.insert(entry.key);
  EXPECT_EQ(file.entries.size(), static_cast<size_t>(processes * stores));
  for (int p = 0; p < processes; ++p)
    for (int i = 0; i < stores; ++i) {
      const std::string key = "writer" + std::to_string(p) + "-" + std::to_string(i);
      EXPECT_EQ(keys.count(key), 1u) << key << " was lost";
    }
  for (const auto& item : std::filesystem::directory_iterator(sandbox.dir())) {
    const std::string name = item.path().filename().string();
    EXPECT_TRUE(name == "tuning.json" || name == "tuning.json.lock") << "left behind: " << name;
  }
}

}  // namespace
}  // namespace bsrmm::test
