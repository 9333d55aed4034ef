#pragma once
// serve --strategy concurrency: the release of an admitted request's place in the semaphore
// (lua/concurrency.lua), once its reply is sent. One ZREM of the request's member; a release
// lost to an outage is made up by the member's lease.

#include <memory>
#include <string>

#include "redis/strategy.hpp"

namespace rlcheck::serve {

// Removes `member` from the sorted set `key`; decides "allowed" once Redis answered.
std::unique_ptr<redis::Strategy> make_semaphore_release(std::string key, std::string member);

}  // namespace rlcheck::serve
