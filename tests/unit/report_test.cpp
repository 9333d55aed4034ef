#include <doctest/doctest.h>

#include <vector>

#include "report/report.hpp"

using rlcheck::checks::RunStats;
using rlcheck::report::summarize;
using rlcheck::report::Summary;

namespace {

RunStats run(int64_t allowed, int64_t requests = 100, double duration_ms = 500, bool over = false) {
  RunStats stats;
  stats.allowed = allowed;
  stats.requests = requests;
  stats.duration_ms = duration_ms;
  stats.peak.count = allowed;
  stats.peak.allowance = over ? static_cast<double>(allowed) - 1 : static_cast<double>(allowed);
  return stats;
}

}  // namespace

TEST_CASE("summarize of no runs is all zeros") {
  const Summary s = summarize({});
  CHECK(s.allowed_min == 0);
  CHECK(s.allowed_max == 0);
  CHECK(s.allowed_median == 0.0);
  CHECK(s.runs_over_limit == 0);
  CHECK(s.requests_per_second == 0.0);
}

TEST_CASE("the median of an odd count is the middle value") {
  const Summary s = summarize({run(30), run(10), run(20)});
  CHECK(s.allowed_min == 10);
  CHECK(s.allowed_max == 30);
  CHECK(s.allowed_median == 20.0);
}

TEST_CASE("the median of an even count is the mean of the two middle values") {
  const Summary s = summarize({run(20), run(10), run(14), run(11)});
  CHECK(s.allowed_min == 10);
  CHECK(s.allowed_max == 20);
  CHECK(s.allowed_median == 12.5);

  CHECK(summarize({run(7), run(10)}).allowed_median == 8.5);
}

TEST_CASE("runs over the limit are those whose peak exceeded its allowance") {
  const Summary s = summarize({run(10), run(14, 100, 500, true), run(12, 100, 500, true)});
  CHECK(s.runs_over_limit == 2);
  CHECK(summarize({run(10), run(10)}).runs_over_limit == 0);
}

TEST_CASE("requests per second is all requests over the summed durations") {
  // 300 requests in 0.5 s + 1 s.
  const Summary s = summarize({run(10, 100, 500), run(10, 200, 1'000)});
  CHECK(s.requests_per_second == doctest::Approx(200.0));

  CHECK(summarize({run(10, 100, 0)}).requests_per_second == 0.0);
}

TEST_CASE("histogram figures keep the three significant digits the histogram resolves") {
  using rlcheck::report::histogram_figure;
  using rlcheck::report::histogram_text;
  CHECK(histogram_text(44.564) == "44.6");
  CHECK(histogram_text(0.125) == "0.125");
  CHECK(histogram_text(0.75) == "0.750");
  CHECK(histogram_text(1234.5) == "1230");
  CHECK(histogram_text(0) == "0");
  CHECK(histogram_figure(44.564) == doctest::Approx(44.6));
  CHECK(histogram_figure(0.0012345) == doctest::Approx(0.00123));
  CHECK(histogram_figure(0) == 0);
}
