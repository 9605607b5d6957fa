#include "flockbridge/sim/host/sim_console.hpp"

#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <sstream>

namespace flockbridge::sim {

SimConsole::SimConsole(uv_loop_t* loop, SimulatorSettings options)
    : loop_(loop),
      options_(std::move(options)),
      lines_(protocol::MessageDecoder::Framing::Lines, 256),
      random_(options_.line.seed) {
  robot_ = options_.make_robot(loop, options_.line, [this](std::string_view line) { say(line); });
}

std::string SimConsole::counters() const {
  const auto& host = robot_->to_host_faults().counters();
  const auto& robot = robot_->to_robot_faults().counters();
  const auto line = [](const LineFaultCounters& c) {
    return "bytes " + std::to_string(c.bytes) + " bits-flipped " + std::to_string(c.bits_flipped) + " dropped " +
           std::to_string(c.bytes_dropped) + " duplicated " + std::to_string(c.bytes_duplicated);
  };
  return "counters to-host " + line(host) + " " + std::string(robot_->robot_side()) + " " + line(robot);
}

void SimConsole::say(std::string_view line) const {
  if (options_.timestamps) {
    const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    std::fprintf(stdout, "[%.6f] ", now);
  }
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void SimConsole::schedule(DeadlineTimer& timer, double mean_seconds) {
  if (mean_seconds <= 0) return;
  std::exponential_distribution<double> wait(1.0 / mean_seconds);
  timer.start_after(std::chrono::milliseconds{static_cast<long long>(wait(random_) * 1000.0)});
}

void SimConsole::on_random_reboot() {
  say("random fault: reboot");
  robot_->reboot();
  schedule(reboot_timer_, options_.reboot_every_s);
}

void SimConsole::on_random_silence() {
  say("random fault: silent for " + std::to_string(options_.silence_for.count()) + " ms");
  robot_->set_silent(true);
  silence_over_timer_.start_after(options_.silence_for);
}

void SimConsole::on_silence_over() {
  robot_->set_silent(false);
  schedule(silence_timer_, options_.silence_every_s);
}

void SimConsole::on_random_unplug() {
  say("random fault: unplugged for " + std::to_string(options_.unplug_for.count()) + " ms");
  robot_->unplug();
  unplug_over_timer_.start_after(options_.unplug_for);
}

void SimConsole::on_unplug_over() {
  if (auto plugged = robot_->plug_in(options_.line.link); !plugged) say("error " + plugged.error().message);
  schedule(unplug_timer_, options_.unplug_every_s);
}

protocol::Result<protocol::Done> SimConsole::start() {
  const std::array<int, 2> stop_signals{SIGINT, SIGTERM};
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    if (signals_[i].init(this, [this](uv_signal_t* s) { return uv_signal_init(loop_, s); }) < 0) {
      return protocol::Error{"cannot watch signals"};
    }
    uv_signal_start(
        signals_[i].get(),
        [](uv_signal_t* handle, int) {
          if (auto* self = owner_of<SimConsole>(handle)) self->stop();
        },
        stop_signals[i]);
  }
  auto plugged = robot_->plug_in(options_.line.link);
  if (!plugged) return plugged.error();
  // The host learns its device, and the room the robot drives in (for pages that draw it):
  // "ready DEVICE room MIN_X MIN_Y MAX_X MAX_Y box MIN_X MIN_Y MAX_X MAX_Y ...".
  std::string ready = "ready " + robot_->device_path();
  if (const World* world = robot_->world()) {
    const auto add = [&ready](std::string_view what, const Rect& r) {
      ready += " " + std::string(what);
      for (const double edge : {r.x0, r.y0, r.x1, r.y1}) ready += " " + std::to_string(std::lround(edge));
    };
    add("room", world->room());
    for (const Rect& box : world->boxes()) add("box", box);
  }
  say(ready);
  // The robot's own state, for tests and benchmarks that time a stop (with
  // --timestamps, to the microsecond): checked after every loop turn, which
  // is when a command it received has been carried out.
  if (wheels_watch_.init(this, [this](uv_check_t* c) { return uv_check_init(loop_, c); }) == 0) {
    uv_check_start(wheels_watch_.get(), [](uv_check_t* handle) {
      if (auto* self = owner_of<SimConsole>(handle)) self->check_wheels();
    });
  }
  start_input();
  (void)reboot_timer_.init<SimConsole, &SimConsole::on_random_reboot>(loop_, this);
  (void)silence_timer_.init<SimConsole, &SimConsole::on_random_silence>(loop_, this);
  (void)unplug_timer_.init<SimConsole, &SimConsole::on_random_unplug>(loop_, this);
  (void)silence_over_timer_.init<SimConsole, &SimConsole::on_silence_over>(loop_, this);
  (void)unplug_over_timer_.init<SimConsole, &SimConsole::on_unplug_over>(loop_, this);
  schedule(reboot_timer_, options_.reboot_every_s);
  schedule(silence_timer_, options_.silence_every_s);
  schedule(unplug_timer_, options_.unplug_every_s);
  return protocol::Done{};
}

void SimConsole::start_input() {
  const uv_handle_type type = uv_guess_handle(0);
  int rc = -1;
  if (type == UV_TTY) {
    // A terminal is read only from the foreground: a background read would stop the process.
    if (::tcgetpgrp(0) != ::getpgrp()) return;
    rc = tty_.init(this, [this](uv_tty_t* t) { return uv_tty_init(loop_, t, 0, 1); });
    if (rc == 0) input_ = reinterpret_cast<uv_stream_t*>(tty_.get());
  } else if (type == UV_NAMED_PIPE) {
    rc = pipe_.init(this, [this](uv_pipe_t* p) { return uv_pipe_init(loop_, p, 0); });
    if (rc == 0) rc = uv_pipe_open(pipe_.get(), 0);
    if (rc == 0) input_ = reinterpret_cast<uv_stream_t*>(pipe_.get());
  }
  if (input_ == nullptr) return;  // no commands: run until a signal
  uv_read_start(
      input_,
      [](uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
        auto* self = owner_of<SimConsole>(handle);
        *buf = self != nullptr ? uv_buf_init(self->buffer_.data(), static_cast<unsigned>(self->buffer_.size()))
                               : uv_buf_init(nullptr, 0);
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        if (auto* self = owner_of<SimConsole>(stream)) self->on_input(nread, buf);
      });
}

void SimConsole::on_input(ssize_t nread, const uv_buf_t* buf) {
  if (nread < 0) {
    // The end of standard input ends the simulator, as "quit" does.
    stop();
    return;
  }
  lines_.feed(protocol::ByteView(reinterpret_cast<const protocol::Byte*>(buf->base), static_cast<std::size_t>(nread)),
              steady_now());
  while (input_ != nullptr) {
    const auto event = lines_.next();
    if (!event) break;
    if (event->kind == protocol::MessageDecoder::EventKind::Message) {
      run_command(std::string(event->body.begin(), event->body.end()));
    }
  }
}

void SimConsole::run_command(const std::string& line) {
  std::istringstream words(line);
  std::string command;
  words >> command;
  if (command.empty()) return;
  if (command == "reboot") {
    robot_->reboot();
  } else if (command == "unplug") {
    robot_->unplug();
  } else if (command == "replug") {
    if (auto plugged = robot_->plug_in(options_.line.link); !plugged) say("error " + plugged.error().message);
  } else if (command == "silent") {
    std::string state;
    words >> state;
    robot_->set_silent(state != "off");
  } else if (command == "counters") {
    say(counters());
  } else if (command == "quit") {
    stop();
    return;
  } else if (!robot_->run_command(command, words, [this](std::string_view answer) { say(answer); })) {
    say("error unknown command '" + command + "'");
    return;
  }
  say("done " + command);
}

void SimConsole::check_wheels() {
  const bool turning = robot_->wheels_turning();
  if (turning == wheels_turning_) return;
  wheels_turning_ = turning;
  say(turning ? "wheels turning" : "wheels stopped");
}

void SimConsole::stop() {
  input_ = nullptr;
  wheels_watch_.reset();
  reboot_timer_.reset();
  silence_timer_.reset();
  unplug_timer_.reset();
  silence_over_timer_.reset();
  unplug_over_timer_.reset();
  tty_.reset();
  pipe_.reset();
  for (auto& signal : signals_) signal.reset();
  robot_->close();
}

}  // namespace flockbridge::sim
