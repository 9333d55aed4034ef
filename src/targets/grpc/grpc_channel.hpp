#pragma once
// A channel (an HTTP/2 connection) to the service as the options say (plaintext, or TLS verified
// against --tls-ca, with --tls-sni and a client certificate), for the run's calls and for
// server reflection alike; and gRPC's own error log, kept out of rlcheck's output.

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/channel.h>

#include "targets/grpc/grpc_calls.hpp"

namespace rlcheck::grpc_target {

// A channel of its own (a local subchannel pool: other channels do not share its connection),
// whose failed connect is reported rather than retried with a long backoff.
std::shared_ptr<grpc::Channel> open_channel(const GrpcOptions& options,
                                            const GrpcCalls::TlsPem& pem);
// "TLS" or "plaintext HTTP/2", for errors.
std::string transport_name(const GrpcOptions& options);

// gRPC logs why a connect failed (a refused connection, a certificate that does not verify) to
// stderr, amid rlcheck's own output. From the first call on, its errors are kept instead, the
// last one said in a connect error; with GRPC_VERBOSITY set gRPC logs as it would.
void keep_grpc_log();
// How many errors were kept so far.
uint64_t grpc_errors_so_far();
// gRPC's last error, as ": MESSAGE", when one was kept after the `since`-th; else nothing.
std::string grpc_error_note(uint64_t since);

}  // namespace rlcheck::grpc_target
