#include "targets/grpc/grpc_client.hpp"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/message.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

#include "engine/client_rng.hpp"
#include "targets/grpc/completion_loop.hpp"
#include "targets/grpc/message_bytes.hpp"

namespace rlcheck::grpc_target {
namespace {

using Clock = std::chrono::steady_clock;

// gRPC's own deadline stands behind the engine's --timeout (which aborts the call first), so
// that no call outlives its run.
constexpr std::chrono::seconds k_deadline_margin{1};

class GrpcClient;

// One call on the queue. Outlives its client when the client gave it up (abort, or the run
// ended): the loop keeps it until the queue gives its tag back.
struct PendingCall final : Completion {
  explicit PendingCall(GrpcClient* owner) : client(owner) {}
  void complete(bool ok, Clock::time_point at) override;

  GrpcClient* client;  // null once given up
  grpc::ClientContext context;
  grpc::ByteBuffer response;
  grpc::Status status;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader;
};

class GrpcClient final : public engine::Client {
 public:
  GrpcClient(CompletionLoop& loop, engine::ClientListener& listener, int slot, int client_id,
             std::shared_ptr<const GrpcCalls> calls)
      : loop_(loop),
        listener_(listener),
        slot_(slot),
        calls_(std::move(calls)),
        rng_(engine::client_seed(calls_->options().seed, client_id)),
        response_(calls_->reads_response() ? calls_->new_response() : nullptr) {}
  ~GrpcClient() override { give_up(); }
  GrpcClient(const GrpcClient&) = delete;
  GrpcClient& operator=(const GrpcClient&) = delete;

  void connect() override {
    loop_.connect(slot_, [this](bool ok, const std::string& error) {
      listener_.on_connected(slot_, ok, error);
    });
  }

  void start(const engine::RequestTicket& ticket) override;
  void abort(engine::ErrorKind why) override;
  // Calls fail one by one when the server goes; the channel connects again by itself.
  bool alive() const override { return true; }

  void on_call_done(PendingCall& call, Clock::time_point at);

 private:
  void give_up() {
    if (current_ == nullptr)
      return;
    current_->client = nullptr;
    current_->context.TryCancel();
    current_ = nullptr;
  }
  void finish(engine::Decision&& decision) { listener_.on_decision(slot_, std::move(decision)); }

  CompletionLoop& loop_;
  engine::ClientListener& listener_;
  int slot_;
  std::shared_ptr<const GrpcCalls> calls_;
  engine::ClientRng rng_;
  std::unique_ptr<google::protobuf::Message> response_;  // reused; null: not read
  std::string json_;
  std::string bytes_;
  std::string error_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::vector<grpc::Slice> slices_;
  PendingCall* current_ = nullptr;  // the call in flight, kept by the loop
};

void PendingCall::complete(bool, Clock::time_point at) {
  if (client != nullptr)
    client->on_call_done(*this, at);
}

void GrpcClient::start(const engine::RequestTicket& ticket) {
  engine::PlaceholderContext context = calls_->options().placeholders;
  context.seq = ticket.seq;
  context.identity = ticket.identity;
  context.cost = ticket.cost;
  context.rng = &rng_;
  context.clock = &ticket.clock;
  if (!calls_->encode_request(context, json_, bytes_, error_)) {
    engine::Decision decision;
    decision.error = engine::ErrorKind::not_sent;
    decision.error_message = "--data: " + error_;
    finish(std::move(decision));
    return;
  }
  auto call = std::make_unique<PendingCall>(this);
  call->context.set_deadline(std::chrono::system_clock::now() + calls_->options().timeout +
                             k_deadline_margin);
  calls_->expand_metadata(context, metadata_);
  for (const auto& [key, value] : metadata_)
    call->context.AddMetadata(key, value);
  const grpc::ByteBuffer request = buffer_of(bytes_);
  call->reader = loop_.stub(slot_).PrepareUnaryCall(&call->context, calls_->method_path(), request,
                                                    &loop_.queue());
  call->reader->StartCall();
  call->reader->Finish(&call->response, &call->status, call.get());
  current_ = call.get();
  loop_.keep(std::move(call));
}

void GrpcClient::abort(engine::ErrorKind why) {
  if (current_ == nullptr)
    return;
  give_up();
  engine::Decision decision;
  decision.error = why;
  decision.error_message = "no reply within --timeout";
  finish(std::move(decision));
}

// The first value of metadata `key` among the trailers, else the initial metadata.
std::optional<std::string> metadata_value(const grpc::ClientContext& context,
                                          std::string_view key) {
  for (const auto* map :
       {&context.GetServerTrailingMetadata(), &context.GetServerInitialMetadata()}) {
    const auto found = map->find(grpc::string_ref(key.data(), key.size()));
    if (found != map->end())
      return std::string(found->second.data(), found->second.size());
  }
  return std::nullopt;
}

void GrpcClient::on_call_done(PendingCall& call, Clock::time_point at) {
  if (&call != current_)
    return;
  current_ = nullptr;
  CallEnd end;
  end.code = static_cast<int>(call.status.error_code());
  end.message = call.status.error_message();
  end.details = call.status.error_details();
  end.retry_after = metadata_value(call.context, "retry-after");
  if (end.code == 0 && response_ != nullptr) {
    if (bytes_of(call.response, slices_, bytes_) && response_->ParseFromString(bytes_))
      end.response = response_.get();
    else
      end.response_unreadable = true;
  }
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  engine::Decision decision = decide_call(end, calls_->rules(), now_s);
  decision.received = at;
  finish(std::move(decision));
}

class GrpcClientFactory final : public engine::ClientFactory {
 public:
  explicit GrpcClientFactory(std::shared_ptr<const GrpcCalls> calls) : calls_(std::move(calls)) {}
  std::unique_ptr<engine::LoopShared> make_loop_shared(event_base* base) override {
    return std::make_unique<CompletionLoop>(base, *calls_);
  }
  std::unique_ptr<engine::Client> make(event_base*, engine::LoopShared* shared,
                                       engine::ClientListener& listener, int slot,
                                       int client_id) override {
    return std::make_unique<GrpcClient>(static_cast<CompletionLoop&>(*shared), listener, slot,
                                        client_id, calls_);
  }

 private:
  std::shared_ptr<const GrpcCalls> calls_;
};

}  // namespace

std::unique_ptr<engine::ClientFactory> make_grpc_client_factory(
    std::shared_ptr<const GrpcCalls> calls) {
  return std::make_unique<GrpcClientFactory>(std::move(calls));
}

}  // namespace rlcheck::grpc_target
