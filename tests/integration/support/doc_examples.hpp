#pragma once
// What the docs test reads out of Markdown: the `$ rlcheck` examples of fenced code blocks (with
// the exit code and the output they show), the relative links, and the anchors headings make.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rlcheck::testing {

struct DocExample {
  int line = 0;                     // of the `$ rlcheck` line, counted from 1
  std::string command;              // without the `$ `, continuation lines joined
  bool background = false;          // ends in `&`: a server the page keeps running
  int exit_code = 0;                // `# exits N` at its end, else 0
  std::vector<std::string> output;  // the lines shown below it, `...` and blank ones left out
};

// Every line of a fenced code block that starts with `$ rlcheck `, in page order.
std::vector<DocExample> doc_examples(const std::string& markdown);

// `command` with every address the map names replaced by its value.
std::string with_addresses(std::string command,
                           const std::map<std::string, std::string>& addresses);

// `rlcheck serve ARGS &`: ARGS as words, --listen's value replaced by 127.0.0.1:0 (a free port),
// and the address the page gave it.
struct ServeCommand {
  std::vector<std::string> args;
  std::string listen;
};
std::optional<ServeCommand> serve_command(const std::string& command);

// Shell words of `text`: quotes ('...', "...") and backslashes as bash reads them, no expansion.
std::vector<std::string> shell_words(const std::string& text);

// Whether some line of `printed` starts like `shown`: the same first two words, every run of
// digits in them read as any number.
bool shape_printed(const std::string& shown, const std::string& printed);

// Whether `docs` names the option `--name` (not merely a longer one that starts with it).
bool documents_option(const std::string& docs, const std::string& name);

struct DocLink {
  int line = 0;
  std::string target;  // as written
  std::string path;    // before '#'; empty: the same page
  std::string anchor;  // after '#'
};
// Relative links outside code: [text](target), not http(s): or mailto:.
std::vector<DocLink> doc_links(const std::string& markdown);

// The anchors of a page's headings as GitHub makes them ("## `key-ttl`" -> "key-ttl",
// "## Retry-After truth" -> "retry-after-truth"; a repeated one gets -1, -2, ...).
std::set<std::string> heading_anchors(const std::string& markdown);

}  // namespace rlcheck::testing
