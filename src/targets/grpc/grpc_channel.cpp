#include "targets/grpc/grpc_channel.hpp"

#include <cstdlib>
#include <mutex>

#include <grpc/support/log.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace rlcheck::grpc_target {
namespace {

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

}  // namespace

std::shared_ptr<grpc::Channel> open_channel(const GrpcOptions& options,
                                            const GrpcCalls::TlsPem& pem) {
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // The connect phase asks once: a failed connect is reported, not retried with backoff.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (options.use_tls) {
    credentials = grpc::SslCredentials({pem.roots, pem.private_key, pem.cert_chain});
    if (!options.tls.sni.empty())
      arguments.SetSslTargetNameOverride(options.tls.sni);
  }
  return grpc::CreateCustomChannel(options.address, credentials, arguments);
}

std::string transport_name(const GrpcOptions& options) {
  return options.use_tls ? "TLS" : "plaintext HTTP/2";
}

void keep_grpc_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("GRPC_VERBOSITY") == nullptr)
      gpr_set_log_function(&keep_grpc_error);
  });
}

uint64_t grpc_errors_so_far() {
  std::lock_guard lock(grpc_log_mutex);
  return grpc_errors;
}

std::string grpc_error_note(uint64_t since) {
  std::lock_guard lock(grpc_log_mutex);
  return grpc_errors > since ? ": " + grpc_last_error : std::string();
}

}  // namespace rlcheck::grpc_target
