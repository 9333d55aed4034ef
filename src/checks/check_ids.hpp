#pragma once
// Every check's stable id, in the order reports list them: each has its page in docs/checks.md
// (compiled in; `rlcheck explain ID` prints it), and a test holds the two lists to each other.

#include <array>
#include <string_view>

namespace rlcheck::checks {

inline constexpr std::array<std::string_view, 16> k_check_ids{"limit",
                                                              "exact",
                                                              "retry-after-present",
                                                              "retry-after-valid",
                                                              "retry-after-bound",
                                                              "key-ttl",
                                                              "errors",
                                                              "contract",
                                                              "utilisation",
                                                              "retry-after-accuracy",
                                                              "retry-after-honest",
                                                              "fail-mode",
                                                              "recovery",
                                                              "delay",
                                                              "slo",
                                                              "remaining"};

}  // namespace rlcheck::checks
