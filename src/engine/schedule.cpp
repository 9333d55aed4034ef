#include "engine/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace rlcheck::engine {
namespace {

constexpr long double k_ns_per_s = 1e9L;

// splitmix64's output function: a counter-based generator, so arrival j's gap is a pure
// function of (seed, j) and any arrival can be found without drawing the ones before it.
uint64_t schedule_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

Schedule Schedule::make(const config::LoadConfig& load, uint64_t seed) {
  Schedule schedule;
  schedule.requests_ = static_cast<uint64_t>(std::max<int64_t>(0, load.requests));
  schedule.interval_ = load.interval;
  schedule.rate_ = load.rate;
  schedule.open_ = load.open_model();
  schedule.seed_ = seed;
  schedule.poisson_ = schedule.open_ && load.arrivals == config::Arrivals::poisson;
  if (!schedule.open_) {
    schedule.span_ns_ = load.interval.count() * static_cast<int64_t>(schedule.requests_);
    return schedule;
  }
  if (!load.stages.empty()) {
    schedule.staged_ = true;
    int64_t at = 0;
    double from = 0;
    long double before = 0;
    for (const config::Stage& stage : load.stages) {
      Piece piece;
      piece.from_ns = at;
      piece.length_ns = stage.duration.count();
      piece.from_rate = from;
      piece.to_rate = stage.to_per_s;
      piece.before = before;
      // As config::planned_requests sums it, so the planned count is exactly the one given.
      piece.count = (static_cast<long double>(from) + stage.to_per_s) / 2 *
                    static_cast<long double>(piece.length_ns) / k_ns_per_s;
      schedule.stages_.push_back(piece);
      before += piece.count;
      at += piece.length_ns;
      from = stage.to_per_s;
    }
    schedule.total_ = before;
    schedule.span_ns_ = at;
  } else {
    // --rate stands as one flat piece, which only Poisson arrivals read.
    const auto span =
        static_cast<__int128>(schedule.requests_) * load.rate->period.count() / load.rate->tokens;
    schedule.span_ns_ = static_cast<int64_t>(span);
    Piece piece;
    piece.length_ns = schedule.span_ns_;
    piece.from_rate = piece.to_rate = static_cast<double>(load.rate->tokens) * 1e9 /
                                      static_cast<double>(load.rate->period.count());
    piece.count = static_cast<long double>(schedule.requests_);
    schedule.stages_.push_back(piece);
    schedule.total_ = piece.count;
  }
  if (schedule.poisson_) {
    // S_j, the sum of the first j unit exponentials, kept at each block's start and summed
    // in the same order wherever it is needed again, so every caller sees the same values.
    schedule.block_sums_.reserve(schedule.requests_ / k_block + 2);
    double sum = 0;
    for (uint64_t j = 0; j <= schedule.requests_; ++j) {
      if (j % k_block == 0)
        schedule.block_sums_.push_back(sum);
      sum += schedule.unit_exponential(j);
    }
    schedule.final_sum_ = sum;
  }
  if (schedule.staged_) {
    // The requests due in each stage: stage_of is non-decreasing in the index, so each stage's
    // first request is found by bisection.
    const auto first_in = [&schedule](int stage) {
      uint64_t low = 0, high = schedule.requests_;
      while (low < high) {
        const uint64_t mid = low + (high - low) / 2;
        if (schedule.stage_of(mid) >= stage)
          high = mid;
        else
          low = mid + 1;
      }
      return low;
    };
    uint64_t first = first_in(0);
    for (size_t k = 0; k < schedule.stages_.size(); ++k) {
      const uint64_t next = first_in(static_cast<int>(k) + 1);
      schedule.stages_[k].planned = next - first;
      first = next;
    }
  }
  return schedule;
}

double Schedule::unit_exponential(uint64_t j) const {
  const uint64_t z = schedule_mix(seed_ + (j + 1) * 0x9E3779B97F4A7C15ULL);
  const double u = static_cast<double>((z >> 11) + 1) * 0x1.0p-53;  // (0, 1]
  return -std::log(u);
}

double Schedule::poisson_sum(uint64_t index) const {
  const uint64_t block = index / k_block;
  double sum = block_sums_[block];
  for (uint64_t j = block * k_block; j <= index; ++j)
    sum += unit_exponential(j);
  return sum;
}

void Schedule::fill_block(uint64_t block, std::array<double, 256>& sums) const {
  double sum = block_sums_[block];
  for (uint64_t k = 0; k < k_block; ++k) {
    sum += unit_exponential(block * k_block + k);
    sums[k] = sum;
  }
}

long double Schedule::position(uint64_t index, double sum) const {
  if (!poisson_)
    return static_cast<long double>(index);
  // The order statistics of N arrivals spread over the plan: S_{i+1} / S_{N+1} of the count.
  return total_ * static_cast<long double>(sum) / static_cast<long double>(final_sum_);
}

int Schedule::stage_at(long double x) const {
  // The last stage starting at or before x; stages that plan nothing (jumps, pauses) hold no x.
  auto after =
      std::upper_bound(stages_.begin(), stages_.end(), x,
                       [](long double value, const Piece& piece) { return value < piece.before; });
  int k = static_cast<int>(after - stages_.begin()) - 1;
  k = std::max(k, 0);
  while (k > 0 && stages_[static_cast<size_t>(k)].count <= 0)
    --k;
  return k;
}

int64_t Schedule::instant_of(long double x) const {
  const Piece& piece = stages_[static_cast<size_t>(stage_at(x))];
  const long double length_s = static_cast<long double>(piece.length_ns) / k_ns_per_s;
  const long double y = std::max<long double>(0, x - piece.before);
  if (length_s <= 0 || y <= 0)
    return piece.from_ns;
  // Λ within the stage is r0 s + a s² / 2: its inverse, in the form that stays exact as the
  // ramp flattens (a -> 0) and when it starts from 0 (r0 = 0).
  const long double r0 = piece.from_rate;
  const long double a = (static_cast<long double>(piece.to_rate) - r0) / length_s;
  const long double root = std::sqrt(std::max<long double>(0, r0 * r0 + 2 * a * y));
  const long double denominator = r0 + root;
  long double s = denominator > 0 ? 2 * y / denominator : length_s;
  s = std::clamp<long double>(s, 0, length_s);
  return piece.from_ns + static_cast<int64_t>(s * k_ns_per_s);
}

std::chrono::nanoseconds Schedule::due_at(uint64_t index, double sum) const {
  if (!open_)
    return interval_ * static_cast<int64_t>(index);
  if (!poisson_ && !staged_) {
    const auto scaled = static_cast<__int128>(index) * rate_->period.count() / rate_->tokens;
    return std::chrono::nanoseconds(static_cast<int64_t>(scaled));
  }
  return std::chrono::nanoseconds(instant_of(position(index, sum)));
}

std::chrono::nanoseconds Schedule::due(uint64_t index) const {
  return due_at(index, poisson_ ? poisson_sum(index) : 0);
}

int64_t Schedule::virtual_ns(uint64_t index) const {
  constexpr int64_t k_ms = 1'000'000;
  return due(index).count() / k_ms * k_ms;
}

int Schedule::stage_of(uint64_t index) const {
  if (!staged_)
    return -1;
  return stage_at(position(index, poisson_ ? poisson_sum(index) : 0));
}

double Schedule::rate_at(int64_t t_ns) const {
  if (!open_)
    return interval_.count() > 0 ? 1e9 / static_cast<double>(interval_.count()) : 0;
  if (t_ns < 0 || t_ns >= span_ns_)
    return 0;
  auto after = std::upper_bound(stages_.begin(), stages_.end(), t_ns,
                                [](int64_t t, const Piece& piece) { return t < piece.from_ns; });
  const Piece& piece = *(after - 1);  // jumps have no length: the piece after them is found
  if (piece.length_ns <= 0)
    return piece.to_rate;
  const double through =
      static_cast<double>(t_ns - piece.from_ns) / static_cast<double>(piece.length_ns);
  return piece.from_rate + (piece.to_rate - piece.from_rate) * through;
}

double Schedule::Cursor::sum(uint64_t index) {
  const uint64_t block = index / k_block;
  if (block != block_) {
    schedule_->fill_block(block, sums_);
    block_ = block;
  }
  return sums_[index % k_block];
}

std::chrono::nanoseconds Schedule::Cursor::due(uint64_t index) {
  if (!schedule_->poisson_)
    return schedule_->due(index);
  return schedule_->due_at(index, sum(index));
}

int Schedule::Cursor::stage_of(uint64_t index) {
  if (!schedule_->staged_ || !schedule_->poisson_)
    return schedule_->stage_of(index);
  return schedule_->stage_at(schedule_->position(index, sum(index)));
}

}  // namespace rlcheck::engine
