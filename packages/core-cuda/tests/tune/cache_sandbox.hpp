// Points BSRMM_TUNING_CACHE at a file in a fresh temporary directory for one test and removes
// the directory afterwards, so no test reads or writes the user's cache and every test starts
// from an empty one. Children spawned meanwhile inherit the variable.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <unistd.h>

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

// Runs `body` on a thread of its own and fails the test if it has not returned after 5 s,
// stuck opening the FIFO at `fifo` (an open for reading waits for a writer): the test then opens
// the writing end itself, so the stuck open returns and the test fails instead of hanging.
template <typename Body>
void expect_no_wait_on_fifo(const std::string& fifo, Body&& body) {
  std::future<void> done = std::async(std::launch::async, std::forward<Body>(body));
  if (done.wait_for(std::chrono::seconds(5)) == std::future_status::ready) {
    done.get();
    return;
  }
  ADD_FAILURE() << "still waiting on the FIFO '" << fifo << "' after 5 s";
  for (;;) {
    const int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0) close(writer);
    if (done.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) break;
  }
  done.get();
}

}  // namespace bsrmm::test
