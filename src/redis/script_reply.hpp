#pragma once
// The reply contract of a limiter script: an integer (1 allowed, 0 denied) or an array
// {allowed, remaining?, retry_ms?} of integers.

#include <expected>
#include <string>

#include <hiredis/hiredis.h>

#include "engine/request_record.hpp"

namespace rlcheck::redis {

// The decision the reply states, or what is wrong with its shape ("returned string \"ok\"").
// hint_expected is set when the array has a retry_ms slot.
std::expected<engine::Decision, std::string> decision_from_script_reply(const redisReply& reply);

}  // namespace rlcheck::redis
