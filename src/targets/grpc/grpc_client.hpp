#pragma once
// The gRPC client of a run: each client makes one unary call at a time through a generic stub
// (the request's bytes built from --data, the response read by reflection), on its loop's
// channels and completion queue (targets/grpc/completion_loop). Only the folder's own files
// include gRPC's headers.

#include <memory>

#include "engine/client.hpp"
#include "targets/grpc/grpc_calls.hpp"

namespace rlcheck::grpc_target {

// Clients that make `calls`; the factory keeps them alive.
std::unique_ptr<engine::ClientFactory> make_grpc_client_factory(
    std::shared_ptr<const GrpcCalls> calls);

}  // namespace rlcheck::grpc_target
