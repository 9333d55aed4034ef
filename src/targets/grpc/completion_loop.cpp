#include "targets/grpc/completion_loop.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <event2/event.h>
#include <fmt/format.h>
#include <grpc/support/log.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

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

// gRPC logs why a connect failed (a refused connection, a certificate that does not verify) to
// stderr, amid rlcheck's own output. Its errors are kept instead, the last one said in the
// connect error; with GRPC_VERBOSITY set gRPC logs as it would.
std::mutex grpc_log_mutex;
std::string grpc_last_error;
uint64_t grpc_errors = 0;  // how many were kept: a connect's note is one logged since it began

void keep_grpc_error(gpr_log_func_args* args) {
  if (args->severity != GPR_LOG_SEVERITY_ERROR)
    return;
  std::lock_guard lock(grpc_log_mutex);
  grpc_last_error = args->message;
  ++grpc_errors;
}

uint64_t grpc_errors_so_far() {
  std::lock_guard lock(grpc_log_mutex);
  return grpc_errors;
}

void keep_grpc_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("GRPC_VERBOSITY") == nullptr)
      gpr_set_log_function(&keep_grpc_error);
  });
}

// gRPC's last error, as ": MESSAGE", when one was logged after the `since`-th; else nothing.
std::string grpc_error_note(uint64_t since) {
  std::lock_guard lock(grpc_log_mutex);
  return grpc_errors > since ? ": " + grpc_last_error : std::string();
}

}  // namespace

// One HTTP/2 connection of the loop's own (a local subchannel pool: channels of other loops do
// not share it), and its connect: a watch on its state, itself a tag on the queue.
class CompletionLoop::Channel final : public Completion {
 public:
  Channel(CompletionLoop& loop, const GrpcCalls& target)
      : loop_(loop),
        address_(target.options().address),
        transport_(target.options().use_tls ? "TLS" : "plaintext HTTP/2"),
        timeout_(target.options().timeout) {
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    // The connect phase asks once: a failed connect is reported, not retried with backoff.
    arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    if (target.options().use_tls) {
      const GrpcCalls::TlsPem& pem = target.tls_pem();
      credentials = grpc::SslCredentials({pem.roots, pem.private_key, pem.cert_chain});
      if (!target.options().tls.sni.empty())
        arguments.SetSslTargetNameOverride(target.options().tls.sni);
    }
    channel_ = grpc::CreateCustomChannel(address_, credentials, arguments);
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

CompletionLoop::CompletionLoop(event_base* base, const GrpcCalls& target) {
  keep_grpc_log();
  const int channels = std::max(1, target.options().channels);
  for (int i = 0; i < channels; ++i)
    channels_.push_back(std::make_unique<Channel>(*this, target));
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
