#include "engine/record_stream.hpp"

#include <algorithm>
#include <tuple>

namespace rlcheck::engine {
namespace {

// std::push_heap keeps the greatest first: "greater" puts the earliest send there.
bool sent_later(const RequestRecord& a, const RequestRecord& b) {
  return std::tie(a.sent_ns, a.replied_ns, a.seq) > std::tie(b.sent_ns, b.replied_ns, b.seq);
}

}  // namespace

void Sequencer::begin(int64_t start_wall_ns, const Schedule* schedule, int workers) {
  std::lock_guard lock(mutex_);
  low_water_.assign(static_cast<size_t>(std::max(1, workers)), INT64_MIN);
  consumer_.begin(start_wall_ns, schedule);
}

void Sequencer::take(int worker, std::span<const RequestRecord> records, int64_t low_water_ns) {
  std::lock_guard lock(mutex_);
  for (const RequestRecord& record : records) {
    if (std::tie(record.sent_ns, record.replied_ns) <
        std::tie(released_sent_ns_, released_replied_ns_))
      ++late_;
    held_.push_back(record);
    std::push_heap(held_.begin(), held_.end(), sent_later);
  }
  most_held_ = std::max(most_held_, held_.size());
  if (worker < 0 || static_cast<size_t>(worker) >= low_water_.size())
    return;  // not a worker begin() was told of: its records wait for finish()
  low_water_[static_cast<size_t>(worker)] = low_water_ns;
  release_before(*std::min_element(low_water_.begin(), low_water_.end()));
}

void Sequencer::finish() {
  std::lock_guard lock(mutex_);
  release_before(INT64_MAX);
}

void Sequencer::release_before(int64_t sent_ns) {
  batch_.clear();
  while (!held_.empty() && (held_.front().sent_ns < sent_ns || sent_ns == INT64_MAX)) {
    std::pop_heap(held_.begin(), held_.end(), sent_later);
    batch_.push_back(held_.back());
    held_.pop_back();
  }
  if (batch_.empty())
    return;
  const RequestRecord& last = batch_.back();
  if (std::tie(last.sent_ns, last.replied_ns) > std::tie(released_sent_ns_, released_replied_ns_)) {
    released_sent_ns_ = last.sent_ns;
    released_replied_ns_ = last.replied_ns;
  }
  consumer_.consume(batch_);
}

uint64_t Sequencer::late() const {
  std::lock_guard lock(mutex_);
  return late_;
}

size_t Sequencer::most_held() const {
  std::lock_guard lock(mutex_);
  return most_held_;
}

}  // namespace rlcheck::engine
