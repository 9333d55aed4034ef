#pragma once
// What CLI11 does not say on its own: a value that is really the next flag (`--html -q` would
// write a file named -q), and which flag or command a typo meant.

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace rlcheck::cli {

// Before parsing: an option that takes a value, followed by a word that is exactly an option
// name of the same command (`--html -q`, `-k -r`), is a usage error naming both. Values that
// merely start with '-' (`--arg -1`, `--arg -x`) stay values; `--opt=VALUE` is not looked at.
// Arguments after `--` (hook-config's wrapped command line) are not looked at either.
void refuse_flags_as_values(CLI::App& root, int argc, const char* const* argv);

// After CLI11 refused the command line: one line naming the unknown flag or command that was
// left over, with the closest known name when one is close ("--concurency: unknown option;
// did you mean --concurrency?"). Nothing when no flag or command was left over.
std::optional<std::string> explain_leftover(CLI::App& root);

}  // namespace rlcheck::cli
