#include "observe/openmetrics.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace rlcheck::observe {
namespace {

static_assert(std::size(k_latency_bounds) == engine::k_live_metric_bounds_ns.size());

constexpr const char* k_outcomes[] = {"allowed", "denied", "error"};

std::string escaped(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class Writer {
 public:
  explicit Writer(Format format) : format_(format) {}

  // A family's HELP and TYPE. Counters are typed without `_total` in OpenMetrics (their samples
  // keep it); an info family is a gauge named `<name>_info` in Prometheus text.
  void family(std::string_view name, std::string_view type, std::string_view help) {
    std::string typed(name);
    std::string kind(type);
    if (format_ == Format::openmetrics) {
      if (type == "counter" && typed.ends_with("_total"))
        typed.resize(typed.size() - 6);
      if (type == "info")
        typed.resize(typed.size() - 5);
    } else if (type == "info") {
      kind = "gauge";
    }
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", typed, help, typed, kind);
  }

  void sample(std::string_view name, std::string_view labels, std::string_view value) {
    if (labels.empty())
      text_ += fmt::format("{} {}\n", name, value);
    else
      text_ += fmt::format("{}{{{}}} {}\n", name, labels, value);
  }

  std::string finish() {
    if (format_ == Format::openmetrics)
      text_ += "# EOF\n";
    return std::move(text_);
  }

 private:
  Format format_;
  std::string text_;
};

std::string number(double value) {
  if (std::isnan(value))
    return "NaN";
  if (std::isinf(value))
    return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

}  // namespace

Format negotiate(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos ? Format::openmetrics
                                                                               : Format::prometheus;
}

const char* content_type(Format format) {
  return format == Format::openmetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

std::string render(const engine::LiveSnapshot& snapshot, const Extras& extras, Format format) {
  Writer out(format);

  out.family("rlcheck_requests_total", "counter", "Requests decided, by outcome and run.");
  for (const engine::LiveRun& run : snapshot.runs) {
    for (size_t o = 0; o < std::size(k_outcomes); ++o) {
      std::string labels = fmt::format("outcome=\"{}\",run=\"{}\"", k_outcomes[o], run.run);
      if (extras.by_target)
        labels += fmt::format(",target=\"{}\"", escaped(run.target));
      out.sample("rlcheck_requests_total", labels, std::to_string(run.counts.decided[o]));
    }
  }

  out.family("rlcheck_errors_total", "counter", "Requests that errored, by kind of error.");
  for (size_t kind = 1; kind < engine::k_live_error_kinds; ++kind) {
    out.sample(
        "rlcheck_errors_total",
        fmt::format("kind=\"{}\"", engine::error_kind_name(static_cast<engine::ErrorKind>(kind))),
        std::to_string(snapshot.errors[kind]));
  }

  out.family("rlcheck_in_flight", "gauge", "Requests sent and not yet decided.");
  out.sample("rlcheck_in_flight", "", std::to_string(snapshot.in_flight));

  out.family("rlcheck_latency_seconds", "histogram",
             "Latency of decided requests (open model: from when each was due).");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < engine::k_live_metric_bounds_ns.size(); ++i) {
    cumulative += snapshot.within_bound[i];
    out.sample("rlcheck_latency_seconds_bucket", fmt::format("le=\"{}\"", k_latency_bounds[i]),
               std::to_string(cumulative));
  }
  out.sample("rlcheck_latency_seconds_bucket", "le=\"+Inf\"",
             std::to_string(snapshot.latency_count));
  out.sample("rlcheck_latency_seconds_sum", "",
             number(static_cast<double>(snapshot.latency_sum_ns) / 1e9));
  out.sample("rlcheck_latency_seconds_count", "", std::to_string(snapshot.latency_count));

  out.family("rlcheck_run", "gauge", "The run under way (1 is the first), 0 between runs.");
  out.sample(
      "rlcheck_run", "",
      std::to_string(snapshot.running && !snapshot.runs.empty() ? snapshot.runs.back().run : 0));

  if (extras.offered_rate) {
    out.family("rlcheck_offered_rate", "gauge",
               "Requests per second the schedule sends at (open model), during a run.");
    out.sample("rlcheck_offered_rate", "", number(*extras.offered_rate));
  }

  if (!extras.checks.empty()) {
    out.family("rlcheck_check_status", "gauge",
               "Each check of the judged test: 1 passed, 0 failed (skipped checks are absent).");
    for (const CheckStatus& check : extras.checks) {
      std::string labels = fmt::format("check=\"{}\"", escaped(check.check));
      if (extras.by_target)
        labels += fmt::format(",target=\"{}\"", escaped(check.target));
      out.sample("rlcheck_check_status", labels, check.pass ? "1" : "0");
    }
  }

  out.family("rlcheck_info", "info", "The rlcheck serving these metrics.");
  out.sample("rlcheck_info", fmt::format("version=\"{}\"", escaped(extras.version)), "1");
  return out.finish();
}

}  // namespace rlcheck::observe
