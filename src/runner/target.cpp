#include "runner/target.hpp"

namespace rlcheck::runner {

engine::RunResult run_once(Target& target, const StateChoice& state,
                           const config::LoadConfig& load) {
  const RunClients clients = target.clients(state, load);
  engine::RunResult result = engine::execute_run(*clients.factory, clients.load);
  if (clients.finish)
    clients.finish(result);
  return result;
}

}  // namespace rlcheck::runner
