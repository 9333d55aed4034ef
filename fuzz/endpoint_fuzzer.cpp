// Fuzzes Redis URLs (--redis, $REDIS_URL): redis://, rediss://, unix://.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "redis/endpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view url(reinterpret_cast<const char*>(data), size);
  if (auto endpoint = rlcheck::redis::parse_endpoint(url); endpoint) {
    (void)endpoint->display();
    (void)endpoint->at("10.0.0.1", 7000).display();
  }
  return 0;
}
