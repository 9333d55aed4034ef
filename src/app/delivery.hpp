#pragma once
// What a finished test hands the user: report files, stderr and stdout text, and the exit
// code. Made once, then emitted; many hosts: worker 0 makes it and publishes it, and every
// worker emits the same (so the job fails or passes as one), writing the report files where
// its own command line says.

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::app {

struct ReportFile {
  std::string flag;  // --report, --junit, --html, --summary-md: named when it cannot be written
  std::string path;  // empty: not written here (many hosts: rendered for the other workers)
  std::string text;
  bool append = false;  // added at the file's end (--summary-md auto), not written whole
};

struct Delivery {
  std::vector<ReportFile> files;
  std::string err;  // stderr
  std::string out;  // stdout
  int exit_code = 0;
};

std::string delivery_to_json(const Delivery& delivery);
std::expected<Delivery, std::string> delivery_from_json(std::string_view text);

// Many hosts, a worker other than 0: the delivery worker 0 published, each file to be written
// at the path this worker's command line gives its flag (a flag it does not give: not
// written). A delivery without files (worker 0 could not finish) stays without. Fails naming
// the flag when this worker names a report the published delivery does not hold.
std::expected<Delivery, std::string> addressed_to(Delivery published,
                                                  const config::OutputConfig& output);

// Writes each file that has a path whole, or appends to it (FatalError cannot_test naming its
// flag when it cannot be), then stderr, then stdout; returns the exit code.
int emit(const Delivery& delivery);

}  // namespace rlcheck::app
