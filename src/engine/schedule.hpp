#pragma once
// When each request of a run is due: the closed model's --interval, the open model's --rate,
// or its --stages (linear ramps), with uniform or Poisson arrivals. Pure arithmetic built once
// per run and shared, read-only, by the workers, the virtual clock's cursors and the records.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::engine {

class Schedule {
 public:
  // The run's plan for load.requests requests: `seed` draws Poisson arrivals (the same seed,
  // the same instants). Poisson costs O(requests) here, once, and 8 bytes per 256 requests.
  static Schedule make(const config::LoadConfig& load, uint64_t seed);
  static Schedule make(const config::LoadConfig& load) { return make(load, load.schedule_seed); }

  // Request `index`'s due offset from the start line. Closed model: index x --interval (0 when
  // unpaced). Open model, uniform: Λ⁻¹(index), Λ the planned count up to an instant (--rate:
  // index / rate, exactly). Poisson: the index-th of the planned count's arrivals of a Poisson
  // process over the plan, drawn by `seed`. Non-decreasing in index.
  std::chrono::nanoseconds due(uint64_t index) const;
  // Its virtual instant from the virtual start line: the due offset floored to a whole ms.
  int64_t virtual_ns(uint64_t index) const;
  // The stage (index into load.stages) request `index` is due in; -1 without stages.
  int stage_of(uint64_t index) const;
  // The planned rate at `t_ns` from the start line, in requests a second (0 past the plan).
  double rate_at(int64_t t_ns) const;
  // The planned length: --stages' total, requests / rate, requests x interval; 0 unpaced.
  int64_t span_ns() const { return span_ns_; }
  bool open_model() const { return open_; }
  // The requests planned (load.requests), and whether they arrive as a Poisson process.
  uint64_t requests() const { return requests_; }
  bool poisson() const { return poisson_; }
  // Requests are due on a schedule at all (the open model, or --interval).
  bool paced() const { return open_ || interval_.count() > 0; }
  // With stages (0 without): where each starts (ns from the start line) and the requests due
  // in it.
  size_t stage_count() const { return staged_ ? stages_.size() : 0; }
  int64_t stage_from_ns(size_t stage) const { return stages_[stage].from_ns; }
  int64_t stage_to_ns(size_t stage) const {
    return stages_[stage].from_ns + stages_[stage].length_ns;
  }
  double stage_from_rate(size_t stage) const { return stages_[stage].from_rate; }
  double stage_to_rate(size_t stage) const { return stages_[stage].to_rate; }
  uint64_t stage_planned(size_t stage) const { return stages_[stage].planned; }

  // due() for indices taken mostly in order: Poisson arrivals are found from a block of 256
  // kept between calls, so a run's requests cost O(1) each. One per caller, never shared
  // between threads.
  class Cursor {
   public:
    explicit Cursor(const Schedule& schedule) : schedule_(&schedule) {}
    std::chrono::nanoseconds due(uint64_t index);
    int stage_of(uint64_t index);

   private:
    double sum(uint64_t index);  // S_{index+1}, from the block kept

    const Schedule* schedule_;
    uint64_t block_ = UINT64_MAX;
    std::array<double, 256> sums_{};  // S_{j+1} for the block's j
  };

 private:
  struct Piece {
    int64_t from_ns = 0;
    int64_t length_ns = 0;
    double from_rate = 0;  // per second
    double to_rate = 0;
    long double before = 0;  // planned arrivals before the stage: Λ(from)
    long double count = 0;   // planned arrivals in it
    uint64_t planned = 0;    // requests due in it
  };
  static constexpr uint64_t k_block = 256;

  // Where on the count axis (0 <= x < Λ(T)) request `index` lies, given S_{index+1}.
  long double position(uint64_t index, double sum) const;
  std::chrono::nanoseconds due_at(uint64_t index, double sum) const;
  int stage_at(long double x) const;
  int64_t instant_of(long double x) const;  // Λ⁻¹(x), ns
  double unit_exponential(uint64_t j) const;
  double poisson_sum(uint64_t index) const;  // S_{index+1}
  void fill_block(uint64_t block, std::array<double, 256>& sums) const;

  config::Nanos interval_{0};
  std::optional<config::Rate> rate_;
  bool open_ = false;
  bool poisson_ = false;
  uint64_t requests_ = 0;
  uint64_t seed_ = 0;
  bool staged_ = false;  // --stages given (else one piece stands for --rate)
  int64_t span_ns_ = 0;
  long double total_ = 0;  // Λ(T)
  std::vector<Piece> stages_;
  std::vector<double> block_sums_;  // S at each block's first index (S_0 = 0)
  double final_sum_ = 1;            // S_{N+1}
};

}  // namespace rlcheck::engine
