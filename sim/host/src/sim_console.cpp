#include "flockbridge/sim/host/sim_console.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <sstream>

namespace flockbridge::sim {

SimConsole::SimConsole(uv_loop_t* loop, SimulatorOptions options)
    : loop_(loop),
      options_(std::move(options)),
      lines_(protocol::MessageDecoder::Framing::Lines, 256),
      random_(options_.uno.model.seed) {
  const auto log = [this](std::string_view line) { say(line); };
  if (options_.robot == "pioneer") {
    pioneer_ = std::make_unique<PtyPioneer>(loop, options_.pioneer, log);
  } else {
    uno_ = std::make_unique<PtyUno>(loop, options_.uno, log);
  }
}

protocol::Result<protocol::Done> SimConsole::plug_in(const std::string& link) {
  return uno_ ? uno_->plug_in(link) : pioneer_->plug_in(link);
}

void SimConsole::unplug() {
  if (uno_) {
    uno_->unplug();
  } else {
    pioneer_->unplug();
  }
}

void SimConsole::reboot() {
  if (uno_) {
    uno_->reboot();
  } else {
    pioneer_->reboot();
  }
}

void SimConsole::set_silent(bool silent) {
  if (uno_) {
    uno_->model().set_silent(silent);
  } else {
    pioneer_->set_silent(silent);
  }
}

std::string SimConsole::counters() const {
  const auto& host = uno_ ? uno_->to_host_faults().counters() : pioneer_->to_host_faults().counters();
  const auto& robot = uno_ ? uno_->to_uno_faults().counters() : pioneer_->to_robot_faults().counters();
  const auto line = [](const LineFaultCounters& c) {
    return "bytes " + std::to_string(c.bytes) + " bits-flipped " + std::to_string(c.bits_flipped) + " dropped " +
           std::to_string(c.bytes_dropped) + " duplicated " + std::to_string(c.bytes_duplicated);
  };
  return "counters to-host " + line(host) + (uno_ ? " to-uno " : " to-robot ") + line(robot);
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
  reboot();
  schedule(reboot_timer_, options_.reboot_every_s);
}

void SimConsole::on_random_silence() {
  say("random fault: silent for " + std::to_string(options_.silence_for.count()) + " ms");
  set_silent(true);
  silence_over_timer_.start_after(options_.silence_for);
}

void SimConsole::on_silence_over() {
  set_silent(false);
  schedule(silence_timer_, options_.silence_every_s);
}

void SimConsole::on_random_unplug() {
  say("random fault: unplugged for " + std::to_string(options_.unplug_for.count()) + " ms");
  unplug();
  unplug_over_timer_.start_after(options_.unplug_for);
}

void SimConsole::on_unplug_over() {
  if (auto plugged = plug_in(options_.link); !plugged) say("error " + plugged.error().message);
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
  auto plugged = plug_in(options_.link);
  if (!plugged) return plugged.error();
  say("ready " + (uno_ ? uno_->device_path() : pioneer_->device_path()));
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
    reboot();
  } else if (command == "unplug") {
    unplug();
  } else if (command == "replug") {
    if (auto plugged = plug_in(options_.link); !plugged) say("error " + plugged.error().message);
  } else if (command == "silent") {
    std::string state;
    words >> state;
    set_silent(state != "off");
  } else if (command == "counters") {
    say(counters());
  } else if (command == "quit") {
    stop();
    return;
  } else if (!run_robot_command(command, words)) {
    say("error unknown command '" + command + "'");
    return;
  }
  say("done " + command);
}

bool SimConsole::run_robot_command(const std::string& command, std::istringstream& words) {
  if (pioneer_) {
    if (command != "state") return false;
    const aros::PioneerModel& model = pioneer_->model();
    std::ostringstream out;
    out << "state x_mm " << model.x_mm() << " y_mm " << model.y_mm() << " th_deg " << model.heading_deg() << " v_mm_s "
        << model.velocity_mm_s() << " w_deg_s " << model.rot_velocity_deg_s() << " motors "
        << (model.motors_enabled() ? "on" : "off") << " watchdog_stops " << model.watchdog_stops();
    say(out.str());
    return true;
  }
  UnoModel& uno = uno_->model();
  if (command == "nak-next") {
    unsigned count = 1;
    words >> count;
    uno.nak_next(count);
  } else if (command == "corrupt-next") {
    uno.corrupt_next();
  } else if (command == "emergency") {
    uno.send_emergency();
  } else if (command == "packet") {
    std::string text;
    words >> text;
    uno.send_packet(protocol::as_bytes(text));
  } else if (command == "burst") {
    unsigned count = 5;
    words >> count;
    uno.send_sensor_burst(count);
  } else if (command == "bump") {
    unsigned low = 0;
    unsigned high = 0;
    words >> low >> high;
    uno.set_bumpers(static_cast<std::uint8_t>(low), static_cast<std::uint8_t>(high));
  } else {
    return false;
  }
  return true;
}

void SimConsole::stop() {
  input_ = nullptr;
  reboot_timer_.reset();
  silence_timer_.reset();
  unplug_timer_.reset();
  silence_over_timer_.reset();
  unplug_over_timer_.reset();
  tty_.reset();
  pipe_.reset();
  for (auto& signal : signals_) signal.reset();
  if (uno_) uno_->close();
  if (pioneer_) pioneer_->close();
}

}  // namespace flockbridge::sim
