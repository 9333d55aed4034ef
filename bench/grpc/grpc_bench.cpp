// The gRPC client's throughput: N unary calls to a server through engine::execute_run and the
// gRPC client factory, as `rlcheck grpc` will send them, with no limiter in the way. Prints one
// line: calls, seconds, calls per second, and this process's CPU (user + system, every thread:
// the worker loops and their completion-queue threads) per call in microseconds.
//
//   rlcheck_grpc_bench HOST:PORT PROTO_DIR CALLS CONCURRENCY [THREADS [DATA]]
//
// DATA is the request's JSON (default {"text": "hello", "seq": {seq}}: read per call); one
// without placeholders is encoded once.
//
// bench/grpc.sh starts the server (tests/fixtures/grpc's token_bucket_server, its bucket far
// larger than the run) and compares with h2load.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/run.hpp"
#include "targets/grpc/grpc_calls.hpp"
#include "targets/grpc/grpc_client.hpp"

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s HOST:PORT PROTO_DIR CALLS CONCURRENCY [THREADS [DATA]]\n",
                 argv[0]);
    return 64;
  }
  using namespace rlcheck;
  grpc_target::GrpcOptions options;
  options.address = argv[1];
  options.method = "rlcheck.fixture.Echo/Say";
  options.proto_files = {std::string(argv[2]) + "/echo.proto"};
  options.data = argc > 6 ? argv[6] : R"({"text": "hello", "seq": {seq}})";
  auto target = grpc_target::GrpcCalls::make(options);
  if (!target) {
    std::fprintf(stderr, "%s\n", target.error().c_str());
    return 64;
  }
  auto factory = grpc_target::make_grpc_client_factory(*target);
  config::LoadConfig load;
  load.requests = std::atoll(argv[3]);
  load.concurrency = std::atoi(argv[4]);
  load.threads = argc > 5 ? std::atoi(argv[5]) : 1;
  load.timeout = std::chrono::seconds(10);

  const double cpu_before = cpu_seconds();
  const auto started = std::chrono::steady_clock::now();
  const engine::RunResult result = engine::execute_run(*factory, load);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double cpu = cpu_seconds() - cpu_before;
  int64_t allowed = 0;
  for (const engine::RequestRecord& record : result.records)
    allowed += record.outcome == engine::Outcome::allowed ? 1 : 0;
  std::printf("calls %lld allowed %lld seconds %.3f calls_per_s %.0f cpu_us_per_call %.2f\n",
              static_cast<long long>(result.records.size()), static_cast<long long>(allowed),
              seconds, static_cast<double>(result.records.size()) / seconds,
              cpu / static_cast<double>(result.records.size()) * 1e6);
  return allowed == static_cast<int64_t>(result.records.size()) ? 0 : 1;
}
