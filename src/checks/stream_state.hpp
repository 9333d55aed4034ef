#pragma once
// What the streaming audits (--audit stream) share: a state per identity, made at its first
// record, and the denials waiting until the stream reaches an instant.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

namespace rlcheck::checks {

// One State per identity (index = identity mod count), made by `make` when first asked for.
template <class State>
class IdentityStates {
 public:
  using Make = std::function<std::unique_ptr<State>()>;
  explicit IdentityStates(
      size_t count, Make make = [] { return std::make_unique<State>(); })
      : states_(std::max<size_t>(1, count)), make_(std::move(make)) {}
  size_t size() const { return states_.size(); }
  State& operator[](uint32_t identity) {
    std::unique_ptr<State>& state = states_[identity % states_.size()];
    if (!state)
      state = make_();
    return *state;
  }
  // Null when the identity had no record.
  State* find(size_t index) const { return states_[index].get(); }

 private:
  std::vector<std::unique_ptr<State>> states_;
  Make make_;
};

// Entries (with `at_ns` and the `denial` record) each waiting until every record sent before
// `at_ns` has come in. Settled earliest first; of equals, by the denial's send, then its seq.
template <class Entry>
class WaitingDenials {
 public:
  void push(Entry entry) {
    heap_.push_back(std::move(entry));
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  // Calls `settle` with each entry due by `sent_ns` (the next record's send), which may push
  // again.
  template <class Settle>
  void settle_before(int64_t sent_ns, Settle&& settle) {
    while (!heap_.empty() && heap_.front().at_ns <= sent_ns) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      Entry entry = std::move(heap_.back());
      heap_.pop_back();
      settle(std::move(entry));
    }
  }

 private:
  static bool later(const Entry& a, const Entry& b) {
    return std::tie(a.at_ns, a.denial.sent_ns, a.denial.seq) >
           std::tie(b.at_ns, b.denial.sent_ns, b.denial.seq);
  }

  std::vector<Entry> heap_;  // a min-heap by (at, send, seq)
};

}  // namespace rlcheck::checks
