#pragma once
// A service's message types asked of the service itself, by gRPC's server reflection
// (grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo, a stream both ways), when no
// --proto is given: the file that defines the method's service, then by name each file it
// imports that no reply carried yet (the well-known types are built in). Asked once, before the
// test, on a channel as the run's (TLS as configured), every reply within one deadline.

#include <chrono>
#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "targets/grpc/grpc_calls.hpp"
#include "targets/grpc/grpc_options.hpp"

namespace rlcheck::grpc_target {

struct ReflectionFailure {
  enum class Kind {
    unreachable,      // no connection, or no reply within the deadline
    not_offered,      // the service has no server reflection
    unknown_service,  // the service knows no such service
    unusable,         // replies that do not parse, or describe no usable file
  };
  Kind kind = Kind::unreachable;
  std::string message;  // one line
};

// The serialized google.protobuf.FileDescriptorProtos of `service` (pkg.Service) and of the
// files it imports, as the service at options.address describes them.
std::expected<std::vector<std::string>, ReflectionFailure> describe_service(
    const GrpcOptions& options, const GrpcCalls::TlsPem& pem, const std::string& service,
    std::chrono::nanoseconds timeout);

// One ask on a reflection stream: the request's bytes written, its reply's bytes read; false
// when the stream ended instead.
using ReflectionAsk = std::function<bool(const std::string& request, std::string& reply)>;

// describe_service's asks and replies over `ask`, the service at `address` (for messages);
// `ended` says why the stream ended when an ask found it so.
std::expected<std::vector<std::string>, ReflectionFailure> collect_described_files(
    const std::string& address, const std::string& service, const ReflectionAsk& ask,
    const std::function<ReflectionFailure()>& ended);

}  // namespace rlcheck::grpc_target
