#pragma once
// `rlcheck grpc HOST:PORT --method pkg.Service/Method`: a unary gRPC method in front of a limiter
// (RESOURCE_EXHAUSTED), or a service that answers with the verdict (Envoy's rate limit service,
// --denied-when overall_code=OVER_LIMIT); probe and compare take it as grpc://HOST:PORT.

#include "targets/target_kind.hpp"

namespace rlcheck::targets {

TargetKind grpc_kind();

}  // namespace rlcheck::targets
