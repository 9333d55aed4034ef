#include "checks/key_ttl.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace rlcheck::checks {
namespace {

constexpr int64_t k_ms_per_s = 1000;
constexpr int64_t k_ms_per_m = 60 * k_ms_per_s;
constexpr int64_t k_ms_per_h = 60 * k_ms_per_m;

struct LongestTtl {
  const KeyTtl* key = nullptr;
  int run = 0;
};

LongestTtl longest_ttl(const std::vector<RunStats>& runs) {
  LongestTtl longest;
  for (const RunStats& run : runs) {
    for (const KeyTtl& key : run.key_ttls) {
      if (key.ttl_ms >= 0 && (longest.key == nullptr || key.ttl_ms > longest.key->ttl_ms))
        longest = {&key, run.run};
    }
  }
  return longest;
}

// What the contract needs a key for: "the 1s window", "refilling the token-bucket from empty
// (1.5s)".
std::string need_text(const CheckParams& params) {
  if (bucket_contract(params.contract)) {
    return fmt::format("refilling the {} from empty takes {}, so a key", params.contract,
                       ttl_text(params.key_ttl_needed_ms));
  }
  return fmt::format("the {} window", ttl_text(params.key_ttl_needed_ms));
}

// A denial the contract had room for, sent once the state the contract needs should have
// expired: the lock-out a TTL longer than that causes.
struct LockOutSeen {
  const RunStats* run = nullptr;
  const LockOut* lock_out = nullptr;
  explicit operator bool() const { return run != nullptr; }
};

LockOutSeen lock_out_after(const std::vector<RunStats>& runs, int64_t needed_ms) {
  for (const RunStats& run : runs) {
    const auto& worst = run.lockouts.worst;
    if (run.lockouts.count > 0 && worst && worst->sent_ns / 1'000'000 >= needed_ms)
      return {&run, &*worst};
  }
  return {};
}

}  // namespace

int64_t key_ttl_tolerance_ms(int64_t needed_ms) {
  return std::max<int64_t>(1000, needed_ms / 10);
}

std::string ttl_text(int64_t ms) {
  // To the nearest minute (second) above an hour (a minute): a TTL read just after it was set
  // is a few milliseconds short of it.
  if (ms >= k_ms_per_h - k_ms_per_m / 2) {
    const int64_t minutes = (ms + k_ms_per_m / 2) / k_ms_per_m;
    return minutes % 60 == 0 ? fmt::format("{}h", minutes / 60)
                             : fmt::format("{}h {}m", minutes / 60, minutes % 60);
  }
  if (ms >= k_ms_per_m - k_ms_per_s / 2) {
    const int64_t seconds = (ms + k_ms_per_s / 2) / k_ms_per_s;
    return seconds % 60 == 0 ? fmt::format("{}m", seconds / 60)
                             : fmt::format("{}m {}s", seconds / 60, seconds % 60);
  }
  if (ms >= k_ms_per_s)
    return fmt::format("{:.3g}s", static_cast<double>(ms) / k_ms_per_s);
  return fmt::format("{}ms", ms);
}

CheckResult check_key_ttl(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (!params.key_ttl_applies)
    return {"key-ttl", Status::skip, "no limiter keys to inspect"};
  for (const RunStats& run : runs) {
    if (!run.keys_without_ttl.empty()) {
      return {"key-ttl", Status::fail,
              fmt::format("after run {} key {} has no TTL (it will never expire)", run.run,
                          run.keys_without_ttl.front())};
    }
  }
  // The keys of a run whose Redis was gone after it were never read: nothing to judge them by.
  for (const RunStats& run : runs) {
    if (!run.keys_unread.empty()) {
      return {"key-ttl", Status::skip,
              fmt::format("Redis was unreachable after run {}: {}", run.run, run.keys_unread)};
    }
  }
  const LongestTtl longest = longest_ttl(runs);
  if (longest.key == nullptr) {
    return {"key-ttl", Status::skip,
            "no limiter key existed after its run (none written, or all expired already)"};
  }
  const std::string figure = fmt::format("run {} key {} has a TTL of {}", longest.run,
                                         longest.key->key, ttl_text(longest.key->ttl_ms));
  if (params.key_ttl_needed_ms <= 0) {
    return {"key-ttl", Status::pass,
            fmt::format("every limiter key had a TTL after its run; the longest: {}", figure)};
  }
  const int64_t most_ms = params.key_ttl_needed_ms + key_ttl_tolerance_ms(params.key_ttl_needed_ms);
  const std::string need = fmt::format("{} needs at most {}", need_text(params), ttl_text(most_ms));
  if (longest.key->ttl_ms <= most_ms) {
    return {"key-ttl", Status::pass,
            fmt::format("every limiter key had a TTL after its run; the longest: {}; {}", figure,
                        need)};
  }
  // Too long a TTL locks a client out only where the limiter's state lives as long as its key
  // (a counter); a log or a bucket that forgets by itself only keeps memory longer. The lock-out
  // is a fail only where the run showed it.
  if (const LockOutSeen seen = lock_out_after(runs, params.key_ttl_needed_ms)) {
    return {"key-ttl", Status::fail,
            fmt::format("{}; {}, and run {} was denied request {} {} into the run, while the "
                        "contract had room ({:.3g} of {:.3g} used) after its state should have "
                        "expired: a client over the limit stays locked out until the key expires",
                        figure, need, seen.run->run, seen.lock_out->seq,
                        ttl_text(seen.lock_out->sent_ns / 1'000'000), seen.lock_out->used,
                        seen.lock_out->capacity)};
  }
  const std::string bytes =
      longest.key->memory_bytes > 0
          ? fmt::format(" ({} bytes for this key, MEMORY USAGE)", longest.key->memory_bytes)
          : std::string();
  CheckResult result{
      "key-ttl", Status::pass,
      fmt::format(
          "warning: {}; {}: no lock-out seen (no denial with room after {}), but each "
          "key outlives what the contract needs {:.2g}x, and so does the memory an idle "
          "identity leaves behind{}",
          figure, need, ttl_text(params.key_ttl_needed_ms),
          static_cast<double>(longest.key->ttl_ms) / static_cast<double>(params.key_ttl_needed_ms),
          bytes)};
  result.warning = true;
  return result;
}

}  // namespace rlcheck::checks
