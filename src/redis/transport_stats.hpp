#pragma once
// What the connections of one run met on the way: cluster redirects and reconnects. Written
// by every worker thread (relaxed atomics), read after the run.

#include <atomic>
#include <cstdint>

namespace rlcheck::redis {

struct TransportStats {
  std::atomic<uint64_t> moved{0};           // MOVED replies followed (the slot map was updated)
  std::atomic<uint64_t> ask{0};             // ASK replies followed (ASKING, then the command)
  std::atomic<uint64_t> tryagain{0};        // TRYAGAIN and CLUSTERDOWN replies retried
  std::atomic<uint64_t> reconnects{0};      // connections made again after one was lost
  std::atomic<uint64_t> script_reloads{0};  // NOSCRIPT replies answered with EVAL
};

}  // namespace rlcheck::redis
