#pragma once
// `rlcheck hook-config -- <rlcheck arguments>`: the Claude Code settings.json block that runs
// that check as a Stop hook, JSON-escaped by a JSON library rather than by hand.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlcheck::app {

// {"hooks":{"Stop":[{"hooks":[{"type":"command","command":"rlcheck ... --hook"}]}]}}; --hook is
// added when the arguments lack it. With `existing` (a settings.json document), the hook is
// added to its Stop hooks, leaving every other setting and hook as it was (and not added twice).
nlohmann::json hook_settings(const std::vector<std::string>& rlcheck_args,
                             const std::optional<nlohmann::json>& existing = std::nullopt);

// The command: prints the block (merged with --merge FILE, which is read, never written).
int run_hook_config(const std::vector<std::string>& rlcheck_args,
                    const std::optional<std::string>& merge_path);

}  // namespace rlcheck::app
