#include "flockbridge/bridge/sim_console.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <sstream>

namespace flockbridge::bridge {
namespace {

void print(std::string_view line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace

SimConsole::SimConsole(uv_loop_t* loop, SimulatorOptions options)
    : loop_(loop),
      options_(std::move(options)),
      uno_(loop, options_.model, print),
      lines_(protocol::MessageDecoder::Framing::Lines, 256) {}

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
  auto plugged = uno_.plug_in(options_.link);
  if (!plugged) return plugged.error();
  print("ready " + options_.link);
  start_input();
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
    uno_.reboot();
  } else if (command == "unplug") {
    uno_.unplug();
  } else if (command == "replug") {
    if (auto plugged = uno_.replug(); !plugged) print("error " + plugged.error().message);
  } else if (command == "nak-next") {
    unsigned count = 1;
    words >> count;
    uno_.model().nak_next(count);
  } else if (command == "corrupt-next") {
    uno_.model().corrupt_next();
  } else if (command == "silent") {
    std::string state;
    words >> state;
    uno_.model().set_silent(state != "off");
  } else if (command == "emergency") {
    uno_.model().send_emergency();
  } else if (command == "bump") {
    unsigned low = 0;
    unsigned high = 0;
    words >> low >> high;
    uno_.model().set_bumpers(static_cast<std::uint8_t>(low), static_cast<std::uint8_t>(high));
  } else if (command == "quit") {
    stop();
    return;
  } else {
    print("error unknown command '" + command + "'");
    return;
  }
  print("done " + command);
}

void SimConsole::stop() {
  input_ = nullptr;
  tty_.reset();
  pipe_.reset();
  for (auto& signal : signals_) signal.reset();
  uno_.close();
}

}  // namespace flockbridge::bridge
