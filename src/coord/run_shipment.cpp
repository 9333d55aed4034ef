#include "coord/run_shipment.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rlcheck::coord {

RunShipment shipment_of(int worker, const engine::RunResult& result, int64_t late_start_ns) {
  RunShipment shipment;
  shipment.worker = worker;
  shipment.records = result.records.size();
  shipment.clients_ready = result.clients_ready;
  shipment.interrupted = result.interrupted;
  shipment.stopped_on_errors = result.stopped_on_errors;
  shipment.abandoned = result.abandoned;
  shipment.late_start_ns = late_start_ns;
  shipment.connect_error = result.connect_error;
  shipment.hint_sample = result.hint_sample;
  shipment.header_sample = result.header_sample;
  shipment.error_samples = result.error_samples;
  shipment.by_node = result.by_node;
  shipment.latency_ns = result.latency_ns;
  shipment.lateness_ns = result.lateness_ns;
  shipment.stages = result.stages;
  return shipment;
}

namespace {

nlohmann::json histogram_json(const engine::Histogram& histogram) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const engine::Histogram::Bucket& bucket : histogram.nonzero_buckets())
    buckets.push_back({bucket.index, bucket.count});
  return {{"min", histogram.min()}, {"max", histogram.max()}, {"buckets", buckets}};
}

}  // namespace

std::string shipment_to_json(const RunShipment& shipment) {
  nlohmann::json json;
  json["worker"] = shipment.worker;
  json["records"] = shipment.records;
  json["chunks"] = shipment.chunks;
  json["clients_ready"] = shipment.clients_ready;
  json["interrupted"] = shipment.interrupted;
  json["stopped_on_errors"] = shipment.stopped_on_errors;
  json["abandoned"] = shipment.abandoned;
  json["late_start_ns"] = shipment.late_start_ns;
  json["connect_error"] = shipment.connect_error;
  json["hint_sample"] = shipment.hint_sample;
  json["header_sample"] = shipment.header_sample;
  nlohmann::json samples = nlohmann::json::object();
  for (const auto& [kind, message] : shipment.error_samples)
    samples[std::to_string(static_cast<int>(kind))] = message;
  json["error_samples"] = samples;
  json["by_node"] = shipment.by_node;
  json["counters"] = shipment.counters;
  json["latency"] = histogram_json(shipment.latency_ns);
  json["lateness"] = histogram_json(shipment.lateness_ns);
  nlohmann::json stages = nlohmann::json::array();
  for (const engine::StageTally& stage : shipment.stages) {
    stages.push_back({{"planned", stage.planned},
                      {"sent", stage.sent},
                      {"allowed", stage.allowed},
                      {"denied", stage.denied},
                      {"errors", stage.errors},
                      {"latency", histogram_json(stage.latency_ns)},
                      {"lateness", histogram_json(stage.lateness_ns)}});
  }
  json["stages"] = stages;
  return json.dump();
}

namespace {

// A whole number within T's range, else an exception (caught below): a float or a huge value
// must not reach a conversion.
template <typename T>
T whole(const nlohmann::json& value) {
  if (!value.is_number_integer())
    throw std::invalid_argument("a number that is not a whole one");
  if (value.is_number_unsigned()) {
    const auto number = value.get<uint64_t>();
    if (number > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      throw std::out_of_range("a number out of range");
    return static_cast<T>(number);
  }
  const auto number = value.get<int64_t>();
  if (number < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      (number > 0 &&
       static_cast<uint64_t>(number) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
    throw std::out_of_range("a number out of range");
  return static_cast<T>(number);
}

engine::Histogram histogram_from_json(const nlohmann::json& json) {
  std::vector<engine::Histogram::Bucket> buckets;
  for (const nlohmann::json& bucket : json.at("buckets"))
    buckets.push_back({whole<uint32_t>(bucket.at(0)), whole<uint64_t>(bucket.at(1))});
  return engine::Histogram::restore(buckets, whole<int64_t>(json.at("min")),
                                    whole<int64_t>(json.at("max")));
}

// At most as many stages as --stages takes: a longer list is not a run's.
constexpr size_t k_most_shipped_stages = 100;

}  // namespace

std::expected<RunShipment, std::string> shipment_from_json(std::string_view text) {
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    RunShipment shipment;
    shipment.worker = whole<int>(json.at("worker"));
    shipment.records = whole<uint64_t>(json.at("records"));
    shipment.chunks = whole<uint64_t>(json.at("chunks"));
    shipment.clients_ready = whole<int>(json.at("clients_ready"));
    shipment.interrupted = json.at("interrupted").get<bool>();
    shipment.stopped_on_errors = json.at("stopped_on_errors").get<bool>();
    shipment.abandoned = json.at("abandoned").get<bool>();
    shipment.late_start_ns = whole<int64_t>(json.at("late_start_ns"));
    shipment.connect_error = json.at("connect_error").get<std::string>();
    shipment.hint_sample = json.at("hint_sample").get<std::string>();
    shipment.header_sample = json.at("header_sample").get<std::string>();
    for (const auto& [kind, message] : json.at("error_samples").items()) {
      const int value = std::stoi(kind);
      if (value < 0 || value > static_cast<int>(engine::ErrorKind::too_large))
        return std::unexpected(fmt::format("an error kind out of range: {}", kind));
      shipment.error_samples[static_cast<engine::ErrorKind>(value)] = message.get<std::string>();
    }
    for (const auto& [node, requests] : json.at("by_node").items())
      shipment.by_node[node] = whole<int64_t>(requests);
    for (const auto& [name, count] : json.at("counters").items())
      shipment.counters[name] = whole<uint64_t>(count);
    shipment.latency_ns = histogram_from_json(json.at("latency"));
    shipment.lateness_ns = histogram_from_json(json.at("lateness"));
    const nlohmann::json& stages = json.at("stages");
    if (!stages.is_array() || stages.size() > k_most_shipped_stages)
      return std::unexpected("a run summary rlcheck cannot read: stages");
    for (const nlohmann::json& item : stages) {
      engine::StageTally stage;
      stage.planned = whole<uint64_t>(item.at("planned"));
      stage.sent = whole<uint64_t>(item.at("sent"));
      stage.allowed = whole<uint64_t>(item.at("allowed"));
      stage.denied = whole<uint64_t>(item.at("denied"));
      stage.errors = whole<uint64_t>(item.at("errors"));
      stage.latency_ns = histogram_from_json(item.at("latency"));
      stage.lateness_ns = histogram_from_json(item.at("lateness"));
      shipment.stages.push_back(std::move(stage));
    }
    return shipment;
  } catch (const std::exception& error) {
    return std::unexpected(fmt::format("a run summary rlcheck cannot read: {}", error.what()));
  }
}

void merge_shipment(engine::RunResult& merged, const RunShipment& shipment) {
  merged.latency_ns.merge(shipment.latency_ns);
  merged.lateness_ns.merge(shipment.lateness_ns);
  if (merged.stages.size() < shipment.stages.size())
    merged.stages.resize(shipment.stages.size());
  for (size_t k = 0; k < shipment.stages.size(); ++k)
    merged.stages[k].merge(shipment.stages[k]);
  merged.clients_ready += shipment.clients_ready;
  merged.interrupted = merged.interrupted || shipment.interrupted;
  merged.stopped_on_errors = merged.stopped_on_errors || shipment.stopped_on_errors;
  merged.abandoned = merged.abandoned || shipment.abandoned;
  if (merged.connect_error.empty())
    merged.connect_error = shipment.connect_error;
  if (merged.hint_sample.empty())
    merged.hint_sample = shipment.hint_sample;
  if (merged.header_sample.empty())
    merged.header_sample = shipment.header_sample;
  for (const auto& [kind, message] : shipment.error_samples)
    merged.error_samples.emplace(kind, message);
  for (const auto& [node, requests] : shipment.by_node)
    merged.by_node[node] += requests;
}

}  // namespace rlcheck::coord
