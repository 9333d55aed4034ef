#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "app/hook_config.hpp"

using nlohmann::ordered_json;
using rlcheck::app::hook_settings;
using rlcheck::app::indent_of;

TEST_CASE("hook_settings keeps the user's keys in their order and adds the Stop hook last") {
  const ordered_json existing = ordered_json::parse(
      R"({"theme": "dark", "model": "opus", "hooks": {"PreToolUse": [], "Notification": []},
          "apiKeyHelper": "x"})");
  const ordered_json merged = hook_settings({"redis", "--strategy", "lua"}, existing);
  std::vector<std::string> keys;
  for (const auto& [key, value] : merged.items())
    keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"theme", "model", "hooks", "apiKeyHelper"});
  std::vector<std::string> hook_keys;
  for (const auto& [key, value] : merged["hooks"].items())
    hook_keys.push_back(key);
  CHECK(hook_keys == std::vector<std::string>{"PreToolUse", "Notification", "Stop"});
  CHECK(merged["hooks"]["Stop"][0]["hooks"][0]["command"] == "rlcheck redis --strategy lua --hook");
  // Not added twice.
  CHECK(hook_settings({"redis", "--strategy", "lua"}, merged) == merged);
}

TEST_CASE("the new block reads type first, as docs/ci.md shows it") {
  CHECK(hook_settings({"redis"}).dump() ==
        R"({"hooks":{"Stop":[{"hooks":[{"type":"command","command":"rlcheck redis --hook"}]}]}})");
}

TEST_CASE("indent_of reads the indentation of a settings file") {
  CHECK(indent_of("{\n  \"a\": 1\n}\n").width == 2);
  CHECK(indent_of("{\n    \"a\": {\n        \"b\": 1\n    }\n}").width == 4);
  const auto tabs = indent_of("{\n\t\"a\": 1\n}\n");
  CHECK(tabs.width == 1);
  CHECK(tabs.character == '\t');
  CHECK(indent_of("{\"a\": 1}\n").width == -1);  // one line stays one line
  CHECK(indent_of("{\"a\": 1}").width == -1);
  CHECK(indent_of("{\n\"a\": 1\n}").width == 2);  // broken over lines, not indented
}

TEST_CASE("hook_program is a bare rlcheck only when PATH finds this very program") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / fmt::format("rlcheck-hook-{}", ::getpid());
  fs::create_directories(root / "bin");
  fs::create_directories(root / "other");
  const fs::path self = root / "bin" / "rlcheck";
  std::ofstream(self) << "#!/bin/sh\n";
  fs::permissions(self, fs::perms::owner_all);
  const std::string bin = (root / "bin").string();
  const std::string other = (root / "other").string();

  using rlcheck::app::hook_program;
  CHECK(hook_program(bin.c_str(), self) == "rlcheck");
  CHECK(hook_program(("/nonexistent:" + bin).c_str(), self) == "rlcheck");
  // Not on PATH (or no PATH at all): the absolute path, which the hook's shell always finds.
  CHECK(hook_program(other.c_str(), self) == self.string());
  CHECK(hook_program(nullptr, self) == self.string());
  // Another rlcheck first on PATH would be the one the hook runs: not this program.
  const fs::path another = root / "other" / "rlcheck";
  std::ofstream(another) << "#!/bin/sh\n";
  fs::permissions(another, fs::perms::owner_all);
  CHECK(hook_program((other + ":" + bin).c_str(), self) == self.string());
  CHECK(hook_program(bin.c_str(), "").empty());
  fs::remove_all(root);
}

TEST_CASE("hook_settings starts the command with the program it is given, shell-quoted") {
  const ordered_json settings = hook_settings({"redis"}, std::nullopt, "/opt/my tools/rlcheck");
  CHECK(settings["hooks"]["Stop"][0]["hooks"][0]["command"] ==
        "'/opt/my tools/rlcheck' redis --hook");
}

TEST_CASE("hook_settings writes the timeout, and gives an entry already there the new one") {
  const ordered_json first = hook_settings({"redis"}, std::nullopt, "rlcheck", 168);
  CHECK(first.dump() ==
        R"({"hooks":{"Stop":[{"hooks":[{"type":"command","command":"rlcheck redis --hook",)"
        R"("timeout":168}]}]}})");
  const ordered_json longer = hook_settings({"redis"}, first, "rlcheck", 300);
  REQUIRE(longer["hooks"]["Stop"].size() == 1);
  CHECK(longer["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 300);
}
