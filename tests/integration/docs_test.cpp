// The docs are tested like code: every `$ rlcheck` example in README.md and docs/ runs against
// this test's own redis-server (and the `rlcheck serve` a page starts), with the exit code and
// the output's shape it shows; every option of --help is documented in docs/; every check has
// its page in docs/checks.md and `rlcheck explain`; every relative link resolves.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include <stdlib.h>
#include <optional>

#include <fmt/format.h>

#include "base/build_info.hpp"
#include "checks/check_ids.hpp"
#include "cli/command_line.hpp"
#include "report/check_pages.hpp"
#include "support/doc_examples.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

namespace fs = std::filesystem;
using namespace rlcheck::testing;

namespace {

const fs::path k_source = RLCHECK_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// README.md and every page of docs/.
std::vector<fs::path> user_docs() {
  std::vector<fs::path> pages{k_source / "README.md"};
  for (const auto& entry : fs::directory_iterator(k_source / "docs")) {
    if (entry.path().extension() == ".md")
      pages.push_back(entry.path());
  }
  std::sort(pages.begin() + 1, pages.end());
  return pages;
}

// Every Markdown file a reader may follow a link from.
std::vector<fs::path> linked_docs() {
  std::vector<fs::path> pages = user_docs();
  for (const char* name : {"DEVELOPMENT.md", "ARCHITECTURE.md", "CHANGELOG.md"})
    pages.push_back(k_source / name);
  for (const char* folder : {"examples", "contrib", "bench"}) {
    if (!fs::exists(k_source / folder))
      continue;
    for (const auto& entry : fs::recursive_directory_iterator(k_source / folder)) {
      if (entry.path().extension() == ".md")
        pages.push_back(entry.path());
    }
  }
  return pages;
}

// A scratch directory holding the repository's example folders, removed at the end.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "rlcheck-docs-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
    for (const char* folder : {"examples", "lua", "scenarios", "contrib"})
      fs::create_directory_symlink(k_source / folder, path_ / folder);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string tail_of(const std::string& text, size_t most = 3000) {
  return text.size() <= most ? text : "…" + text.substr(text.size() - most);
}

// REDIS_URL for the `rlcheck serve` a page starts (a child of this process), restored after.
class RedisUrlForServers {
 public:
  explicit RedisUrlForServers(const std::string& url) {
    if (const char* before = std::getenv("REDIS_URL"))
      before_ = before;
    setenv("REDIS_URL", url.c_str(), 1);
  }
  ~RedisUrlForServers() {
    if (before_)
      setenv("REDIS_URL", before_->c_str(), 1);
    else
      unsetenv("REDIS_URL");
  }

 private:
  std::optional<std::string> before_;
};

// Runs a page's examples in order: servers started as the page starts them, commands with the
// servers' real addresses in place of the ones the page names.
void run_page(const fs::path& page) {
  const std::vector<DocExample> examples = doc_examples(read_file(page));
  if (examples.empty())
    return;
  Scratch scratch;
  RunOptions options = with_rlcheck_on_path();
  options.env["REDIS_URL"] = TestRedis::shared().tcp_url();
  options.cwd = scratch.path().string();
  options.limit = std::chrono::seconds(180);
  const RedisUrlForServers redis_url(TestRedis::shared().tcp_url());
  std::vector<std::unique_ptr<ServeProcess>> servers;
  std::map<std::string, std::string> addresses;  // as the page writes them -> the real ones
  for (const DocExample& example : examples) {
    const std::string where = fmt::format("{}:{}", page.filename().string(), example.line);
    INFO(where, ": $ ", example.command);
    const std::string command = with_addresses(example.command, addresses);
    if (example.background) {
      const std::optional<ServeCommand> serve = serve_command(command);
      REQUIRE_MESSAGE(serve.has_value(), where,
                      ": a background example must be `rlcheck serve --listen HOST:PORT ... &`");
      servers.push_back(std::make_unique<ServeProcess>(serve->args));
      const std::string port = serve->listen.substr(serve->listen.rfind(':') + 1);
      const std::string real = fmt::format("127.0.0.1:{}", servers.back()->port());
      addresses[serve->listen] = real;
      addresses["127.0.0.1:" + port] = real;
      addresses["localhost:" + port] = real;
      continue;
    }
    const ProcessOutcome outcome = run_process({"/bin/bash", "-c", command}, options);
    INFO("stdout: ", tail_of(outcome.out));
    INFO("stderr: ", tail_of(outcome.err));
    CHECK_FALSE(outcome.timed_out);
    CHECK_MESSAGE(outcome.exit_code == example.exit_code, where, ": exit ", outcome.exit_code,
                  ", the page says ", example.exit_code);
    for (const std::string& shown : example.output) {
      CHECK_MESSAGE(shape_printed(shown, outcome.out + outcome.err), where,
                    ": no line printed starts like: ", shown);
    }
  }
}

// Every long option name of `command`'s --help ("" for rlcheck's own).
std::vector<std::string> help_options(const std::string& command) {
  std::vector<std::string> names;
  for (const std::string& name : rlcheck::cli::option_names(command)) {
    if (name != "help")
      names.push_back(name);
  }
  return names;
}

}  // namespace

TEST_CASE("docs: every $ rlcheck example of README.md and docs/ runs as shown") {
  size_t examples = 0;
  for (const fs::path& page : user_docs()) {
    examples += doc_examples(read_file(page)).size();
    run_page(page);
  }
  // The headline examples at least: the pages are not silently without runnable ones.
  CHECK(examples >= 30);
  CHECK_FALSE(doc_examples(read_file(k_source / "README.md")).empty());
}

TEST_CASE("docs: every option of every command is documented in docs/") {
  std::string docs;
  for (const fs::path& page : user_docs())
    docs += read_file(page);
  for (const char* command :
       {"redis", "http", "compare", "serve", "run", "hook-config", "probe", "explain"}) {
    for (const std::string& name : help_options(command)) {
      INFO("rlcheck ", command, " --", name);
      CHECK(documents_option(docs, name));
    }
  }
}

TEST_CASE("docs: every check has its page in docs/checks.md, and rlcheck explain prints it") {
  const std::string page = read_file(k_source / "docs/checks.md");
  std::set<std::string> documented;
  for (const rlcheck::report::CheckPage& check : rlcheck::report::check_pages(page)) {
    documented.insert(check.id);
    CHECK_MESSAGE(!check.summary.empty(), check.id, " has no one-line summary");
  }
  std::set<std::string> ids(rlcheck::checks::k_check_ids.begin(),
                            rlcheck::checks::k_check_ids.end());
  CHECK(documented == ids);
  // The binary carries the page as it is in the tree (CMake reconfigures when it changes).
  CHECK(rlcheck::report::checks_page() == page);
  for (const std::string_view id : rlcheck::checks::k_check_ids) {
    INFO("rlcheck explain ", id);
    const ProcessOutcome outcome = run_rlcheck({"explain", std::string(id)});
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.out.starts_with(fmt::format("## `{}`\n", id)));
    CHECK(outcome.out.find("**What it proves.**") != std::string::npos);
    CHECK(outcome.out.find("**Common causes and fixes.**") != std::string::npos);
  }
  const ProcessOutcome list = run_rlcheck({"explain"});
  CHECK(list.exit_code == 0);
  for (const std::string_view id : rlcheck::checks::k_check_ids)
    CHECK(list.out.find(fmt::format("  {} ", id)) != std::string::npos);
  const ProcessOutcome typo = run_rlcheck({"explain", "key_ttl"});
  CHECK(typo.exit_code == 64);
  CHECK(typo.err.find("did you mean key-ttl?") != std::string::npos);
}

TEST_CASE("docs: the .deb the docs install is this version's") {
  static const std::regex deb(R"(rlcheck_([0-9]+\.[0-9]+\.[0-9]+)_amd64\.deb)");
  const std::string version(rlcheck::base::version());
  std::vector<fs::path> pages = user_docs();
  pages.push_back(k_source / "DEVELOPMENT.md");
  size_t named = 0;
  for (const fs::path& page : pages) {
    const std::string text = read_file(page);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), deb);
         it != std::sregex_iterator(); ++it) {
      ++named;
      CHECK_MESSAGE((*it)[1].str() == version, page.filename().string(), " names ", (*it)[0].str(),
                    "; this is ", version);
    }
  }
  CHECK(named > 0);
}

TEST_CASE("docs: every relative link resolves, to a file and to a heading in it") {
  for (const fs::path& page : linked_docs()) {
    for (const DocLink& link : doc_links(read_file(page))) {
      const std::string where =
          fmt::format("{}:{}: ({})", fs::relative(page, k_source).string(), link.line, link.target);
      const fs::path target = link.path.empty() ? page : page.parent_path() / link.path;
      CHECK_MESSAGE(fs::exists(target), where, ": no such file");
      if (link.anchor.empty() || !fs::exists(target) || target.extension() != ".md")
        continue;
      const std::set<std::string> anchors = heading_anchors(read_file(target));
      CHECK_MESSAGE(anchors.contains(link.anchor), where, ": no such heading");
    }
  }
}
