// The simulator program (flockbridge-sim, flockbot-sim): a simulated robot
// on a pseudo-terminal (PtyUno or PtyPioneer) whose events go to standard
// output and whose faults are injected by commands read from standard input.
#pragma once

#include <uv.h>

#include <array>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/flockbot/message_decoder.hpp"
#include "flockbridge/sim/host/pty_pioneer.hpp"
#include "flockbridge/sim/host/pty_uno.hpp"
#include "flockbridge/sim/host/simulator_cli.hpp"

namespace flockbridge::sim {

class SimConsole {
 public:
  SimConsole(uv_loop_t* loop, SimulatorOptions options);
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
  // What every simulated robot does.
  [[nodiscard]] protocol::Result<protocol::Done> plug_in(const std::string& link);
  void unplug();
  void reboot();
  void set_silent(bool silent);
  [[nodiscard]] std::string counters() const;
  /// A command only one robot knows; false when it is not one.
  bool run_robot_command(const std::string& command, std::istringstream& words);

  uv_loop_t* loop_;
  SimulatorOptions options_;
  std::unique_ptr<PtyUno> uno_;          ///< --robot flockbot
  std::unique_ptr<PtyPioneer> pioneer_;  ///< --robot pioneer
  UvHandle<uv_tty_t> tty_;
  UvHandle<uv_pipe_t> pipe_;
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
