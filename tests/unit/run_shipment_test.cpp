// What a worker ships of a run besides its records (many hosts): read back as written, and
// merged into the one run worker 0 judges, per-stage tallies and lateness included.

#include <doctest/doctest.h>

#include "coord/run_shipment.hpp"

using namespace rlcheck;

namespace {

engine::RunResult worker_result(uint64_t sent_per_stage) {
  engine::RunResult result;
  result.latency_ns.record(2'000'000);
  result.lateness_ns.record(300'000);
  for (int k = 0; k < 2; ++k) {
    engine::StageTally stage;
    stage.planned = 100;
    stage.sent = sent_per_stage;
    stage.allowed = 1;
    stage.denied = sent_per_stage - 1;
    stage.latency_ns.record(1'000'000);
    stage.lateness_ns.record(50'000);
    result.stages.push_back(stage);
  }
  return result;
}

}  // namespace

TEST_CASE("run shipment: stages and lateness travel and merge across workers") {
  const auto shipped = coord::shipment_from_json(
      coord::shipment_to_json(coord::shipment_of(1, worker_result(40), 0)));
  REQUIRE(shipped.has_value());
  REQUIRE(shipped->stages.size() == 2);
  CHECK(shipped->stages[1].sent == 40);
  CHECK(shipped->stages[1].denied == 39);
  CHECK(shipped->stages[1].lateness_ns.count() == 1);
  CHECK(shipped->lateness_ns.count() == 1);

  engine::RunResult merged;
  coord::merge_shipment(merged, *shipped);
  coord::merge_shipment(merged, coord::shipment_of(0, worker_result(60), 0));
  REQUIRE(merged.stages.size() == 2);
  CHECK(merged.stages[0].planned == 100);  // the whole run's plan, not a sum
  CHECK(merged.stages[0].sent == 100);
  CHECK(merged.stages[0].allowed == 2);
  CHECK(merged.stages[0].latency_ns.count() == 2);
  CHECK(merged.lateness_ns.count() == 2);
  CHECK(merged.latency_ns.count() == 2);
}

TEST_CASE("run shipment: a stage list longer than --stages takes is refused") {
  engine::RunResult result;
  result.stages.resize(101);
  CHECK_FALSE(coord::shipment_from_json(coord::shipment_to_json(coord::shipment_of(0, result, 0)))
                  .has_value());
}
