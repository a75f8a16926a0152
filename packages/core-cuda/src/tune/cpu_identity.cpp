#include "cpu_identity.hpp"

#include "../common/thread_pool.hpp"

#include <fstream>

namespace bsrmm::tuner {

namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    // x86 says "model name", many arm64 kernels only "Hardware" or nothing.
    for (const char* field : {"model name", "Hardware"}) {
      if (line.rfind(field, 0) != 0) continue;
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::size_t start = line.find_first_not_of(" \t", colon + 1);
      if (start != std::string::npos) return line.substr(start);
    }
  }
  return "cpu";
}

}  // namespace

std::string cpu_identity() {
  static const std::string identity =
      cpu_model() + " (" + std::to_string(detail::hardware_threads()) + " hardware threads)";
  return identity;
}

}  // namespace bsrmm::tuner
