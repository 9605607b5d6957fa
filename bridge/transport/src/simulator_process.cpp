#include "flockbridge/bridge/simulator_process.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "flockbridge/bridge/log.hpp"

namespace flockbridge::bridge {
namespace {

/// How the simulator is started: $FLOCKBRIDGE_SIMULATOR when set (its
/// words: the program, after an emulator that runs it, say), else the
/// simulator program beside this one (bin/ in the build, and installed).
std::vector<std::string> simulator_command() {
  if (const char* given = std::getenv("FLOCKBRIDGE_SIMULATOR"); given != nullptr && *given != '\0') {
    std::vector<std::string> words;
    std::istringstream text(given);
    for (std::string word; text >> word;) words.push_back(word);
    return words;
  }
  std::array<char, 4096> path{};
  std::size_t size = path.size();
  if (uv_exepath(path.data(), &size) != 0) return {"flockbridge-sim"};
  return {(std::filesystem::path(std::string(path.data(), size)).parent_path() / "flockbridge-sim").string()};
}

}  // namespace

protocol::Result<protocol::Done> SimulatorProcess::start(const std::vector<std::string>& options,
                                                         std::function<void()> ready) {
  ready_ = std::move(ready);
  std::string folder = (std::filesystem::temp_directory_path() / "flockbridge-sim-XXXXXX").string();
  if (::mkdtemp(folder.data()) == nullptr) {
    return protocol::Error{"cannot make a folder for the simulated robot in " +
                           std::filesystem::temp_directory_path().string() + ": " + std::strerror(errno)};
  }
  folder_ = folder;
  link_ = folder_ + "/robot";

  std::vector<std::string> words = simulator_command();
  const std::string program = words.front();
  words.insert(words.end(), options.begin(), options.end());
  words.insert(words.end(), {"--link", link_});
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  if (input_.init(this, [this](uv_pipe_t* p) { return uv_pipe_init(loop_, p, 0); }) < 0 ||
      output_.init(this, [this](uv_pipe_t* p) { return uv_pipe_init(loop_, p, 0); }) < 0) {
    return protocol::Error{"cannot make pipes for the simulator"};
  }
  std::array<uv_stdio_container_t, 3> stdio{};
  stdio[0].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_READABLE_PIPE);
  stdio[0].data.stream = reinterpret_cast<uv_stream_t*>(input_.get());
  stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(output_.get());
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = STDERR_FILENO;
  uv_process_options_t spawn{};
  spawn.file = program.c_str();
  spawn.args = argv.data();
  spawn.stdio = stdio.data();
  spawn.stdio_count = static_cast<int>(stdio.size());
  // Its own session: Ctrl-C in a terminal, or a signal to the bridge's
  // process group, reaches the bridge alone, which sends the robot its last
  // STOP before it ends the simulator. Should the bridge die instead, the
  // simulator's standard input ends, and so does the simulator.
  spawn.flags = UV_PROCESS_DETACHED;
  spawn.exit_cb = [](uv_process_t* process, std::int64_t status, int signal) {
    auto* self = owner_of<SimulatorProcess>(process);
    if (self == nullptr) {
      // Stopped on purpose (stop() let go of the handle): now reaped, it can close.
      uv_close(reinterpret_cast<uv_handle_t*>(process),
               [](uv_handle_t* closed) { delete reinterpret_cast<uv_process_t*>(closed); });
      return;
    }
    log_warning("the simulated robot's program ended (status " + std::to_string(status) + ", signal " +
                std::to_string(signal) + ")");
    self->process_.reset();
  };
  // uv_spawn initialises the handle even when it fails; it is closed either way.
  int spawned = 0;
  (void)process_.init(this, [&](uv_process_t* p) {
    spawned = uv_spawn(loop_, p, &spawn);
    return 0;
  });
  if (spawned < 0) {
    process_.reset();
    return protocol::Error{"cannot start the simulator " + program + ": " + uv_error_text(spawned)};
  }
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(output_.get()),
      [](uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
        auto* self = owner_of<SimulatorProcess>(handle);
        *buf = self != nullptr ? uv_buf_init(self->buffer_.data(), static_cast<unsigned>(self->buffer_.size()))
                               : uv_buf_init(nullptr, 0);
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        if (auto* self = owner_of<SimulatorProcess>(stream)) self->on_output(nread, buf);
      });
  return protocol::Done{};
}

void SimulatorProcess::on_output(ssize_t nread, const uv_buf_t* buf) {
  if (nread < 0) {
    output_.reset();
    return;
  }
  partial_.append(buf->base, static_cast<std::size_t>(nread));
  for (auto end = partial_.find('\n'); end != std::string::npos; end = partial_.find('\n')) {
    const std::string line = partial_.substr(0, end);
    partial_.erase(0, end + 1);
    log_debug(name_ + ": " + line);
    if (line.starts_with("ready ")) {
      // "ready DEVICE [room MIN_X MIN_Y MAX_X MAX_Y [box MIN_X MIN_Y MAX_X MAX_Y]...]"
      std::istringstream words(line);
      std::string word;
      words >> word >> word;
      std::array<double, 4> rect{};
      while (words >> word && (words >> rect[0] >> rect[1] >> rect[2] >> rect[3])) {
        if (word == "room") room_ = rect;
        if (word == "box") boxes_.push_back(rect);
      }
      if (ready_) std::exchange(ready_, nullptr)();
    }
  }
}

void SimulatorProcess::stop() {
  ready_ = nullptr;
  if (process_) {
    // The handle stays open until the program has ended and been reaped
    // (the exit callback closes it), so that no zombie is left behind.
    uv_process_t* process = process_.release();
    process->data = nullptr;
    if (uv_process_kill(process, SIGTERM) != 0) {
      uv_close(reinterpret_cast<uv_handle_t*>(process),
               [](uv_handle_t* closed) { delete reinterpret_cast<uv_process_t*>(closed); });
    }
  }
  input_.reset();
  output_.reset();
  if (!folder_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
    folder_.clear();
  }
}

}  // namespace flockbridge::bridge
