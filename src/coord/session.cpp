#include "coord/session.hpp"

#include <algorithm>
#include <charconv>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/duration.hpp"
#include "coord/fingerprint.hpp"
#include "coord/record_codec.hpp"
#include "coord/run_shipment.hpp"
#include "engine/interrupt.hpp"
#include "redis/reply.hpp"

namespace rlcheck::coord {
namespace {

using namespace std::chrono_literals;

constexpr int k_key_ttl_s = 3600;  // every key of a session expires an hour after its last write
constexpr auto k_heartbeat_every = 500ms;
constexpr int64_t k_heartbeat_ttl_ms = 4000;  // a worker silent this long is lost
constexpr int k_clock_samples = 16;
// From the moment the last worker said it was ready to the agreed start: time for every worker
// to notice (a poll, a round trip) on a loaded machine.
constexpr int64_t k_start_margin_ns = 300'000'000;
constexpr size_t k_records_per_chunk = 65536;

int64_t since_epoch_ns(Clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string reply_text(const redisReply* reply) {
  return reply->type == REDIS_REPLY_STRING ? std::string(reply->str, reply->len) : std::string();
}

// A number another worker wrote; nullopt when it is not one.
std::optional<int64_t> number_of(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::string index_list(const std::vector<int>& indices) {
  return indices.empty() ? std::string("none") : fmt::format("{}", fmt::join(indices, ", "));
}

}  // namespace

Session::Session(const SessionOptions& options) : options_(options) {
  info_.resize(static_cast<size_t>(options.workers));
  for (int i = 0; i < options.workers; ++i)
    info_[static_cast<size_t>(i)].index = i;
}

Session::~Session() {
  stop_ = true;
  if (heartbeat_.joinable())
    heartbeat_.join();
}

std::string Session::key(const std::string& suffix) const {
  return fmt::format("rlcheck:session:{}:{}", options_.id, suffix);
}

int64_t Session::coordinator_now_ns() const {
  return since_epoch_ns(Clock::now()) + clock_.steady_offset_ns;
}

std::expected<std::optional<std::string>, std::string> Session::get(const std::string& name) {
  auto reply = control_->call({"GET", name});
  if (!reply)
    return std::unexpected(reply.error());
  if ((*reply)->type == REDIS_REPLY_NIL)
    return std::nullopt;
  if ((*reply)->type != REDIS_REPLY_STRING)
    return std::unexpected(fmt::format("GET {}: {}", name, redis::describe_reply(reply->get())));
  return reply_text(reply->get());
}

std::expected<void, std::string> Session::set(const std::string& name, std::string_view value) {
  const std::string ttl = std::to_string(k_key_ttl_s);
  auto reply = control_->call({"SET", name, value, "EX", ttl});
  if (!reply)
    return std::unexpected(reply.error());
  if (redis::is_error(reply->get()))
    return std::unexpected(fmt::format("SET {}: {}", name, redis::describe_reply(reply->get())));
  return {};
}

std::expected<std::vector<std::optional<std::string>>, std::string> Session::get_all(
    const std::string& suffix_of_worker) {
  std::vector<std::string> names;
  for (int i = 0; i < options_.workers; ++i)
    names.push_back(key(fmt::format(fmt::runtime(suffix_of_worker), i)));
  std::vector<std::string_view> argv{"MGET"};
  argv.insert(argv.end(), names.begin(), names.end());
  auto reply = control_->call(argv);
  if (!reply)
    return std::unexpected(reply.error());
  if ((*reply)->type != REDIS_REPLY_ARRAY || (*reply)->elements != names.size())
    return std::unexpected(fmt::format("MGET: {}", redis::describe_reply(reply->get())));
  std::vector<std::optional<std::string>> values;
  for (size_t i = 0; i < (*reply)->elements; ++i) {
    const redisReply* element = (*reply)->element[i];
    if (element->type == REDIS_REPLY_STRING)
      values.emplace_back(reply_text(element));
    else
      values.emplace_back(std::nullopt);
  }
  return values;
}

std::expected<std::unique_ptr<Session>, SessionError> Session::join(const SessionOptions& options,
                                                                    const Say& say) {
  std::unique_ptr<Session> session(new Session(options));
  if (auto joined = session->connect_and_join(say); !joined) {
    // A worker running another test stays joined, so the others find the difference too.
    session->leave(!joined.error().usage);
    return std::unexpected(joined.error());
  }
  return session;
}

std::expected<void, SessionError> Session::connect_and_join(const Say& say) {
  auto client = redis::SyncClient::connect(options_.coordinator, options_.timeout);
  if (!client)
    return std::unexpected(SessionError{false, fmt::format("--coordinator: {}", client.error())});
  control_.emplace(std::move(*client));

  std::vector<ClockSample> samples;
  for (int i = 0; i < k_clock_samples; ++i) {
    ClockSample sample;
    sample.wall_before_ns = wall_now_ns();
    sample.steady_before_ns = since_epoch_ns(Clock::now());
    auto reply = control_->call({"TIME"});
    sample.steady_after_ns = since_epoch_ns(Clock::now());
    sample.wall_after_ns = wall_now_ns();
    if (!reply)
      return std::unexpected(SessionError{false, fmt::format("--coordinator: {}", reply.error())});
    const auto remote_ns = redis::time_reply_ns(reply->get());
    if (!remote_ns) {
      return std::unexpected(SessionError{false, fmt::format("--coordinator: TIME answered {}",
                                                             redis::describe_reply(reply->get()))});
    }
    sample.remote_ns = *remote_ns;
    samples.push_back(sample);
  }
  clock_ = estimate_clock(samples);

  nlohmann::json me;
  me["host"] = options_.host;
  me["pid"] = static_cast<int64_t>(getpid());
  me["fingerprint"] = options_.fingerprint;
  me["clock_offset_ns"] = clock_.wall_offset_ns;
  me["clock_uncertainty_ns"] = clock_.uncertainty_ns;
  const std::string join_key = key(fmt::format("join:{}", options_.index));
  const std::string ttl = std::to_string(k_key_ttl_s);
  auto joined = control_->call({"SET", join_key, me.dump(), "NX", "EX", ttl});
  if (!joined)
    return std::unexpected(SessionError{false, fmt::format("--coordinator: {}", joined.error())});
  if ((*joined)->type == REDIS_REPLY_NIL) {
    std::string who = "another worker";
    if (auto existing = get(join_key); existing && *existing) {
      const auto other = nlohmann::json::parse(**existing, nullptr, false);
      if (other.is_object() && other.contains("host") && other.contains("pid"))
        who = fmt::format("{} (pid {})", other["host"].dump(), other["pid"].dump());
    }
    // Not ours to delete: the key is the other worker's.
    options_.index = -1;
    return std::unexpected(SessionError{
        true, fmt::format("--worker-index: {} already joined session {} as worker {}: two "
                          "workers share an index, or the session ID was used in the last hour; "
                          "use a new --session",
                          who, options_.id, join_key.substr(join_key.rfind(':') + 1))});
  }
  start_heartbeat();
  if (say) {
    say(
        fmt::format("joined session {} as worker {} of {} (clock offset {:.3f} ms ± {:.3f} ms); "
                    "waiting for the others",
                    options_.id, options_.index, options_.workers,
                    static_cast<double>(clock_.wall_offset_ns) / 1e6,
                    static_cast<double>(clock_.uncertainty_ns) / 1e6));
  }
  return wait_for_everyone();
}

std::expected<void, SessionError> Session::wait_for_everyone() {
  const auto deadline = Clock::now() + options_.join_timeout;
  while (true) {
    auto joined = get_all("join:{}");
    if (!joined)
      return std::unexpected(SessionError{false, fmt::format("--coordinator: {}", joined.error())});
    std::vector<int> present;
    std::vector<int> missing;
    for (int i = 0; i < options_.workers; ++i) {
      const auto& value = (*joined)[static_cast<size_t>(i)];
      if (!value) {
        missing.push_back(i);
        continue;
      }
      present.push_back(i);
      const auto other = nlohmann::json::parse(*value, nullptr, false);
      if (!other.is_object() || !other.contains("fingerprint") || !other["fingerprint"].is_string())
        return std::unexpected(
            SessionError{false, fmt::format("session {}: worker {} joined with a record rlcheck "
                                            "cannot read",
                                            options_.id, i)});
      if (auto difference =
              first_difference(other["fingerprint"].get<std::string>(), options_.fingerprint)) {
        return std::unexpected(SessionError{
            true, fmt::format("--workers: worker {} of session {} runs a different test ({}): "
                              "every worker needs the same command line",
                              i, options_.id, *difference)});
      }
      WorkerInfo& info = info_[static_cast<size_t>(i)];
      info.host = other.value("host", "");
      info.clock_offset_ns = other.value("clock_offset_ns", int64_t{0});
      info.clock_uncertainty_ns = other.value("clock_uncertainty_ns", int64_t{0});
    }
    if (missing.empty()) {
      everyone_joined_ = true;
      return {};
    }
    if (Clock::now() >= deadline) {
      return std::unexpected(SessionError{
          false, fmt::format("session {}: worker{} {} did not join within {} (joined: {})",
                             options_.id, missing.size() == 1 ? "" : "s", index_list(missing),
                             config::format_duration(options_.join_timeout), index_list(present))});
    }
    if (!engine::wait_until(Clock::now() + 50ms)) {
      return std::unexpected(SessionError{
          false, fmt::format("session {}: interrupted while waiting for worker{} {} to join",
                             options_.id, missing.size() == 1 ? "" : "s", index_list(missing))});
    }
  }
}

void Session::leave(bool forget) {
  stop_ = true;
  if (heartbeat_.joinable())
    heartbeat_.join();
  if (!forget || !control_ || options_.index < 0)
    return;
  control_->call({"DEL", key(fmt::format("join:{}", options_.index)),
                  key(fmt::format("alive:{}", options_.index))});
}

void Session::start_heartbeat() {
  // The first beat before anyone can look for it.
  control_->call({"SET", key(fmt::format("alive:{}", options_.index)), "1", "PX",
                  std::to_string(k_heartbeat_ttl_ms)});
  heartbeat_ = std::jthread([this] { heartbeat_loop(); });
}

void Session::heartbeat_loop() {
  std::optional<redis::SyncClient> beat;
  bool told_interrupt = false;
  const std::string alive = key(fmt::format("alive:{}", options_.index));
  const std::string ttl = std::to_string(k_heartbeat_ttl_ms);
  while (!stop_) {
    if (!beat) {
      if (auto client = redis::SyncClient::connect(options_.coordinator, options_.timeout))
        beat.emplace(std::move(*client));
    }
    if (beat) {
      bool ok = beat->call({"SET", alive, "1", "PX", ttl}).has_value();
      // Ctrl-C on any worker stops them all: the merged report is then "interrupted".
      if (ok && engine::interrupted() && !told_interrupt) {
        told_interrupt =
            beat->call({"SET", key("abort"), "interrupted", "EX", std::to_string(k_key_ttl_s)})
                .has_value();
      }
      if (ok) {
        auto aborted = beat->call({"EXISTS", key("abort")});
        if (aborted && (*aborted)->type == REDIS_REPLY_INTEGER && (*aborted)->integer > 0)
          abandon_ = true;
        std::vector<std::string> names;
        for (int i = 0; i < options_.workers; ++i)
          names.push_back(key(fmt::format("alive:{}", i)));
        std::vector<std::string_view> argv{"MGET"};
        argv.insert(argv.end(), names.begin(), names.end());
        auto beats = beat->call(argv);
        ok = beats.has_value();
        if (ok && (*beats)->type == REDIS_REPLY_ARRAY &&
            (*beats)->elements == static_cast<size_t>(options_.workers)) {
          for (int i = 0; i < options_.workers && everyone_joined_; ++i) {
            if (i != options_.index && (*beats)->element[i]->type == REDIS_REPLY_NIL)
              mark_lost(i, current_run_.load());
          }
        }
      }
      if (!ok)
        beat.reset();  // connect again next beat
    }
    const auto next = Clock::now() + k_heartbeat_every;
    while (!stop_ && Clock::now() < next)
      std::this_thread::sleep_for(20ms);
  }
}

void Session::mark_lost(int worker, int run) {
  std::lock_guard lock(info_mutex_);
  WorkerInfo& info = info_[static_cast<size_t>(worker)];
  if (info.lost)
    return;
  info.lost = true;
  info.lost_in_run = run;
  abandon_ = true;
}

bool Session::is_lost(int worker) const {
  std::lock_guard lock(info_mutex_);
  return info_[static_cast<size_t>(worker)].lost;
}

bool Session::lost_any() const {
  std::lock_guard lock(info_mutex_);
  return std::any_of(info_.begin(), info_.end(), [](const WorkerInfo& info) { return info.lost; });
}

std::vector<WorkerInfo> Session::worker_info() const {
  std::lock_guard lock(info_mutex_);
  return info_;
}

std::string Session::lost_description() const {
  std::lock_guard lock(info_mutex_);
  std::string text;
  for (const WorkerInfo& info : info_) {
    if (!info.lost)
      continue;
    if (!text.empty())
      text += "; ";
    text += fmt::format("worker {}{} stopped answering {}", info.index,
                        info.host.empty() ? "" : fmt::format(" ({})", info.host),
                        info.lost_in_run > 0 ? fmt::format("during run {}", info.lost_in_run)
                                             : std::string("between runs"));
  }
  return text;
}

int64_t Session::clock_uncertainty_ns() const {
  std::vector<int64_t> uncertainties;
  for (const WorkerInfo& info : worker_info())
    uncertainties.push_back(info.clock_uncertainty_ns);
  return pairwise_uncertainty(uncertainties);
}

std::optional<Clock::time_point> Session::agree_start(int run, const config::LoadConfig& load) {
  current_run_ = run;
  const std::string ready = key(fmt::format("run:{}:ready:{}", run, options_.index));
  if (!set(ready, std::to_string(coordinator_now_ns())))
    return std::nullopt;
  const std::string outputs = key("outputs");
  while (true) {
    if (engine::interrupted())
      return Clock::now();  // the run sees Ctrl-C at its start line
    if (lost_any())
      return std::nullopt;
    auto published = control_->call({"EXISTS", outputs});
    if (!published)
      return std::nullopt;
    if ((*published)->type == REDIS_REPLY_INTEGER && (*published)->integer > 0)
      return std::nullopt;
    auto readiness = get_all(fmt::format("run:{}:ready:{{}}", run));
    if (!readiness)
      return std::nullopt;
    int64_t last_ready = 0;
    bool everyone = true;
    for (const auto& value : *readiness) {
      const auto instant = value ? number_of(*value) : std::nullopt;
      if (!instant) {
        everyone = false;
        break;
      }
      last_ready = std::max(last_ready, *instant);
    }
    if (everyone) {
      int64_t start = last_ready + k_start_margin_ns + 2 * clock_uncertainty_ns();
      const int64_t window = load.boundary_window.count();
      const int64_t before = load.start_before_boundary.count();
      if (window > 0 && before > 0) {
        int64_t aligned = (start / window + 1) * window - before;
        while (aligned < start)
          aligned += window;
        start = aligned;
      }
      const Clock::time_point steady(std::chrono::duration_cast<Clock::duration>(
          std::chrono::nanoseconds(start - clock_.steady_offset_ns)));
      agreed_by_run_[run] = AgreedStart{steady, start};
      return steady;
    }
    std::this_thread::sleep_for(5ms);
  }
}

std::expected<void, std::string> Session::ship(int run, const engine::RunResult& result,
                                               const std::map<std::string, uint64_t>& counters) {
  // A run started without an agreement (Ctrl-C at the start line) keeps its own start.
  const auto agreed = agreed_by_run_.find(run);
  const int64_t late_ns = agreed == agreed_by_run_.end()
                              ? 0
                              : std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    result.start - agreed->second.steady)
                                    .count();
  const std::string records = key(fmt::format("run:{}:records:{}", run, options_.index));
  RunShipment shipment = shipment_of(options_.index, result, late_ns);
  shipment.counters = counters;
  for (size_t begin = 0; begin < result.records.size(); begin += k_records_per_chunk) {
    const size_t end = std::min(result.records.size(), begin + k_records_per_chunk);
    const std::string chunk = encode_records(result.records, begin, end, late_ns);
    auto pushed = control_->call({"RPUSH", records, chunk});
    if (!pushed)
      return std::unexpected(pushed.error());
    if (redis::is_error(pushed->get()))
      return std::unexpected(
          fmt::format("RPUSH {}: {}", records, redis::describe_reply(pushed->get())));
    ++shipment.chunks;
  }
  control_->call({"EXPIRE", records, std::to_string(k_key_ttl_s)});
  return set(key(fmt::format("run:{}:done:{}", run, options_.index)), shipment_to_json(shipment));
}

std::expected<engine::RunResult, std::string> Session::merge_shipped(
    int run, std::map<std::string, uint64_t>& counters, bool own_counters) {
  engine::RunResult merged;
  if (const auto agreed = agreed_by_run_.find(run); agreed != agreed_by_run_.end()) {
    merged.start = agreed->second.steady;
    merged.start_wall_ns = agreed->second.coordinator_ns;
  }
  for (int worker = 0; worker < options_.workers; ++worker) {
    const std::string done = key(fmt::format("run:{}:done:{}", run, worker));
    std::optional<std::string> summary;
    while (true) {
      auto value = get(done);
      if (!value)
        return std::unexpected(value.error());
      if (*value) {
        summary = std::move(*value);
        break;
      }
      if (is_lost(worker))
        break;
      std::this_thread::sleep_for(20ms);
    }
    if (!summary)
      continue;  // lost before it shipped: the report names it
    auto shipment = shipment_from_json(*summary);
    if (!shipment)
      return std::unexpected(fmt::format("worker {}: {}", worker, shipment.error()));
    const std::string records = key(fmt::format("run:{}:records:{}", run, worker));
    const size_t before = merged.records.size();
    for (uint64_t chunk = 0; chunk < shipment->chunks; ++chunk) {
      auto reply = control_->call({"LINDEX", records, std::to_string(chunk)});
      if (!reply)
        return std::unexpected(reply.error());
      if ((*reply)->type != REDIS_REPLY_STRING) {
        return std::unexpected(fmt::format("worker {}: chunk {} of its records of run {} is {}",
                                           worker, chunk, run,
                                           redis::describe_reply(reply->get())));
      }
      if (auto decoded = decode_records(reply_text(reply->get()), merged.records); !decoded)
        return std::unexpected(fmt::format("worker {}: {}", worker, decoded.error()));
    }
    if (merged.records.size() - before != shipment->records) {
      return std::unexpected(fmt::format("worker {}: {} records of run {} arrived, {} were sent",
                                         worker, merged.records.size() - before, run,
                                         shipment->records));
    }
    merge_shipment(merged, *shipment);
    if (worker != options_.index || own_counters) {
      for (const auto& [name, count] : shipment->counters)
        counters[name] += count;
    }
    std::lock_guard lock(info_mutex_);
    info_[static_cast<size_t>(worker)].requests += static_cast<int64_t>(shipment->records);
  }
  merged.records.sort_by_seq();
  for (const engine::RequestRecord& record : merged.records)
    merged.duration_ns = std::max(merged.duration_ns, record.replied_ns);
  return merged;
}

std::optional<int> Session::stand_in() {
  auto claimed = get(key("merged-by"));
  if (!claimed || !*claimed)
    return std::nullopt;
  const auto index = number_of(**claimed);
  return index ? std::optional<int>(static_cast<int>(*index)) : std::nullopt;
}

bool Session::take_over_from_lost_leader() {
  if (leader())
    return false;
  while (true) {
    auto published = control_->call({"EXISTS", key("outputs")});
    if (!published)
      return false;  // the coordinator is gone: await_outputs says so
    if ((*published)->type == REDIS_REPLY_INTEGER && (*published)->integer > 0)
      return false;
    if (is_lost(0))
      break;
    if (engine::interrupted())
      return false;
    std::this_thread::sleep_for(50ms);
  }
  // The first survivor to claim worker 0's place merges; the others wait for its report.
  auto claimed = control_->call({"SET", key("merged-by"), std::to_string(options_.index), "NX",
                                 "EX", std::to_string(k_key_ttl_s)});
  stood_in_ = claimed && (*claimed)->type != REDIS_REPLY_NIL && !redis::is_error(claimed->get());
  return stood_in_;
}

std::expected<void, std::string> Session::publish(const std::string& outputs) {
  return set(key("outputs"), outputs);
}

std::expected<std::string, std::string> Session::await_outputs() {
  std::optional<Clock::time_point> give_up;
  std::optional<Clock::time_point> no_merger_since;
  while (true) {
    auto value = get(key("outputs"));
    if (!value)
      return std::unexpected(fmt::format("--coordinator: {}", value.error()));
    if (*value)
      return std::move(**value);
    if (is_lost(0)) {
      // Another worker merges in its place, unless it is lost too (or nobody could claim).
      const std::optional<int> merger = stand_in();
      if (!merger) {
        if (!no_merger_since)
          no_merger_since = Clock::now();
        if (Clock::now() - *no_merger_since > 10s)
          return std::unexpected(fmt::format(
              "session {}: {}; no worker took its place to merge the runs, so there is no "
              "report",
              options_.id, lost_description()));
      } else if (*merger < 0 || *merger >= options_.workers || is_lost(*merger)) {
        return std::unexpected(fmt::format(
            "session {}: {}; worker {}, which took its place, was lost too: there is no report",
            options_.id, lost_description(), *merger));
      }
    }
    // After Ctrl-C, worker 0 is told (the abort key) and reports soon; not forever.
    if (engine::interrupted() && !give_up)
      give_up = Clock::now() + 30s;
    if (give_up && Clock::now() > *give_up)
      return std::unexpected(
          fmt::format("session {}: interrupted; worker 0 did not report within "
                      "30 s",
                      options_.id));
    std::this_thread::sleep_for(50ms);
  }
}

}  // namespace rlcheck::coord
