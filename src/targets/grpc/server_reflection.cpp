#include "targets/grpc/server_reflection.hpp"

#include <deque>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

#include "targets/grpc/grpc_channel.hpp"
#include "targets/grpc/message_bytes.hpp"
#include "targets/grpc/reflection_messages.hpp"
#include "targets/grpc/status_codes.hpp"

namespace rlcheck::grpc_target {
namespace {

namespace pb = google::protobuf;

constexpr const char* k_reflection_method =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
// A service that keeps naming files it does not send is not followed further.
constexpr size_t k_most_asks = 1000;

// The reflection stream: each ask written and its reply read in turn, on a queue of its own,
// every operation bounded by the call's deadline.
class ReflectionStream {
 public:
  ReflectionStream(const std::shared_ptr<grpc::Channel>& channel,
                   std::chrono::system_clock::time_point deadline)
      : stub_(channel) {
    context_.set_deadline(deadline);
    stream_ = stub_.PrepareCall(&context_, k_reflection_method, &queue_);
    stream_->StartCall(this);
    open_ = wait();
  }
  ~ReflectionStream() {
    if (!finished_) {
      context_.TryCancel();  // nothing more to ask: the status does not matter
      finish();
    }
    queue_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (queue_.Next(&tag, &ok)) {
    }
  }
  ReflectionStream(const ReflectionStream&) = delete;
  ReflectionStream& operator=(const ReflectionStream&) = delete;

  // One ask and the bytes of its reply; false when the stream ended instead (finish() says why).
  bool ask(const std::string& request, std::string& reply) {
    if (!open_)
      return false;
    stream_->Write(buffer_of(request), this);
    grpc::ByteBuffer in;
    if (!wait() || (stream_->Read(&in, this), !wait())) {
      open_ = false;
      return false;
    }
    std::vector<grpc::Slice> slices;
    return bytes_of(in, slices, reply);
  }

  // How the stream ended (once it did: an ask failed).
  const grpc::Status& finish() {
    if (!finished_) {
      stream_->Finish(&status_, this);
      wait();
      finished_ = true;
    }
    return status_;
  }

 private:
  // The one operation out, done: whether it went through.
  bool wait() {
    void* tag = nullptr;
    bool ok = false;
    return queue_.Next(&tag, &ok) && ok;
  }

  grpc::CompletionQueue queue_;
  grpc::ClientContext context_;
  grpc::GenericStub stub_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> stream_;
  grpc::Status status_;
  bool open_ = false;
  bool finished_ = false;
};

ReflectionFailure failure(ReflectionFailure::Kind kind, std::string message) {
  return {kind, std::move(message)};
}

// Why the stream ended before every ask was answered.
ReflectionFailure stream_failure(const grpc::Status& status, const GrpcOptions& options,
                                 std::chrono::nanoseconds timeout, uint64_t errors_before) {
  const std::string& address = options.address;
  switch (status.error_code()) {
    case grpc::StatusCode::UNIMPLEMENTED:
      return failure(ReflectionFailure::Kind::not_offered,
                     fmt::format("{} does not offer server reflection "
                                 "(grpc.reflection.v1alpha.ServerReflection): give the method's "
                                 "types with --proto FILE",
                                 address));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return failure(
          ReflectionFailure::Kind::unreachable,
          fmt::format("no server reflection reply from {} ({}) within {} ms (--timeout); or give "
                      "the method's types with --proto FILE",
                      address, transport_name(options),
                      std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
    case grpc::StatusCode::UNAVAILABLE:
      return failure(ReflectionFailure::Kind::unreachable,
                     fmt::format("could not connect to {} ({}) to ask its server reflection: "
                                 "{}{}",
                                 address, transport_name(options), status.error_message(),
                                 grpc_error_note(errors_before)));
    case grpc::StatusCode::OK:
      return failure(ReflectionFailure::Kind::unusable,
                     fmt::format("{} ended its server reflection stream without a reply", address));
    default:
      return failure(
          ReflectionFailure::Kind::unreachable,
          fmt::format("{}'s server reflection ended {}: {}; or give the method's types "
                      "with --proto FILE",
                      address, status_code_name(status.error_code()), status.error_message()));
  }
}

// Whether the protobuf library has file `name` built in (the well-known types).
bool built_in(const std::string& name) {
  return pb::DescriptorPool::generated_pool()->FindFileByName(name) != nullptr;
}

}  // namespace

std::expected<std::vector<std::string>, ReflectionFailure> describe_service(
    const GrpcOptions& options, const GrpcCalls::TlsPem& pem, const std::string& service,
    std::chrono::nanoseconds timeout) {
  keep_grpc_log();
  const uint64_t errors_before = grpc_errors_so_far();
  ReflectionStream stream(
      open_channel(options, pem),
      std::chrono::system_clock::now() +
          std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout));
  return collect_described_files(
      options.address, service,
      [&stream](const std::string& request, std::string& reply) {
        return stream.ask(request, reply);
      },
      [&] { return stream_failure(stream.finish(), options, timeout, errors_before); });
}

std::expected<std::vector<std::string>, ReflectionFailure> collect_described_files(
    const std::string& address, const std::string& service, const ReflectionAsk& ask,
    const std::function<ReflectionFailure()>& ended) {
  std::vector<std::string> files;
  std::set<std::string> received;
  std::set<std::string> asked_for;
  std::deque<ReflectionRequest> asks{{"", ReflectionRequest::Ask::file_containing_symbol, service}};
  std::string bytes;
  for (size_t asked = 0; !asks.empty(); ++asked) {
    const ReflectionRequest request = std::move(asks.front());
    asks.pop_front();
    if (request.ask == ReflectionRequest::Ask::file_by_filename && received.contains(request.name))
      continue;  // an earlier reply carried it
    if (asked == k_most_asks) {
      return std::unexpected(failure(
          ReflectionFailure::Kind::unusable,
          fmt::format("{}'s server reflection names more than {} files", address, k_most_asks)));
    }
    if (!ask(encode_reflection_request(request), bytes))
      return std::unexpected(ended());
    auto reply = decode_reflection_reply(bytes);
    if (!reply) {
      return std::unexpected(failure(ReflectionFailure::Kind::unusable,
                                     fmt::format("{}: {}", address, reply.error())));
    }
    const bool for_service = request.ask == ReflectionRequest::Ask::file_containing_symbol;
    if (reply->error) {
      if (for_service && reply->error_code == static_cast<int>(grpc::StatusCode::NOT_FOUND)) {
        return std::unexpected(
            failure(ReflectionFailure::Kind::unknown_service,
                    fmt::format("--method: {} has no service {} (its server reflection says: {})",
                                address, service, reply->error_message)));
      }
      return std::unexpected(failure(
          ReflectionFailure::Kind::unusable,
          fmt::format("{}'s server reflection cannot describe {}: {}: {}; give the method's types "
                      "with --proto FILE",
                      address, for_service ? "service " + service : request.name,
                      status_code_name(reply->error_code), reply->error_message)));
    }
    if (for_service && reply->files.empty()) {
      return std::unexpected(
          failure(ReflectionFailure::Kind::unusable,
                  fmt::format("{}'s server reflection describes no file for service {}", address,
                              service)));
    }
    for (std::string& file_bytes : reply->files) {
      pb::FileDescriptorProto file;
      if (!file.ParseFromString(file_bytes) || file.name().empty()) {
        return std::unexpected(failure(
            ReflectionFailure::Kind::unusable,
            fmt::format("{}: a file its server reflection describes does not parse", address)));
      }
      if (!received.insert(file.name()).second)
        continue;  // carried again: the first one counts
      for (const std::string& dependency : file.dependency()) {
        if (!built_in(dependency) && !received.contains(dependency) &&
            asked_for.insert(dependency).second) {
          asks.push_back({"", ReflectionRequest::Ask::file_by_filename, dependency});
        }
      }
      files.push_back(std::move(file_bytes));
    }
  }
  return files;
}

}  // namespace rlcheck::grpc_target
