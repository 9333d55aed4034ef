// rlcheck_audit_bench N [IDENTITIES [CONTRACT]]: the CPU time of every audit of a run of N
// requests, on a synthetic run (10 000 requests a second, limit 100 a second per identity, the rest
// denied with an exact retry hint), once for each contract kind, and the memory the run's records
// take; then two contracts at once ("two parts": 100 per 1 s and 1000 per 10 s) and costs
// ("costs 1-3": a run whose requests cost 1 to 3 units, 100 units a second), and the limits that
// are not windows ("ban", "concurrency", "steps", "slow-down", "queue nodelay"). Built with the
// project (bench/CMakeLists.txt); run by bench/memory.sh.

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "checks/run_stats.hpp"
#include "engine/run.hpp"

namespace {

using rlcheck::checks::AdmissionRule;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

constexpr int64_t k_gap_ns = 100'000;  // 10 000 requests a second
constexpr int64_t k_window_ns = 1'000'000'000;
constexpr int64_t k_limit = 100;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

long max_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// `weighted`: request i costs 1 + i mod 3 units, and the limit counts units. `slowed`: every
// request admitted, those past the limit of their window answered 1 ms later per request over,
// up to 50 ms (a slow-down's run).
rlcheck::engine::RunResult synthetic_run(int64_t requests, int64_t identities,
                                         bool weighted = false, bool slowed = false) {
  rlcheck::engine::RunResult result;
  result.records.reserve(static_cast<size_t>(requests));
  result.start_wall_ns = 1'700'000'000'000'000'000;
  std::vector<int64_t> admitted_in_window(static_cast<size_t>(identities), 0);
  std::vector<int64_t> window_of(static_cast<size_t>(identities), -1);
  for (int64_t i = 0; i < requests; ++i) {
    RequestRecord r;
    r.seq = static_cast<uint64_t>(i);
    r.identity = static_cast<uint32_t>(i % identities);
    r.sent_ns = i * k_gap_ns;
    r.replied_ns = r.sent_ns + 40'000 + (i * 7919) % 30'000;
    const int64_t window = r.sent_ns / k_window_ns;
    auto& count = admitted_in_window[r.identity];
    if (window_of[r.identity] != window) {
      window_of[r.identity] = window;
      count = 0;
    }
    r.cost = weighted ? static_cast<int32_t>(1 + i % 3) : 1;
    // Leave a margin at the window's end so every admission sits surely inside a window.
    if (slowed) {
      ++count;
      r.outcome = Outcome::allowed;
      r.replied_ns += std::min<int64_t>(50, std::max<int64_t>(0, count - k_limit)) * 1'000'000;
    } else if (count + r.cost <= k_limit && r.sent_ns % k_window_ns < k_window_ns / 2) {
      count += r.cost;
      r.outcome = Outcome::allowed;
      r.remaining = k_limit - count;
    } else {
      r.outcome = Outcome::denied;
      r.retry_ms = (k_window_ns - r.sent_ns % k_window_ns) / 1'000'000;
      r.remaining = 0;
    }
    r.hint_expected = true;
    result.records.push_back(r);
    result.latency_ns.record(r.replied_ns - r.sent_ns);
    result.duration_ns = r.replied_ns;
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rlcheck_audit_bench N [IDENTITIES [CONTRACT]]\n");
    return 64;
  }
  const int64_t requests = std::atoll(argv[1]);
  const int64_t identities = argc > 2 ? std::max<int64_t>(1, std::atoll(argv[2])) : 1;
  const long rss_before = max_rss_kb();
  const double build_start = cpu_seconds();
  rlcheck::engine::RunResult base = synthetic_run(requests, identities);
  std::printf(
      "%lld records (%lld identities): built in %.2f s CPU, %.1f bytes a record kept\n",
      static_cast<long long>(requests), static_cast<long long>(identities),
      cpu_seconds() - build_start,
      static_cast<double>(max_rss_kb() - rss_before) * 1024.0 / static_cast<double>(requests));
  const double per_ns = static_cast<double>(k_limit) / static_cast<double>(k_window_ns);
  const struct {
    const char* name;
    AdmissionRule rule;
    std::optional<int64_t> queue_depth;  // queue: the bucket's burst less the one leaving
  } contracts[] = {
      {"sliding", {AdmissionRule::Kind::sliding, k_limit, k_window_ns, 0, 0, 1'000'000}, {}},
      {"fixed", {AdmissionRule::Kind::fixed, k_limit, k_window_ns, 0, 0, 1'000'000}, {}},
      {"fixed first-hit",
       {AdmissionRule::Kind::first_hit, k_limit, k_window_ns, 0, 0, 1'000'000},
       {}},
      {"sliding-counter",
       {AdmissionRule::Kind::sliding_counter, k_limit, k_window_ns, 0, 0, 1'000'000},
       {}},
      {"token-bucket",
       {AdmissionRule::Kind::bucket, 0, k_window_ns, k_limit, per_ns, 1'000'000},
       {}},
      {"queue",
       {AdmissionRule::Kind::bucket, 0, k_window_ns, k_limit, per_ns, 1'000'000},
       k_limit - 1},
  };
  const std::string only = argc > 3 ? argv[3] : "";
  for (const auto& contract : contracts) {
    if (!only.empty() && only != contract.name)
      continue;
    rlcheck::engine::RunResult run = base;  // the audits reorder records: each gets a copy
    rlcheck::checks::AuditParams audit;
    audit.rule = contract.rule;
    audit.queue_depth = contract.queue_depth;
    audit.identities = identities;
    audit.timeline = true;
    audit.fresh_state = true;
    audit.tolerance.window_ms = k_window_ns / 1'000'000;
    const double start = cpu_seconds();
    const rlcheck::checks::RunStats stats = rlcheck::checks::summarize_run(1, run, audit);
    std::printf("  %-15s every check: %6.3f s CPU (allowed %lld, denied %lld, peak %lld)\n",
                contract.name, cpu_seconds() - start, static_cast<long long>(stats.allowed),
                static_cast<long long>(stats.denied),
                static_cast<long long>(stats.contract.worst.count));
  }
  // Several contracts, and costs: the composite audit (a copy of the records per part, in units).
  const auto time_audit = [&](const char* name, rlcheck::engine::RunResult run,
                              const rlcheck::checks::AuditParams& audit) {
    const double start = cpu_seconds();
    const rlcheck::checks::RunStats stats = rlcheck::checks::summarize_run(1, run, audit);
    std::printf("  %-15s every check: %6.3f s CPU (allowed %lld, denied %lld, peak %lld)\n", name,
                cpu_seconds() - start, static_cast<long long>(stats.allowed),
                static_cast<long long>(stats.denied),
                static_cast<long long>(stats.contract.worst.count));
  };
  rlcheck::checks::AuditParams base_audit;
  base_audit.rule = contracts[0].rule;
  base_audit.identities = identities;
  base_audit.fresh_state = true;
  base_audit.tolerance.window_ms = k_window_ns / 1'000'000;
  if (only.empty() || only == "two parts") {
    rlcheck::checks::AuditParams audit = base_audit;
    AdmissionRule longer = contracts[0].rule;
    longer.limit = 10 * k_limit;
    longer.window_ns = 10 * k_window_ns;
    audit.parts = {{"sliding:100/1s", "sliding", contracts[0].rule, false, false, false},
                   {"sliding:1000/10s", "sliding", longer, false, false, false}};
    audit.tolerance.window_ms = 10 * k_window_ns / 1'000'000;
    time_audit("two parts", base, audit);
  }
  if (only.empty() || only == "costs 1-3") {
    rlcheck::checks::AuditParams audit = base_audit;
    audit.weighted = true;
    time_audit("costs 1-3", synthetic_run(requests, identities, true), audit);
  }
  // Limits that are not windows, on the same run: its windows' denials read as a ban of the
  // rest of the window, as a cap of 100 in progress, and as a bucket refilled 100 at each tick.
  if (only.empty() || only == "ban") {
    rlcheck::checks::AuditParams audit = base_audit;
    audit.rule.kind = AdmissionRule::Kind::fixed;
    audit.ban = rlcheck::checks::BanRule{k_window_ns / 2, false};
    time_audit("ban", base, audit);
  }
  if (only.empty() || only == "concurrency") {
    rlcheck::checks::AuditParams audit = base_audit;
    audit.concurrency = rlcheck::checks::ConcurrencyRule{k_limit, 30'000};
    time_audit("concurrency", base, audit);
  }
  if (only.empty() || only == "steps") {
    rlcheck::checks::AuditParams audit = base_audit;
    audit.rule = contracts[4].rule;  // token-bucket
    audit.rule.step_tokens = k_limit;
    audit.rule.step_ns = k_window_ns;
    time_audit("steps", base, audit);
  }
  // Latency promises: a slow-down's run, every request admitted and those past 100 in their
  // window slowed 1 ms more each, up to 50 ms (every request judged twice, for the most and the
  // least its place allows); and the run read as a queue of 99 whose first 20 over the rate
  // leave at once.
  if (only.empty() || only == "slow-down") {
    rlcheck::checks::AuditParams audit = base_audit;
    rlcheck::checks::SlowDownRule& slow = audit.slow_down.emplace();
    slow.after = k_limit;
    slow.window_ns = k_window_ns;
    slow.step_ns = 1'000'000;
    slow.max_ns = 50'000'000;
    time_audit("slow-down", synthetic_run(requests, identities, false, true), audit);
  }
  if (only.empty() || only == "queue nodelay") {
    rlcheck::checks::AuditParams audit = base_audit;
    audit.rule = contracts[5].rule;  // queue
    audit.queue_depth = k_limit - 1;
    audit.queue_nodelay = 20;
    time_audit("queue nodelay", base, audit);
  }
  std::printf("peak RSS %.1f MB\n", static_cast<double>(max_rss_kb()) / 1024.0);
  return 0;
}
