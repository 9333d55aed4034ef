#include "app/run_main.hpp"

int main(int argc, char** argv) {
  return rlcheck::app::run_main(argc, argv);
}
