#include "runner/run_preflight.hpp"

#include <algorithm>
#include <fstream>
#include <string>

#include <sys/resource.h>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "faults/fault_applier.hpp"
#include "http/client_choice.hpp"
#include "net/stream.hpp"
#include "redis/endpoint.hpp"
#include "report/report_file.hpp"

namespace rlcheck::runner {
namespace {

constexpr int64_t k_descriptor_margin = 50;

std::string limit_text(rlim_t limit) {
  return limit == RLIM_INFINITY ? std::string("unlimited") : std::to_string(limit);
}

}  // namespace

void check_report_paths(const config::OutputConfig& output) {
  const std::pair<const char*, const std::string*> paths[] = {
      {"--report", &output.report_path},
      {"--junit", &output.junit_path},
      {"--html", &output.html_path},
  };
  for (const auto& [flag, path] : paths) {
    if (path->empty())
      continue;
    if (auto writable = report::check_writable(*path); !writable)
      throw base::cannot_test(fmt::format("{}: {}", flag, writable.error()));
  }
  if (const std::string& path = output.summary_md_path; !path.empty()) {
    auto writable =
        output.summary_md_append ? report::check_appendable(path) : report::check_writable(path);
    if (!writable)
      throw base::cannot_test(fmt::format("--summary-md: {}", writable.error()));
  }
}

void check_source_addresses(const std::vector<std::string>& addresses) {
  for (const std::string& address : addresses) {
    if (auto bindable = net::check_bindable(address); !bindable)
      throw base::cannot_test(fmt::format("--source-address: {}", bindable.error()));
  }
}

int64_t connections_needed(const config::Config& config, bool identity_per_source_address) {
  const auto addresses = static_cast<int64_t>(config.load.source_addresses.size());
  if (!identity_per_source_address || addresses <= 1)
    return config.load.concurrency;
  return config.load.concurrency * std::min(addresses, config.load.identities);
}

int64_t descriptors_needed(int64_t connections) {
  return connections + k_descriptor_margin;
}

void ensure_descriptors(int64_t needed, const std::string& what) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return;
  const auto want = static_cast<rlim_t>(needed);
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= want)
    return;
  if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= want) {
    rlimit raised = limit;
    raised.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
      return;
  }
  throw base::usage_error(fmt::format(
      "{} needs ~{} file descriptors; the limit is {} (soft) / {} (hard) (ulimit -n; raise the "
      "hard limit, or lower -p)",
      what, needed, limit_text(limit.rlim_cur), limit_text(limit.rlim_max)));
}

int64_t raise_descriptors_to_hard_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return -1;
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
      limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? -1 : static_cast<int64_t>(limit.rlim_cur);
}

}  // namespace rlcheck::runner
