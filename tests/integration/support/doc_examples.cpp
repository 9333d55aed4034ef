#include "support/doc_examples.hpp"

#include <cctype>
#include <regex>
#include <sstream>

#include "support/run_binary.hpp"

namespace rlcheck::testing {
namespace {

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos)
    return "";
  const size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

bool fence(const std::string& line) {
  const std::string text = trimmed(line);
  return text.starts_with("```") || text.starts_with("~~~");
}

// The first two words, digits read as any number.
std::vector<std::string> shape_of(const std::string& line) {
  static const std::regex digits("[0-9]+([.][0-9]+)?");
  std::vector<std::string> words;
  std::stringstream stream(line);
  std::string word;
  while (words.size() < 2 && stream >> word)
    words.push_back(std::regex_replace(word, digits, "#"));
  return words;
}

}  // namespace

std::vector<DocExample> doc_examples(const std::string& markdown) {
  static const std::regex exits(R"(#\s*exits\s+([0-9]+)\s*$)");
  std::vector<DocExample> examples;
  const std::vector<std::string> lines = lines_of(markdown);
  bool in_block = false;
  DocExample* open = nullptr;  // the example whose output lines follow
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (fence(line)) {
      in_block = !in_block;
      open = nullptr;
      continue;
    }
    if (!in_block)
      continue;
    if (line.starts_with("$ ")) {
      open = nullptr;
      if (!line.starts_with("$ rlcheck "))
        continue;
      DocExample example;
      example.line = static_cast<int>(i + 1);
      std::string command = line.substr(2);
      // Continued lines keep their backslash: bash reads them as one command.
      while (command.ends_with("\\") && i + 1 < lines.size())
        command += "\n" + lines[++i];
      std::smatch match;
      if (std::regex_search(command, match, exits))
        example.exit_code = std::stoi(match[1].str());
      const std::string body = trimmed(command.substr(0, command.find(" #")));
      example.background = body.ends_with("&") && !body.ends_with("&&");
      example.command = command;
      examples.push_back(example);
      open = &examples.back();
      continue;
    }
    const std::string shown = trimmed(line);
    if (open != nullptr && !shown.empty() && shown != "..." && shown != "…")
      open->output.push_back(shown);
  }
  return examples;
}

std::string with_addresses(std::string command,
                           const std::map<std::string, std::string>& addresses) {
  for (const auto& [from, to] : addresses) {
    for (size_t at = command.find(from); at != std::string::npos;
         at = command.find(from, at + to.size())) {
      // 127.0.0.1:80 is not a prefix of 127.0.0.1:8080.
      const size_t end = at + from.size();
      if (end < command.size() && std::isdigit(static_cast<unsigned char>(command[end])))
        continue;
      command.replace(at, from.size(), to);
    }
  }
  return command;
}

std::vector<std::string> shell_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size())
        word += text[++i];
      else
        word += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] != '\n')
        word += text[i + 1];
      ++i;
      in_word = in_word || text[i] != '\n';
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word)
        words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word)
    words.push_back(word);
  return words;
}

std::optional<ServeCommand> serve_command(const std::string& command) {
  std::string body = trimmed(command.substr(0, command.find(" #")));
  if (!body.ends_with("&"))
    return std::nullopt;
  body.pop_back();
  std::vector<std::string> words = shell_words(body);
  if (words.size() < 2 || words[0] != "rlcheck" || words[1] != "serve")
    return std::nullopt;
  ServeCommand serve;
  serve.args.assign(words.begin() + 2, words.end());
  for (size_t i = 0; i < serve.args.size(); ++i) {
    if (serve.args[i] == "--listen" && i + 1 < serve.args.size()) {
      serve.listen = serve.args[i + 1];
      serve.args[i + 1] = "127.0.0.1:0";
    } else if (serve.args[i].starts_with("--listen=")) {
      serve.listen = serve.args[i].substr(9);
      serve.args[i] = "--listen=127.0.0.1:0";
    }
  }
  if (serve.listen.empty())
    return std::nullopt;
  return serve;
}

bool shape_printed(const std::string& shown, const std::string& printed) {
  const std::vector<std::string> want = shape_of(shown);
  for (const std::string& line : lines_of(printed)) {
    if (shape_of(line) == want)
      return true;
  }
  return false;
}

bool documents_option(const std::string& docs, const std::string& name) {
  const std::string flag = "--" + name;
  for (size_t at = docs.find(flag); at != std::string::npos; at = docs.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    if (end == docs.size())
      return true;
    const char next = docs[end];
    if (!std::isalnum(static_cast<unsigned char>(next)) && next != '-' && next != '_')
      return true;
  }
  return false;
}

std::vector<DocLink> doc_links(const std::string& markdown) {
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  static const std::regex code_span("`[^`]*`");
  std::vector<DocLink> links;
  const std::vector<std::string> lines = lines_of(markdown);
  bool in_block = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (fence(lines[i])) {
      in_block = !in_block;
      continue;
    }
    if (in_block)
      continue;
    const std::string text = std::regex_replace(lines[i], code_span, "``");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link);
         it != std::sregex_iterator(); ++it) {
      DocLink found;
      found.line = static_cast<int>(i + 1);
      found.target = (*it)[1].str();
      if (found.target.starts_with("http://") || found.target.starts_with("https://") ||
          found.target.starts_with("mailto:"))
        continue;
      const size_t hash = found.target.find('#');
      found.path = found.target.substr(0, hash);
      if (hash != std::string::npos)
        found.anchor = found.target.substr(hash + 1);
      links.push_back(found);
    }
  }
  return links;
}

std::set<std::string> heading_anchors(const std::string& markdown) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  bool in_block = false;
  for (const std::string& line : lines_of(markdown)) {
    if (fence(line)) {
      in_block = !in_block;
      continue;
    }
    if (in_block || !line.starts_with("#"))
      continue;
    const size_t text_at = line.find_first_not_of('#');
    if (text_at == std::string::npos || text_at > 6 || line[text_at] != ' ')
      continue;
    std::string slug;
    const std::string text = trimmed(line.substr(text_at));
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      const auto byte = static_cast<unsigned char>(c);
      if (byte == 0xE2 && i + 2 < text.size()) {
        i += 2;  // U+2000-U+2FFF: dashes, quotes, arrows, symbols; GitHub drops them
      } else if (std::isalnum(byte) || c == '-' || c == '_' || byte >= 0x80) {
        slug += static_cast<char>(std::tolower(byte));
      } else if (c == ' ') {
        slug += '-';
      }
    }
    const int repeat = seen[slug]++;
    anchors.insert(repeat == 0 ? slug : slug + "-" + std::to_string(repeat));
  }
  return anchors;
}

}  // namespace rlcheck::testing
