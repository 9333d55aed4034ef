#include "engine/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace rlcheck::engine {
namespace {

constexpr int k_sub_bits = 6;                        // 64 buckets per power of two
constexpr int64_t k_sub_count = 1 << k_sub_bits;     // 64
constexpr int64_t k_linear_limit = 2 * k_sub_count;  // values below are exact
constexpr int k_first_log = k_sub_bits + 1;          // log2(k_linear_limit)
constexpr size_t k_bucket_count = k_linear_limit + (63 - k_first_log) * k_sub_count;

}  // namespace

Histogram::Histogram() : buckets_(k_bucket_count, 0) {}

size_t Histogram::bucket_of(int64_t value) {
  if (value < k_linear_limit)
    return static_cast<size_t>(value);
  const int log = 63 - std::countl_zero(static_cast<uint64_t>(value));
  const int shift = log - k_sub_bits;
  const int64_t sub = (value >> shift) - k_sub_count;
  return static_cast<size_t>(k_linear_limit + (log - k_first_log) * k_sub_count + sub);
}

int64_t Histogram::upper_edge(size_t bucket) {
  const auto index = static_cast<int64_t>(bucket);
  if (index < k_linear_limit)
    return index;
  const int64_t octave = (index - k_linear_limit) / k_sub_count;
  const int64_t sub = (index - k_linear_limit) % k_sub_count;
  const int shift = static_cast<int>(octave) + k_first_log - k_sub_bits;
  const int64_t lower = (k_sub_count + sub) << shift;
  return lower + ((int64_t{1} << shift) - 1);
}

void Histogram::record(int64_t value) {
  value = std::max<int64_t>(value, 0);
  ++buckets_[bucket_of(value)];
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0)
    return;
  for (size_t i = 0; i < buckets_.size(); ++i)
    buckets_[i] += other.buckets_[i];
  min_ = count_ ? std::min(min_, other.min_) : other.min_;
  max_ = count_ ? std::max(max_, other.max_) : other.max_;
  count_ += other.count_;
}

std::vector<Histogram::Bucket> Histogram::nonzero_buckets() const {
  std::vector<Bucket> counted;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] != 0)
      counted.push_back({static_cast<uint32_t>(i), buckets_[i]});
  }
  return counted;
}

Histogram Histogram::restore(const std::vector<Bucket>& buckets, int64_t min, int64_t max) {
  Histogram histogram;
  for (const Bucket& bucket : buckets) {
    if (bucket.index >= histogram.buckets_.size() || bucket.count == 0)
      continue;
    histogram.buckets_[bucket.index] += bucket.count;
    histogram.count_ += bucket.count;
  }
  histogram.min_ = std::max<int64_t>(0, std::min(min, max));
  histogram.max_ = std::max<int64_t>(histogram.min_, max);
  return histogram;
}

int64_t Histogram::percentile(double p) const {
  if (count_ == 0)
    return 0;
  p = std::clamp(p, 0.0, 100.0);
  // The rank is ceil(p% of count); the epsilon keeps 99.9% of 5000 at 4995, not 4996.
  const double exact_rank = p / 100.0 * static_cast<double>(count_);
  const auto rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(exact_rank - 1e-9 * std::max(1.0, exact_rank))));
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank)
      return std::min(upper_edge(i), max_);
  }
  return max_;
}

}  // namespace rlcheck::engine
