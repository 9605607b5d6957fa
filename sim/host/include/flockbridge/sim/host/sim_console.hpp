// The simulator program (flockbridge-sim): a simulated robot
// on a pseudo-terminal (a SimRobot of the family chosen on its command line)
// whose events go to standard output and whose faults are injected by
// commands read from standard input.
#pragma once

#include <uv.h>

#include <array>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/message_decoder.hpp"
#include "flockbridge/sim/host/pty_device.hpp"
#include "flockbridge/sim/host/sim_robot.hpp"
#include "flockbridge/sim/host/simulator_cli.hpp"

namespace flockbridge::sim {

class SimConsole {
 public:
  SimConsole(uv_loop_t* loop, SimulatorSettings options);
  SimConsole(const SimConsole&) = delete;
  SimConsole& operator=(const SimConsole&) = delete;
  ~SimConsole() { stop(); }

  [[nodiscard]] protocol::Result<protocol::Done> start();
  void stop();

 private:
  void start_input();
  void on_input(ssize_t nread, const uv_buf_t* buf);
  void run_command(const std::string& line);
  void say(std::string_view line) const;
  /// Arms `timer` for a random time with the given mean (exponential).
  void schedule(DeadlineTimer& timer, double mean_seconds);
  void on_random_reboot();
  void on_random_silence();
  void on_silence_over();
  void on_random_unplug();
  void on_unplug_over();
  /// After each loop turn's callbacks: says when the wheels start or stop turning.
  void check_wheels();
  [[nodiscard]] std::string counters() const;

  uv_loop_t* loop_;
  SimulatorSettings options_;
  std::unique_ptr<SimRobot> robot_;
  UvHandle<uv_tty_t> tty_;
  UvHandle<uv_pipe_t> pipe_;
  UvHandle<uv_check_t> wheels_watch_;
  bool wheels_turning_ = false;
  uv_stream_t* input_ = nullptr;
  protocol::MessageDecoder lines_;
  std::array<UvHandle<uv_signal_t>, 2> signals_;
  std::mt19937 random_;
  DeadlineTimer reboot_timer_;
  DeadlineTimer silence_timer_;       ///< starts a random silence
  DeadlineTimer silence_over_timer_;  ///< ends it
  DeadlineTimer unplug_timer_;        ///< starts a random unplug
  DeadlineTimer unplug_over_timer_;   ///< ends it
  std::array<char, 1024> buffer_{};
};

}  // namespace flockbridge::sim
