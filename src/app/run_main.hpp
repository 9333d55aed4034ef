#pragma once

namespace rlcheck::app {

// The whole program: parse, run, report, and map every outcome to an exit code.
int run_main(int argc, const char* const* argv);

}  // namespace rlcheck::app
