#pragma once
// Reports built by hand in unit tests: described as their target's kind would (the name,
// limiter and rows every form prints), after each change of what that description reads.

#include "report/report.hpp"

namespace rlcheck::test {

inline void describe(report::Report& report) {
  if (report.mode == "http") {
    report::describe_endpoint(report.target);
    return;
  }
  report::describe_redis_limiter(report.target);
  if (!report.transport)
    report.transport.emplace();
}

}  // namespace rlcheck::test
