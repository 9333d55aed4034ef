#pragma once
// `rlcheck grpc`'s command: its options (and those probe and compare add for grpc:// URLs), and
// the configuration they fill (targets/grpc/grpc_config).

#include "cli/kind_command.hpp"

namespace rlcheck::grpc_target {

cli::KindCommand grpc_command();

}  // namespace rlcheck::grpc_target
