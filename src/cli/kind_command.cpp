#include "cli/kind_command.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace rlcheck::cli {
namespace {

KindTable installed_table = nullptr;

}  // namespace

void install_kinds(KindTable table) {
  installed_table = table;
}

std::span<const KindCommand> kind_commands() {
  if (installed_table == nullptr)
    throw std::logic_error("no kinds of target were installed (targets::install_kinds)");
  return installed_table();
}

const KindCommand* kind_command_named(std::string_view name) {
  for (const KindCommand& kind : kind_commands()) {
    if (kind.name == name)
      return &kind;
  }
  return nullptr;
}

const KindCommand* kind_command_for_url(std::string_view url) {
  for (const KindCommand& kind : kind_commands()) {
    for (std::string_view scheme : kind.schemes) {
      if (url.size() > scheme.size() + 3 && url.starts_with(scheme) &&
          url.substr(scheme.size(), 3) == "://") {
        return &kind;
      }
    }
  }
  return nullptr;
}

std::string known_schemes() {
  std::string out;
  for (const KindCommand& kind : kind_commands()) {
    for (std::string_view scheme : kind.schemes)
      out += fmt::format("{}{}://", out.empty() ? "" : ", ", scheme);
  }
  return out;
}

}  // namespace rlcheck::cli
