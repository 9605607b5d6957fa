// The simulated robot of `--simulate`: the simulator program
// (flockbridge-sim, installed beside flockbridge; or the command in
// $FLOCKBRIDGE_SIMULATOR) run as a child process on a pseudo-terminal, so
// that the daemon itself holds no simulator.
//
// The device is a symlink in a private folder that the simulator makes once
// its pseudo-terminal is ready, which it says on its standard output. The simulator's event lines go to the debug log.
// Its standard input is a pipe from the bridge: when the bridge ends in any way, the pipe closes and the simulator ends
// too.
#pragma once

#include <uv.h>

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

class SimulatorProcess {
 public:
  /// `name` starts its lines in the log ("simulated robot").
  SimulatorProcess(uv_loop_t* loop, std::string name) : loop_(loop), name_(std::move(name)) {}
  SimulatorProcess(const SimulatorProcess&) = delete;
  SimulatorProcess& operator=(const SimulatorProcess&) = delete;
  ~SimulatorProcess() { stop(); }

  /// Starts the simulator with these options (--link is added); `ready` is
  /// called once its device is there.
  [[nodiscard]] protocol::Result<protocol::Done> start(const std::vector<std::string>& options,
                                                       std::function<void()> ready);
  /// Ends the simulator (SIGTERM) and removes its folder.
  void stop();
  /// The device to open: the simulator's link.
  [[nodiscard]] const std::string& device_path() const noexcept { return link_; }
  /// The room the simulated robot drives in, as its "ready" line said (mm, in
  /// its odometry's frame: min x, min y, max x, max y); nothing until then,
  /// or for a robot in no room.
  [[nodiscard]] const std::optional<std::array<double, 4>>& room_mm() const noexcept { return room_; }
  /// The boxes in that room, as the "ready" line said them (the same form).
  [[nodiscard]] const std::vector<std::array<double, 4>>& boxes_mm() const noexcept { return boxes_; }

 private:
  void on_output(ssize_t nread, const uv_buf_t* buf);

  uv_loop_t* loop_;
  std::string name_;
  std::string folder_;
  std::string link_;
  UvHandle<uv_process_t> process_;
  UvHandle<uv_pipe_t> input_;
  UvHandle<uv_pipe_t> output_;
  std::function<void()> ready_;
  std::string partial_;  ///< the start of an output line
  std::optional<std::array<double, 4>> room_;
  std::vector<std::array<double, 4>> boxes_;
  std::array<char, 4096> buffer_{};
};

}  // namespace flockbridge::bridge
