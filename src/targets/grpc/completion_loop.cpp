#include "targets/grpc/completion_loop.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include <event2/event.h>
#include <fmt/format.h>

#include "targets/grpc/grpc_channel.hpp"

namespace rlcheck::grpc_target {
namespace {

using Clock = std::chrono::steady_clock;

const char* state_name(grpc_connectivity_state state) {
  switch (state) {
    case GRPC_CHANNEL_IDLE:
      return "IDLE";
    case GRPC_CHANNEL_CONNECTING:
      return "CONNECTING";
    case GRPC_CHANNEL_READY:
      return "READY";
    case GRPC_CHANNEL_TRANSIENT_FAILURE:
      return "TRANSIENT_FAILURE";
    case GRPC_CHANNEL_SHUTDOWN:
      return "SHUTDOWN";
  }
  return "unknown";
}

}  // namespace

// One HTTP/2 connection of the loop's own (a local subchannel pool: channels of other loops do
// not share it), and its connect: a watch on its state, itself a tag on the queue.
class CompletionLoop::Channel final : public Completion {
 public:
  Channel(CompletionLoop& loop, const GrpcCalls& calls)
      : loop_(loop),
        address_(calls.options().address),
        transport_(transport_name(calls.options())),
        timeout_(calls.options().timeout) {
    channel_ = open_channel(calls.options(), calls.tls_pem());
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  grpc::GenericStub& stub() { return *stub_; }

  void connect(ConnectedFn connected) {
    if (phase_ == Phase::ready || phase_ == Phase::failed) {
      connected(phase_ == Phase::ready, error_);
      return;
    }
    waiting_.push_back(std::move(connected));
    if (phase_ == Phase::watching)
      return;
    deadline_ = std::chrono::system_clock::now() + timeout_;
    errors_before_ = grpc_errors_so_far();
    watch(channel_->GetState(true));
  }

  void complete(bool ok, Clock::time_point) override {
    if (!ok) {
      settle(false,
             fmt::format("no gRPC connection to {} ({}) within {} ms", address_, transport_,
                         std::chrono::duration_cast<std::chrono::milliseconds>(timeout_).count()));
      return;
    }
    watch(channel_->GetState(true));
  }

 private:
  enum class Phase { idle, watching, ready, failed };

  void watch(grpc_connectivity_state state) {
    if (state == GRPC_CHANNEL_READY) {
      settle(true, {});
      return;
    }
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) {
      settle(false, fmt::format("could not connect to {} ({}): the channel went {} (nothing "
                                "listens there, it does not speak HTTP/2, or {}){}",
                                address_, transport_, state_name(state),
                                transport_ == "TLS" ? "the TLS handshake failed"
                                                    : "it expects TLS: grpcs://",
                                grpc_error_note(errors_before_)));
      return;
    }
    phase_ = Phase::watching;
    channel_->NotifyOnStateChange(state, deadline_, &loop_.queue(), this);
  }

  void settle(bool ok, std::string error) {
    phase_ = ok ? Phase::ready : Phase::failed;
    error_ = std::move(error);
    std::vector<ConnectedFn> waiting;
    waiting.swap(waiting_);
    for (ConnectedFn& connected : waiting)
      connected(ok, error_);
  }

  CompletionLoop& loop_;
  std::string address_;
  std::string transport_;  // for the errors: TLS or plaintext
  std::chrono::nanoseconds timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
  Phase phase_ = Phase::idle;
  std::string error_;
  std::chrono::system_clock::time_point deadline_;
  uint64_t errors_before_ = 0;  // gRPC's errors logged before the connect began
  std::vector<ConnectedFn> waiting_;
};

CompletionLoop::CompletionLoop(event_base* base, const GrpcCalls& calls) {
  keep_grpc_log();
  const int channels = std::max(1, calls.options().channels);
  for (int i = 0; i < channels; ++i)
    channels_.push_back(std::make_unique<Channel>(*this, calls));
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0)
    throw std::runtime_error("eventfd failed");
  wake_event_ = event_new(base, wake_fd_, EV_READ | EV_PERSIST, &CompletionLoop::on_wake, this);
  event_add(wake_event_, nullptr);
  poller_ = std::thread([this] { poll(); });
}

CompletionLoop::~CompletionLoop() {
  // The clients are gone, and cancelled their calls still out: the queue gives those back
  // (and a connect still watched, at its deadline) before Next says it is shut.
  queue_.Shutdown();
  poller_.join();
  event_free(wake_event_);
  close(wake_fd_);
  calls_.clear();
}

grpc::GenericStub& CompletionLoop::stub(int index) {
  return channels_[static_cast<size_t>(index) % channels_.size()]->stub();
}

void CompletionLoop::connect(int index, ConnectedFn connected) {
  channels_[static_cast<size_t>(index) % channels_.size()]->connect(std::move(connected));
}

void CompletionLoop::keep(std::unique_ptr<Completion> call) {
  Completion* tag = call.get();
  calls_.emplace(tag, std::move(call));
}

void CompletionLoop::poll() {
  void* tag = nullptr;
  bool ok = false;
  while (queue_.Next(&tag, &ok)) {
    const Clock::time_point at = Clock::now();
    bool first = false;
    {
      std::lock_guard lock(mutex_);
      first = ready_.empty();
      ready_.push_back({tag, ok, at});
    }
    if (first) {
      const uint64_t one = 1;
      // The counter cannot overflow at one write per batch; a failed write would only be
      // EAGAIN at 2^64 - 1.
      [[maybe_unused]] const ssize_t written = write(wake_fd_, &one, sizeof one);
    }
  }
}

void CompletionLoop::on_wake(int fd, short, void* self_arg) {
  auto* self = static_cast<CompletionLoop*>(self_arg);
  // The counter first, then the batch: a completion queued after the read wakes the loop again.
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t read_bytes = read(fd, &count, sizeof count);
  self->taken_.clear();
  {
    std::lock_guard lock(self->mutex_);
    self->taken_.swap(self->ready_);
  }
  for (const Ready& ready : self->taken_) {
    auto* completion = static_cast<Completion*>(ready.tag);
    completion->complete(ready.ok, ready.at);
    self->calls_.erase(completion);  // a call's tag comes back once; a channel's is not here
  }
}

}  // namespace rlcheck::grpc_target
