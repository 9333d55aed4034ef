#pragma once
// Whether a Lua limiter script asks Redis for the time: a string literal TIME (any case), as in
// redis.call('TIME'). Under --virtual-clock such a script would decide on Redis's real clock and
// ignore the instants it is given, so it is refused before anything runs.

#include <optional>
#include <string_view>

namespace rlcheck::redis {

// The 1-based line of the first string literal equal to TIME (quoted or long-bracketed;
// comments skipped), or nullopt. Static: a TIME in a branch the script never takes counts too.
std::optional<int> line_calling_time(std::string_view lua);

}  // namespace rlcheck::redis
