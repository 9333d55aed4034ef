#pragma once
// --contract SPEC: a contract named alone (its parameters from --limit, --window, --burst,
// --refill, --anchor) or with its own: sliding:10/1s, fixed:100/1m, fixed:1000/1d@first-hit,
// sliding-counter:50/1m, token-bucket:20,10/s (burst, refill), gcra:20,10/s, queue:5/s,10
// (rate, depth), token-bucket:20,5/1s,steps (5 tokens at each 1s tick, none between),
// concurrency:2 (at most 2 in progress at once). A `group:` prefix counts the part over a group
// of identities (--group-size); a `requests:` prefix counts requests in it whatever they cost
// (--cost): an LLM API's requests per minute beside its tokens per minute. Both may be given, in
// either order. A ban wraps a window: ban:5/10s,60s (sliding), ban:fixed:5/10s,60s,
// ban:sliding:5/10s,60s,renew: more than L in W bans the identity for B (renewed by every
// request during it). A queue may let its first K excess requests through undelayed, as nginx's
// limit_req burst=B delay=K: queue:20/s,5,nodelay=2. A slow-down delays rather than denies:
// slow-down:5/10s,100ms[,2s] (sliding), slow-down:first-hit:5/10s,100ms: past 5 requests in the
// window, the k-th is answered (k - 5) x 100ms later than unloaded, capped at 2s.

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "config/duration.hpp"
#include "config/rate.hpp"

namespace rlcheck::config {

// slow-down:[KIND:]N/W,D[,MAX]: past `after` requests in a window of `window` (counted as each
// arrives), the k-th of the window is answered (k - after) x `step` later, up to `max`.
struct SlowDown {
  int64_t after = 0;
  Nanos window{0};
  Nanos step{0};
  std::optional<Nanos> max;      // unset: uncapped
  std::string kind = "sliding";  // sliding, fixed (on the clock) or first-hit
};

// "slow-down:first-hit:5/10s,100ms,2s", as the reports name it.
std::string format_slow_down(const SlowDown& slow);

struct ContractSpec {
  std::string text;  // as given, for reports ("sliding:10/1s")
  std::string name;  // sliding, fixed, sliding-counter, token-bucket, gcra, queue
  bool per_group = false;
  bool counts_requests = false;
  // Given in the spec; unset: from the flags (--limit, --window, ...).
  std::optional<int64_t> limit;
  std::optional<Nanos> window;
  std::optional<std::string> anchor;  // fixed, sliding-counter: "clock" or "first-hit"
  std::optional<int64_t> burst;       // token-bucket, gcra
  std::optional<Rate> refill;         // token-bucket, gcra, queue (its rate)
  std::optional<int64_t> queue;       // queue: its depth
  std::optional<int64_t> nodelay;     // queue: how many excess requests pass undelayed
  std::optional<SlowDown> slow_down;  // name "slow-down"
  // ban: how long; `name` is then its window's kind (sliding or fixed).
  std::optional<Nanos> ban;
  bool ban_renews = false;
  bool has_parameters() const { return limit || burst || refill; }
};

// Whether `name` is a contract rlcheck audits.
bool known_contract(std::string_view name);

// Errors read "'fixed:10' needs a limit and a window: fixed:10/1m".
std::expected<ContractSpec, std::string> parse_contract_spec(std::string_view text);

}  // namespace rlcheck::config
