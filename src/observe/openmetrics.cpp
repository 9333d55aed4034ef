#include "observe/openmetrics.hpp"

#include <algorithm>
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
  // compare: the targets in the order their first run began, each series labelled with one;
  // else a single unnamed target, and no label.
  std::vector<std::string> targets;
  if (extras.by_target) {
    for (const engine::LiveRun& run : snapshot.runs) {
      if (std::ranges::find(targets, run.target) == targets.end())
        targets.push_back(run.target);
    }
  } else {
    targets.emplace_back();
  }
  const auto labelled = [&](std::string labels, const std::string& target) {
    if (extras.by_target)
      labels += fmt::format("{}target=\"{}\"", labels.empty() ? "" : ",", escaped(target));
    return labels;
  };
  // The target of the latest run: in flight, its run and its rate are that target's.
  const std::string current = snapshot.runs.empty() ? std::string() : snapshot.runs.back().target;

  out.family("rlcheck_requests_total", "counter", "Requests decided, by outcome and run.");
  for (const engine::LiveRun& run : snapshot.runs) {
    for (size_t o = 0; o < std::size(k_outcomes); ++o) {
      out.sample(
          "rlcheck_requests_total",
          labelled(fmt::format("outcome=\"{}\",run=\"{}\"", k_outcomes[o], run.run), run.target),
          std::to_string(run.counts.decided[o]));
    }
  }

  out.family("rlcheck_errors_total", "counter", "Requests that errored, by kind of error and run.");
  for (const engine::LiveRun& run : snapshot.runs) {
    for (size_t kind = 1; kind < engine::k_live_error_kinds; ++kind) {
      const char* name = engine::error_kind_name(static_cast<engine::ErrorKind>(kind));
      out.sample("rlcheck_errors_total",
                 labelled(fmt::format("kind=\"{}\",run=\"{}\"", name, run.run), run.target),
                 std::to_string(run.detail.errors[kind]));
    }
  }

  out.family("rlcheck_in_flight", "gauge", "Requests sent and not yet decided.");
  for (const std::string& target : targets) {
    out.sample("rlcheck_in_flight", labelled("", target),
               std::to_string(target == current ? snapshot.in_flight : 0));
  }

  out.family("rlcheck_latency_seconds", "histogram",
             "Latency of decided requests (open model: from when each was due).");
  for (const std::string& target : targets) {
    engine::LiveDetail latency;
    if (extras.by_target) {
      for (const engine::LiveRun& run : snapshot.runs) {
        if (run.target == target)
          latency += run.detail;
      }
    } else {
      latency.within_bound = snapshot.within_bound;
      latency.latency_count = snapshot.latency_count;
      latency.latency_sum_ns = snapshot.latency_sum_ns;
    }
    uint64_t cumulative = 0;
    for (size_t i = 0; i < engine::k_live_metric_bounds_ns.size(); ++i) {
      cumulative += latency.within_bound[i];
      out.sample("rlcheck_latency_seconds_bucket",
                 labelled(fmt::format("le=\"{}\"", k_latency_bounds[i]), target),
                 std::to_string(cumulative));
    }
    out.sample("rlcheck_latency_seconds_bucket", labelled("le=\"+Inf\"", target),
               std::to_string(latency.latency_count));
    out.sample("rlcheck_latency_seconds_sum", labelled("", target),
               number(static_cast<double>(latency.latency_sum_ns) / 1e9));
    out.sample("rlcheck_latency_seconds_count", labelled("", target),
               std::to_string(latency.latency_count));
  }

  out.family("rlcheck_run", "gauge", "The run under way (1 is the first), 0 between runs.");
  for (const std::string& target : targets) {
    const bool under_way = snapshot.running && !snapshot.runs.empty() && target == current;
    out.sample("rlcheck_run", labelled("", target),
               std::to_string(under_way ? snapshot.runs.back().run : 0));
  }

  if (extras.offered_rate) {
    out.family("rlcheck_offered_rate", "gauge",
               "Requests per second the schedule sends at (open model), during a run.");
    out.sample("rlcheck_offered_rate", labelled("", current), number(*extras.offered_rate));
  }

  if (!extras.checks.empty()) {
    out.family("rlcheck_check_status", "gauge",
               "Each check of the judged test: 1 passed, 0 failed (skipped checks are absent).");
    for (const CheckStatus& check : extras.checks) {
      out.sample("rlcheck_check_status",
                 labelled(fmt::format("check=\"{}\"", escaped(check.check)), check.target),
                 check.pass ? "1" : "0");
    }
  }

  if (!extras.verdicts.empty()) {
    out.family("rlcheck_verdict", "gauge",
               "The verdict of a judged test, once judged: 0 pass, 1 fail, 2 error (could not be "
               "judged), 3 interrupted.");
    for (const VerdictValue& verdict : extras.verdicts)
      out.sample("rlcheck_verdict", labelled("", verdict.target), std::to_string(verdict.value));
  }

  out.family("rlcheck_info", "info", "The rlcheck serving these metrics.");
  for (const std::string& target : targets) {
    out.sample("rlcheck_info",
               labelled(fmt::format("version=\"{}\"", escaped(extras.version)), target), "1");
  }
  return out.finish();
}

}  // namespace rlcheck::observe
