#pragma once
// Report files written whole or not at all. Each is written to a temporary file beside its path
// (".NAME.XXXXXX" in the same directory, so that the rename is atomic) and renamed over the
// path once complete: a run cut short, or a writer that dies, leaves the path as it was (a file
// already there is replaced only by a whole new report). A device or a pipe (/dev/stdout) is
// written in place. Errors read "cannot write PATH: why".

#include <expected>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

namespace rlcheck::report {

// Whether `path` can be written: its directory takes a new file (made and removed at once),
// it is not a directory, and a file already there is writable.
std::expected<void, std::string> check_writable(const std::string& path);

// Writes `text` to `path` whole: a temporary file, flushed to disk, then renamed.
std::expected<void, std::string> write_whole_file(const std::string& path, std::string_view text);

// A file others write to as well, that a report is added to at its end (GitHub's job summary,
// $GITHUB_STEP_SUMMARY): whether it can be (it is a writable file, or can be made one).
std::expected<void, std::string> check_appendable(const std::string& path);
// Appends `text` to `path` (made when missing) in one write, flushed to disk.
std::expected<void, std::string> append_to_file(const std::string& path, std::string_view text);

// A file written in pieces that appears at its path only on commit(); until then, and if
// commit() is never called, the path is untouched and the temporary file is removed.
class StagedFile {
 public:
  static std::expected<std::unique_ptr<StagedFile>, std::string> create(const std::string& path);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, closes and renames the temporary file over the path.
  std::expected<void, std::string> commit();

 private:
  StagedFile(std::string path, std::string temp_path);

  std::string path_;
  std::string temp_path_;  // empty: written in place (a device or a pipe)
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace rlcheck::report
