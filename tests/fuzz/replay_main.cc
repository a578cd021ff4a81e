// Replays a fuzz target over a fixed corpus (the files in the directories
// given as arguments) and over inputs from a fixed-seed generator, so
// `bazel test` runs what the fuzzer found without needing libFuzzer.
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  size_t files = 0, generated = 0;
  for (int i = 1; i < argc; ++i) {
    DIR* dir = opendir(argv[i]);
    if (dir == nullptr) {
      fprintf(stderr, "cannot open corpus %s\n", argv[i]);
      return 1;
    }
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(std::string(argv[i]) + "/" + e->d_name,
                       std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string s = ss.str();
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()),
                             s.size());
      ++files;
    }
    closedir(dir);
  }
  std::mt19937 rng(20261130);
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> data(rng() % 4096);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    LLVMFuzzerTestOneInput(data.data(), data.size());
    ++generated;
  }
  printf("replayed %zu corpus files and %zu generated inputs\n", files,
         generated);
  return files == 0 && argc > 1 ? 1 : 0;  // an empty corpus is a mistake
}
