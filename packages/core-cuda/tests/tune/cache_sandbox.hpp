// Points BSRMM_TUNING_CACHE at a file in a fresh temporary directory for one test and removes
// the directory afterwards, so no test reads or writes the user's cache and every test starts
// from an empty one. Children spawned meanwhile inherit the variable.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace bsrmm::test {

class CacheSandbox {
 public:
  CacheSandbox() {
    std::string pattern = (std::filesystem::temp_directory_path() / "bsrmm-tune-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = pattern;
    if (const char* previous = std::getenv("BSRMM_TUNING_CACHE")) previous_ = previous;
    setenv("BSRMM_TUNING_CACHE", path().c_str(), 1);
  }
  ~CacheSandbox() {
    if (previous_.empty()) unsetenv("BSRMM_TUNING_CACHE");
    else setenv("BSRMM_TUNING_CACHE", previous_.c_str(), 1);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  CacheSandbox(const CacheSandbox&) = delete;
  CacheSandbox& operator=(const CacheSandbox&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path() const { return dir_ + "/tuning.json"; }
  // Redirects the cache to another path (inside the sandbox or not) for the rest of the test.
  void use(const std::string& path) const { setenv("BSRMM_TUNING_CACHE", path.c_str(), 1); }

  std::string read() const {
    std::ifstream file(path(), std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
  }
  void write(const std::string& text) const {
    std::ofstream file(path(), std::ios::binary | std::ios::trunc);
    file << text;
  }

 private:
  std::string dir_;
  std::string previous_;
};

}  // namespace bsrmm::test
