#pragma once

// A first-in, first-out queue in one growing ring of slots: the queues that every request
// passes through (a connection's replies to come, a worker's deadlines) push and pop once a
// request each, and std::deque allocates and frees a block every few dozen of those.

#include <cstddef>
#include <utility>
#include <vector>

namespace rlcheck::base {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // The i-th from the front; i < size().
  T& operator[](size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }

  void push_back(T value) {
    if (size_ == slots_.size())
      grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }

  void pop_front() {
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

  void clear() { head_ = size_ = 0; }

  void swap(RingQueue& other) noexcept {
    slots_.swap(other.slots_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
  }

 private:
  // Twice the slots (a power of two, so that an index wraps with a mask), in queue order.
  void grow() {
    std::vector<T> larger(slots_.empty() ? 16 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i)
      larger[i] = std::move((*this)[i]);
    slots_.swap(larger);
    head_ = 0;
  }

  std::vector<T> slots_;  // size(): 0 or a power of two
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace rlcheck::base
