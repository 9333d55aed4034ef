#include "engine/interrupt.hpp"

#include <csignal>

namespace rlcheck::engine {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt_signal(int) {
  g_interrupted = 1;
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_interrupt_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void request_interrupt() {
  g_interrupted = 1;
}

bool interrupted() {
  return g_interrupted != 0;
}

}  // namespace rlcheck::engine
