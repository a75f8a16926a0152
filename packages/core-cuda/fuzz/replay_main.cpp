// Runs a fuzz target's LLVMFuzzerTestOneInput once on each file named on the command line (a
// directory: each file in it), without libFuzzer. Every build replays the committed corpus and
// the regression inputs this way, so a fixed crash stays fixed with any compiler.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void replay(const std::filesystem::path& file) {
  std::ifstream stream(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  long replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (!entry.is_regular_file() || entry.path().filename().string().front() == '.') continue;
        replay(entry.path());
        ++replayed;
      }
    } else if (std::filesystem::is_regular_file(path)) {
      replay(path);
      ++replayed;
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  std::printf("replay %s: %ld inputs ran cleanly\n", std::filesystem::path(argv[0]).filename().c_str(), replayed);
  return replayed > 0 ? 0 : 2;
}
