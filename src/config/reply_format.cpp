#include "config/reply_format.hpp"

#include <array>
#include <utility>

namespace rlcheck::config {
namespace {

constexpr std::array<std::pair<std::string_view, ReplyFormat>, 5> k_names{{
    {"contract", ReplyFormat::contract},
    {"counter", ReplyFormat::counter},
    {"cell", ReplyFormat::cell},
    {"rate", ReplyFormat::rate},
    {"count", ReplyFormat::count},
}};

}  // namespace

std::optional<ReplyFormat> parse_reply_format(std::string_view name) {
  for (const auto& [spelling, format] : k_names) {
    if (spelling == name)
      return format;
  }
  return std::nullopt;
}

std::string_view reply_format_name(ReplyFormat format) {
  for (const auto& [spelling, candidate] : k_names) {
    if (candidate == format)
      return spelling;
  }
  return "unknown";
}

std::string_view reply_format_names_list() {
  return "contract, counter, cell, rate, count";
}

}  // namespace rlcheck::config
