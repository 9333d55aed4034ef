#pragma once
// CLI11's parse errors in rlcheck's words: one line naming the flag, what it expects and what
// it got ("--concurrency: expected a whole number, got 'abc'"), never CLI11's own phrasing
// ("Could not convert", "At Most 1 required but received 2", "1 required INT missing").

#include <string>

#include <CLI/CLI.hpp>

namespace rlcheck::cli {

// The usage error for `error`, which CLI11 raised parsing the command line into `root`.
std::string parse_error_message(CLI::App& root, const CLI::ParseError& error);

// What a value of CLI11's type name reads as: "INT" -> "a whole number".
std::string expected_value(const std::string& type_name);

}  // namespace rlcheck::cli
