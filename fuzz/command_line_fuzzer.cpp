// Fuzzes the command line as a whole: the input is argv after "rlcheck", NUL-separated, and
// every value goes through CLI11 and build_config's checks (counts, durations, rates, URLs,
// statuses, --fault, cross-flag rules). A bad command line must be a usage error (FatalError),
// never another exception. Arguments naming files to read ("@FILE" bodies) are left out: the
// fuzzer would read whatever the machine has.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/exit_code.hpp"
#include "cli/command_line.hpp"
#include "targets/target_kind.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rlcheck::targets::install_kinds();  // the command line's kinds of target, as main installs them
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (input.find('@') != std::string::npos)
    return 0;
  std::vector<std::string> args = {"rlcheck"};
  size_t start = 0;
  while (start <= input.size() && args.size() < 64) {
    const size_t end = std::min(input.find('\0', start), input.size());
    args.push_back(input.substr(start, end - start));
    start = end + 1;
  }
  std::vector<const char*> argv;
  for (const std::string& arg : args)
    argv.push_back(arg.c_str());
  try {
    (void)rlcheck::cli::parse_command_line(static_cast<int>(argv.size()), argv.data());
  } catch (const rlcheck::base::FatalError&) {
  }
  return 0;
}
