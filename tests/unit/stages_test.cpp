#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/stages.hpp"

using namespace rlcheck::config;

namespace {

std::string refusal(const std::string& text) {
  const auto stages = parse_stages(text);
  return stages ? "" : stages.error();
}

std::vector<Stage> stages_of(const std::string& text) {
  auto stages = parse_stages(text);
  REQUIRE(stages);
  return *stages;
}

}  // namespace

TEST_CASE("parse_stages: DURATION:COUNT/PERIOD items, jumps and pauses") {
  const auto stages = stages_of("30s:100/s,1m:6000/m,0s:400/s,10s:0/s,500ms:1/10ms");
  REQUIRE(stages.size() == 5);
  CHECK(stages[0].duration == std::chrono::seconds(30));
  CHECK(stages[0].to_per_s == 100);
  CHECK(stages[1].duration == std::chrono::minutes(1));
  CHECK(stages[1].to_per_s == doctest::Approx(100));
  CHECK(stages[2].duration.count() == 0);
  CHECK(stages[2].to_per_s == 400);
  CHECK(stages[3].to_per_s == 0);
  CHECK(stages[4].to_per_s == doctest::Approx(100));
  CHECK(stages_of("1s:0.5/s").front().to_per_s == 0.5);
  const auto again = stages_of(format_stages(stages));
  REQUIRE(again.size() == stages.size());
  for (size_t i = 0; i < stages.size(); ++i) {
    CHECK(again[i].duration == stages[i].duration);
    CHECK(again[i].to_per_s == doctest::Approx(stages[i].to_per_s));
  }
}

TEST_CASE("parse_stages: refusals name the bad item") {
  CHECK(refusal("").find("empty") != std::string::npos);
  CHECK(refusal("30s").find("'30s'") != std::string::npos);
  CHECK(refusal("30:100/s").find("needs a unit") != std::string::npos);
  CHECK(refusal("30s:100").find("COUNT/PERIOD") != std::string::npos);
  CHECK(refusal("30s:-1/s").find("at least 0") != std::string::npos);
  CHECK(refusal("30s:x/s").find("at least 0") != std::string::npos);
  CHECK(refusal("30s:1/0s").find("period") != std::string::npos);
  CHECK(refusal("30s:100/s,,1s:0/s").find("empty stage") != std::string::npos);
  CHECK(refusal("30s:0/s,1m:0/s").find("nothing is sent") != std::string::npos);
  CHECK(refusal("1s:2000000000/s").find("a second") != std::string::npos);
  std::string many;
  for (int i = 0; i < 101; ++i)
    many += (many.empty() ? "" : ",") + std::string("1s:1/s");
  CHECK(refusal(many).find("at most 100") != std::string::npos);
  CHECK(refusal("270000h:1/s,270000h:1/s,270000h:1/s,270000h:1/s").find("100 years") !=
        std::string::npos);
}

TEST_CASE("planned_requests: the integral of the ramps, request 0 at the start") {
  CHECK(planned_requests(stages_of("2s:100/s")) == 100);
  CHECK(planned_requests(stages_of("2s:100/s,2s:400/s,1s:0/s")) == 800);
  CHECK(planned_requests(stages_of("0s:400/s,1s:400/s")) == 400);
  CHECK(planned_requests(stages_of("1s:3/s")) == 1);  // 1.5 planned: 1 whole request
  CHECK(planned_requests(stages_of("10s:0/s,0s:10/s,10s:10/s")) == 100);
  CHECK(planned_requests(stages_of("1ms:1/s")) == 0);
}
