// Fuzzes scenario files: JSON turned into the equivalent command line (keys checked against the
// CLI's own options, paths resolved against the file's folder). The input is written to a file
// in a private folder, as `rlcheck run` reads one.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "suite/scenario.hpp"
#include "targets/target_kind.hpp"

namespace {

const std::string& scenario_path() {
  static const std::string path = [] {
    const auto folder = std::filesystem::temp_directory_path() /
                        ("rlcheck-scenario-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(folder);
    return (folder / "scenario.json").string();
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rlcheck::targets::install_kinds();  // the command line's kinds of target, as main installs them
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scenario_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  if (auto scenario = rlcheck::suite::load_scenario(path); scenario) {
    if (scenario->argv.size() < 2 || scenario->argv[0] != "rlcheck")
      __builtin_trap();  // a command line always names the program and its mode
  }
  return 0;
}
