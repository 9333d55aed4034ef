#pragma once
// What a finished test hands the user: report files, stderr and stdout text, and the exit
// code. Made once, then emitted; many hosts: worker 0 makes it and publishes it, and every
// worker emits the same (so the job fails or passes as one).

#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace rlcheck::app {

struct ReportFile {
  std::string flag;  // --report, --junit, --html: named when the file cannot be written
  std::string path;
  std::string text;
};

struct Delivery {
  std::vector<ReportFile> files;
  std::string err;  // stderr
  std::string out;  // stdout
  int exit_code = 0;
};

std::string delivery_to_json(const Delivery& delivery);
std::expected<Delivery, std::string> delivery_from_json(std::string_view text);

// Writes each file whole (FatalError cannot_test naming its flag when it cannot be), then
// stderr, then stdout; returns the exit code.
int emit(const Delivery& delivery);

}  // namespace rlcheck::app
