#pragma once
// gRPC's completion queue driven by a worker's libevent loop. gRPC's C++ API reports
// asynchronous calls on a CompletionQueue that someone must block on; the worker's thread
// blocks in its event loop instead. So each loop has one queue and one thread that waits in
// CompletionQueue::Next (and so drives gRPC's I/O for the loop's calls), hands each completion
// with the instant it came over to the loop through a queue under a mutex, and wakes the loop
// by an eventfd that the loop watches: every completion is then handled on the loop's thread,
// where the clients live. One wake-up serves every completion that came meanwhile. The loop's
// channels (HTTP/2 connections) each carry many calls at once.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <grpcpp/channel.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>

#include "engine/client.hpp"
#include "targets/grpc/grpc_calls.hpp"

struct event;
struct event_base;

namespace rlcheck::grpc_target {

// A tag put on the loop's queue; told on the loop's thread when it comes back, with the
// instant the queue gave it up.
class Completion {
 public:
  virtual ~Completion() = default;
  virtual void complete(bool ok, std::chrono::steady_clock::time_point at) = 0;
};

class CompletionLoop final : public engine::LoopShared {
 public:
  using ConnectedFn = std::function<void(bool ok, const std::string& error)>;

  CompletionLoop(event_base* base, const GrpcCalls& calls);
  // Cancels the calls still out (their clients are gone), shuts the queue, waits for it to
  // give back every tag, and joins the thread.
  ~CompletionLoop() override;
  CompletionLoop(const CompletionLoop&) = delete;
  CompletionLoop& operator=(const CompletionLoop&) = delete;

  grpc::CompletionQueue& queue() { return queue_; }
  // The stub of channel `index` mod the loop's channels.
  grpc::GenericStub& stub(int index);
  // Tells `connected` once channel `index` is ready, or could not be made ready within the
  // timeout (with what was tried): at once when that is known already.
  void connect(int index, ConnectedFn connected);
  // Keeps `call` (a tag on the queue now) until the queue gives it back, after its completion.
  void keep(std::unique_ptr<Completion> call);

 private:
  class Channel;
  struct Ready {
    void* tag;
    bool ok;
    std::chrono::steady_clock::time_point at;
  };
  void poll();  // the queue's thread
  static void on_wake(int fd, short, void* self);

  grpc::CompletionQueue queue_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::unordered_map<Completion*, std::unique_ptr<Completion>> calls_;
  int wake_fd_ = -1;
  event* wake_event_ = nullptr;
  std::mutex mutex_;
  std::vector<Ready> ready_;  // under mutex_: what the queue gave back, for the loop
  std::vector<Ready> taken_;  // the loop's: what it handles now
  std::thread poller_;
};

}  // namespace rlcheck::grpc_target
