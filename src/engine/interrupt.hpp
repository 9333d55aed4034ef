#pragma once
// Ctrl-C: the first SIGINT or SIGTERM stops the runs; what was measured is still reported.

namespace rlcheck::engine {

void install_interrupt_handler();
bool interrupted();

}  // namespace rlcheck::engine
