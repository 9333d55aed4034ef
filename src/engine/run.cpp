#include "engine/run.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/worker.hpp"

namespace rlcheck::engine {
namespace {

// Requests that no live connection took are errors, so a dead target cannot look like a pass.
// Returns how many there were.
uint64_t record_unsent(RunResult& result, const config::LoadConfig& load,
                       const IdentityMap& identities) {
  std::vector<bool> seen(static_cast<size_t>(load.requests), false);
  for (size_t i = 0; i < result.records.size(); ++i)
    seen[result.records.seq(i) - load.first_seq] = true;
  uint64_t unsent_count = 0;
  for (uint64_t index = load.share_index; index < seen.size(); index += load.share_count) {
    if (seen[index])
      continue;
    RequestRecord unsent;
    unsent.seq = load.first_seq + index;
    unsent.identity = identities.of(unsent.seq);
    unsent.cost = load.costs.of(unsent.seq);
    unsent.outcome = Outcome::error;
    unsent.error = ErrorKind::not_sent;
    result.records.push_back(unsent);
    ++unsent_count;
  }
  if (unsent_count == 0)
    return 0;
  result.records.sort_by_seq();
  result.error_samples.try_emplace(ErrorKind::not_sent, result.connect_error.empty()
                                                            ? "no live connection was left"
                                                            : result.connect_error);
  return unsent_count;
}

// The live counts (status line, metrics) count the requests never sent as errors too, as the
// report does. The workers have joined: cell 0 has no other writer now.
void count_unsent_live(LiveStats* live, uint64_t unsent) {
  if (live != nullptr && unsent > 0)
    live->cell(0).decided(Outcome::error, ErrorKind::not_sent, unsent);
}

}  // namespace

uint64_t share_size(const config::LoadConfig& load) {
  const auto requests = static_cast<uint64_t>(load.requests);
  if (load.share_index >= requests)
    return 0;
  return (requests - load.share_index + load.share_count - 1) / load.share_count;
}

RunResult execute_run(ClientFactory& factory, const config::LoadConfig& load,
                      const RunHooks& hooks) {
  const int thread_count = std::max(1, std::min(load.threads, load.concurrency));
  RunShared shared(load, thread_count, hooks.observer, hooks.sink);
  // Progress reads the counts of this run: the caller's live stats, else a set of its own.
  std::unique_ptr<LiveStats> own_live;
  LiveStats* live = hooks.live;
  if (live == nullptr && hooks.progress)
    live = (own_live = std::make_unique<LiveStats>()).get();
  const LiveCounts before = live != nullptr ? live->snapshot().total : LiveCounts{};

  std::vector<std::unique_ptr<Worker>> workers;
  int next_client_id = 0;
  for (int t = 0; t < thread_count; ++t) {
    const int clients = load.concurrency / thread_count + (t < load.concurrency % thread_count);
    workers.push_back(std::make_unique<Worker>(factory, shared, next_client_id, clients,
                                               live != nullptr ? &live->cell(t) : nullptr));
    workers.back()->index = t;
    next_client_id += clients;
  }
  std::mutex mutex;
  std::condition_variable finished;
  size_t running = workers.size();
  std::vector<std::jthread> threads;
  for (auto& worker : workers) {
    threads.emplace_back([&] {
      worker->run();
      std::lock_guard lock(mutex);
      --running;
      finished.notify_all();
    });
  }
  if (hooks.progress || hooks.tick) {
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(250), [&] { return running == 0; })) {
      if (hooks.tick)
        hooks.tick();
      if (!hooks.progress)
        continue;
      LiveCounts counts = live->snapshot().total;
      counts -= before;
      hooks.progress({counts.sent, counts.decided[0], counts.decided[1], counts.decided[2]});
    }
  }
  threads.clear();  // joins

  RunResult result;
  result.virtual_clock = load.virtual_clock;
  result.real_duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - shared.start)
                                .count();
  result.start = shared.start;
  result.start_wall_ns = shared.start_wall_ns;
  result.schedule = shared.schedule;
  result.stages.resize(shared.schedule->stage_count());
  for (size_t k = 0; k < result.stages.size(); ++k)
    result.stages[k].planned = shared.schedule->stage_planned(k);
  uint64_t streamed = 0;  // records the sink took
  for (auto& worker : workers) {
    // Take the first worker's records whole and free each worker's after merging: a run of
    // N requests never holds more than about N records at once.
    if (result.records.empty()) {
      result.records = std::move(worker->records);
    } else {
      result.records.append(worker->records);
    }
    worker->records.clear();
    result.latency_ns.merge(worker->latency_ns);
    result.lateness_ns.merge(worker->lateness_ns);
    for (size_t k = 0; k < result.stages.size() && k < worker->stages.size(); ++k)
      result.stages[k].merge(worker->stages[k]);
    streamed += worker->streamed;
    result.duration_ns = std::max(result.duration_ns, worker->last_reply_ns);
    result.clients_ready += worker->clients_ready;
    result.interrupted = result.interrupted || worker->was_interrupted;
    if (result.connect_error.empty())
      result.connect_error = worker->connect_error;
    if (result.hint_sample.empty())
      result.hint_sample = worker->hint_sample;
    if (result.header_sample.empty())
      result.header_sample = worker->header_sample;
    for (auto& [kind, message] : worker->error_samples)
      result.error_samples.emplace(kind, message);
    for (const auto& [node, requests] : worker->by_node)
      result.by_node[node] += requests;
    for (const auto& [policies, responses] : worker->policy_sets)
      result.policy_sets[policies] += responses;
  }
  result.stopped_on_errors = shared.stopped.load();
  result.cancelled = shared.cancelled;
  result.abandoned = load.abandon != nullptr && load.abandon->load();
  if (hooks.sink != nullptr) {
    hooks.sink->finish();
    result.streamed = true;
    const bool whole =
        !result.interrupted && !result.stopped_on_errors && !result.cancelled && !result.abandoned;
    result.unsent = whole && share_size(load) > streamed ? share_size(load) - streamed : 0;
    if (result.unsent > 0) {
      result.error_samples.try_emplace(ErrorKind::not_sent, result.connect_error.empty()
                                                                ? "no live connection was left"
                                                                : result.connect_error);
    }
    count_unsent_live(live, result.unsent);
    return result;
  }
  result.records.sort_by_seq();
  const RecordView records = result.records.view();
  for (size_t i = 0; i < records.size(); ++i)
    result.duration_ns = std::max(result.duration_ns, records.replied_ns(i));

  // A run cut short (Ctrl-C, or stopped on errors) holds only the requests that were sent.
  if (!result.interrupted && !result.stopped_on_errors && !result.cancelled && !result.abandoned)
    count_unsent_live(live, record_unsent(result, load, shared.identities));
  return result;
}

}  // namespace rlcheck::engine
