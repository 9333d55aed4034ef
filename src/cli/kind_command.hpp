#pragma once
// A kind of target as the command line sees it: its command (`rlcheck NAME`), the options it
// adds, what they fill, and what the shared options ask of it. The table of kinds is
// targets/target_kinds.cpp's; the command line lists what it is given and names no kind.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace rlcheck::config {
struct Config;
}

namespace rlcheck::cli {

struct RawOptions;

struct KindCommand {
  std::string_view name;     // its command, config.kind, and the reports' mode
  std::string_view summary;  // the command's line in --help
  // URL schemes that name a target of this kind where a command takes URLs of any kind (probe,
  // compare --url, scenario files): "http", "https".
  std::vector<std::string_view> schemes;
  // The target's address its command takes first ("URL"), and what the target is called in
  // messages ("endpoint"); empty for a kind whose command takes none (a Redis limiter).
  std::string_view positional;
  std::string_view noun;
  // Its limit and window may be read from its replies: one run by default, judged after the
  // runs, --limit and --window optional.
  bool limits_from_replies = false;
  // The limiter's state is in a Redis rlcheck reaches itself (keys, TTLs, topology, restart@,
  // --hint-resolution); else a Redis behind the target is reached through --limiter-redis.
  bool state_in_redis = false;
  // Adds the command's own options beside the load options every kind takes.
  void (*add_options)(CLI::App& command, RawOptions& raw) = nullptr;
  // The options a command that takes URLs of any kind (probe, compare --url) adds for this kind,
  // beside those it has (an option of that name already there is left as it is); none: nothing.
  void (*add_url_options)(CLI::App& command, RawOptions& raw) = nullptr;
  // Fills the kind's part of the configuration from `raw`, after the shared part; throws a
  // usage error naming the flag.
  void (*fill)(const RawOptions& raw, config::Config& config) = nullptr;
};

// The table of kinds the command line offers: installed by the program before it reads a command
// line (targets::install_kinds, from main, the tests' main and the fuzzers), so that the command
// line names no kind and includes none. Called again whenever asked (a test's kinds come and go).
using KindTable = std::span<const KindCommand> (*)();
void install_kinds(KindTable table);

// Every kind, the first being what compare and probe drive when no URL names one. Throws
// std::logic_error when no table was installed.
std::span<const KindCommand> kind_commands();

const KindCommand* kind_command_named(std::string_view name);
// The kind whose scheme `url` starts with ("grpc://..."); nullptr when none.
const KindCommand* kind_command_for_url(std::string_view url);
// "http://, https://, grpc://": the schemes of every kind, for messages.
std::string known_schemes();

}  // namespace rlcheck::cli
