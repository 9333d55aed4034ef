#pragma once
// What one worker reports of one run besides its records (many hosts): the counts, samples
// and latencies the merged RunResult is made of. Travels as JSON; reading it back is outside
// input, checked field by field.

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/run.hpp"

namespace rlcheck::coord {

struct RunShipment {
  int worker = 0;
  uint64_t records = 0;  // how many records its chunks hold
  uint64_t chunks = 0;   // how many chunks it pushed
  int clients_ready = 0;
  bool interrupted = false;  // Ctrl-C on that worker
  bool stopped_on_errors = false;
  bool abandoned = false;     // stopped because the session lost a worker or was interrupted
  int64_t late_start_ns = 0;  // how long after the agreed instant it crossed the start line
  std::string connect_error;
  std::string hint_sample;
  std::string header_sample;
  std::map<engine::ErrorKind, std::string> error_samples;
  std::map<std::string, int64_t> by_node;
  std::map<std::string, uint64_t> counters;  // redis transport counts, script reloads
  engine::Histogram latency_ns;
  engine::Histogram lateness_ns;           // the open model: sent - due
  std::vector<engine::StageTally> stages;  // --stages: its share of each stage
};

// The shipment of `result` (records: the count sent; chunks: how many were pushed).
RunShipment shipment_of(int worker, const engine::RunResult& result, int64_t late_start_ns);

std::string shipment_to_json(const RunShipment& shipment);
std::expected<RunShipment, std::string> shipment_from_json(std::string_view text);

// Adds what `shipment` says to `merged` (records excepted: they travel in chunks).
void merge_shipment(engine::RunResult& merged, const RunShipment& shipment);

}  // namespace rlcheck::coord
