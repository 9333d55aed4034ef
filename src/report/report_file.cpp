#include "report/report_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace rlcheck::report {
namespace {

std::string cannot_write(const std::string& path, int error) {
  return fmt::format("cannot write {}: {}", path, std::strerror(error));
}

// The file a path names: a symbolic link is followed, so the link stays and its target is
// replaced, as writing through it would.
std::string target_of(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_symlink(path, error)) {
    auto resolved = std::filesystem::weakly_canonical(path, error);
    if (!error)
      return resolved.string();
  }
  return path;
}

// A new, empty temporary file beside `path`: its fd and name (mode as a new file's would be).
std::expected<std::pair<int, std::string>, int> make_temp_beside(const std::string& path) {
  const std::filesystem::path target(path);
  const std::string directory =
      target.has_parent_path() ? target.parent_path().string() + "/" : std::string();
  std::string name = directory + "." + target.filename().string() + ".XXXXXX";
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  const int fd = mkostemp(buffer.data(), O_CLOEXEC);
  if (fd < 0)
    return std::unexpected(errno);
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  return std::pair{fd, std::string(buffer.data())};
}

// Why `path` itself could not be replaced by a new file, or 0.
int path_problem(const std::string& path) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0)
    return errno == ENOENT ? 0 : errno;
  if (S_ISDIR(status.st_mode))
    return EISDIR;
  if (access(path.c_str(), W_OK) != 0)
    return errno;
  return 0;
}

// A path that names a device or a pipe (/dev/stdout, /dev/null, a FIFO): written in place, as
// there is no file to replace.
bool is_special(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode) && !S_ISDIR(status.st_mode);
}

// The file `path` names (a symlink followed) and a fresh temporary file beside it, or why not.
struct Staging {
  std::string target;
  std::string temp_path;
};

std::expected<Staging, std::string> stage_beside(const std::string& path) {
  const std::string target = target_of(path);
  if (const int problem = path_problem(target); problem != 0)
    return std::unexpected(cannot_write(path, problem));
  auto temp = make_temp_beside(target);
  if (!temp)
    return std::unexpected(cannot_write(path, temp.error()));
  close(temp->first);
  return Staging{target, temp->second};
}

}  // namespace

std::expected<void, std::string> check_writable(const std::string& path) {
  if (is_special(path)) {
    if (access(path.c_str(), W_OK) != 0)
      return std::unexpected(cannot_write(path, errno));
    return {};
  }
  const auto staged = stage_beside(path);
  if (!staged)
    return std::unexpected(staged.error());
  unlink(staged->temp_path.c_str());
  return {};
}

std::expected<void, std::string> write_whole_file(const std::string& path, std::string_view text) {
  auto file = StagedFile::create(path);
  if (!file)
    return std::unexpected(file.error());
  (*file)->stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  return (*file)->commit();
}

std::expected<void, std::string> check_appendable(const std::string& path) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0)
    return check_writable(path);
  if (S_ISDIR(status.st_mode))
    return std::unexpected(cannot_write(path, EISDIR));
  if (access(path.c_str(), W_OK) != 0)
    return std::unexpected(cannot_write(path, errno));
  return {};
}

std::expected<void, std::string> append_to_file(const std::string& path, std::string_view text) {
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return std::unexpected(cannot_write(path, errno));
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      close(fd);
      return std::unexpected(cannot_write(path, error));
    }
    written += static_cast<size_t>(n);
  }
  fsync(fd);
  if (close(fd) != 0)
    return std::unexpected(cannot_write(path, errno));
  return {};
}

StagedFile::StagedFile(std::string path, std::string temp_path)
    : path_(std::move(path)), temp_path_(std::move(temp_path)) {}

std::expected<std::unique_ptr<StagedFile>, std::string> StagedFile::create(
    const std::string& path) {
  if (is_special(path)) {
    std::unique_ptr<StagedFile> file(new StagedFile(path, {}));
    file->out_.open(path, std::ios::out | std::ios::binary);
    if (!file->out_)
      return std::unexpected(cannot_write(path, errno));
    return file;
  }
  const auto staged = stage_beside(path);
  if (!staged)
    return std::unexpected(staged.error());
  std::unique_ptr<StagedFile> file(new StagedFile(staged->target, staged->temp_path));
  file->out_.open(file->temp_path_, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!file->out_)
    return std::unexpected(cannot_write(path, errno));
  return file;
}

StagedFile::~StagedFile() {
  if (!committed_ && !temp_path_.empty()) {
    out_.close();
    unlink(temp_path_.c_str());
  }
}

std::expected<void, std::string> StagedFile::commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail())
    return std::unexpected(cannot_write(path_, errno != 0 ? errno : EIO));
  if (temp_path_.empty()) {  // a device or a pipe, written in place
    committed_ = true;
    return {};
  }
  // On disk before the rename, so that the name never points at a partly written file.
  if (const int fd = open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    fsync(fd);
    close(fd);
  }
  if (rename(temp_path_.c_str(), path_.c_str()) != 0)
    return std::unexpected(cannot_write(path_, errno));
  committed_ = true;
  return {};
}

}  // namespace rlcheck::report
