#pragma once
// A client's random generator, for {uuid}: seeded per client, so --seed reproduces a run, and
// made when first drawn from. Its 2.5 KB of state would otherwise sit between the client
// objects of every run, used or not: at -p 50 --pipeline 16, 800 clients spread over 2 MB
// instead of 400 KB, and each request's client came cold from beyond the core's cache.

#include <cstdint>
#include <memory>
#include <random>

namespace rlcheck::engine {

class ClientRng {
 public:
  explicit ClientRng(uint64_t seed) : seed_(seed) {}

  std::mt19937_64& get() {
    if (!generator_)
      generator_ = std::make_unique<std::mt19937_64>(seed_);
    return *generator_;
  }

 private:
  uint64_t seed_;
  std::unique_ptr<std::mt19937_64> generator_;
};

}  // namespace rlcheck::engine
