#pragma once
// `rlcheck hook-config -- <rlcheck arguments>`: the Claude Code settings.json block that runs
// that check as a Stop hook, JSON-escaped by a JSON library rather than by hand.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/hook.hpp"

namespace rlcheck::app {

// {"hooks":{"Stop":[{"hooks":[{"type":"command","command":"rlcheck ... --hook"}]}]}}; --hook is
// added when the arguments lack it. With `existing` (a settings.json document), the hook is
// added to its Stop hooks, leaving every other setting and hook as it was, in the user's key
// order (and not added twice).
// `program` is the command's first word (hook_program, app/hook.hpp); `timeout_s`, when set,
// the entry's "timeout" (hook_budget). An entry of the same command already there is given
// that timeout rather than added again.
nlohmann::ordered_json hook_settings(
    const std::vector<std::string>& rlcheck_args,
    const std::optional<nlohmann::ordered_json>& existing = std::nullopt,
    const std::string& program = "rlcheck", std::optional<int64_t> timeout_s = std::nullopt);

// How a settings.json is indented, to print it back the same way: the argument for dump()
// (-1: on one line, as the file was), and the character (' ' or '\t').
struct JsonIndent {
  int width = 2;
  char character = ' ';
};
JsonIndent indent_of(const std::string& text);

// The command: checks the wrapped command line as the hook would parse it (a usage error with
// the same message, nothing printed) and that its length is bounded (hook_budget), then prints
// the block, with the timeout that covers it (merged with --merge FILE, which is
// read, never written).
int run_hook_config(const std::vector<std::string>& rlcheck_args,
                    const std::optional<std::string>& merge_path);

}  // namespace rlcheck::app
