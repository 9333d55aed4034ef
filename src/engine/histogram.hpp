#pragma once
// A mergeable log-linear histogram of non-negative integers (latencies in nanoseconds).
//
// Values below 128 are counted exactly; above, each power of two is split into 64 equal
// buckets, so a bucket is at most 1/64 (1.6 %) of its values wide. Workers each fill their
// own and the engine merges them after join: no locks on the hot path.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rlcheck::engine {

class Histogram {
 public:
  Histogram();

  void record(int64_t value);  // negative values count as 0
  void merge(const Histogram& other);

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }

  // The p-th percentile (0 < p <= 100): the upper edge of the first bucket at which at least
  // p % of the recorded values are counted, clamped to the largest value seen. It overstates
  // the exact order statistic by less than one bucket width, never understates it.
  // 0 when empty.
  int64_t percentile(double p) const;

  // The counted buckets as (index, count) pairs, and back: how a histogram travels between
  // processes (many hosts). restore ignores pairs whose index is out of range.
  struct Bucket {
    uint32_t index = 0;
    uint64_t count = 0;
  };
  std::vector<Bucket> nonzero_buckets() const;
  static Histogram restore(const std::vector<Bucket>& buckets, int64_t min, int64_t max);

 private:
  static size_t bucket_of(int64_t value);
  static int64_t upper_edge(size_t bucket);

  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
};

}  // namespace rlcheck::engine
