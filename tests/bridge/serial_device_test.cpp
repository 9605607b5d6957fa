// Opening serial devices: pseudo-terminals as plain terminals given the
// settings libserialport gives a real device, real UARTs through
// libserialport, and a clear reason when there is none; reading them on a
// loop, where 0 bytes means "nothing yet" and only a real loss closes.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <termios.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "flockbridge/bridge/serial_port.hpp"
#include "flockbridge/bridge/terminal_mode.hpp"
#include "flockbridge/protocol/flockbot/frame.hpp"
#include "support/pty_pair.hpp"
#include "support/run_until.hpp"

using flockbridge::bridge::SerialDevice;

TEST_CASE("a pseudo-terminal is opened raw: all 256 byte values pass unchanged") {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  auto device = SerialDevice::open(::ptsname(master), 115200);
  REQUIRE_MESSAGE(device, (device ? "" : device.error().message));
  CHECK(device.value().is_pseudo_terminal());

  // CR, LF, ^C, ^D, XON/XOFF and 0xBD must not be translated or acted on.
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  REQUIRE(::write(master, all.data(), all.size()) == 256);
  std::string received;
  while (received.size() < all.size()) {
    pollfd readable{device.value().fd(), POLLIN, 0};
    REQUIRE(::poll(&readable, 1, 5000) == 1);
    char buffer[512];
    const ssize_t n = ::read(device.value().fd(), buffer, sizeof(buffer));
    REQUIRE(n > 0);
    received.append(buffer, static_cast<std::size_t>(n));
  }
  CHECK(received == all);
  // And nothing is echoed back to the Uno's side.
  pollfd echo{master, POLLIN, 0};
  CHECK(::poll(&echo, 1, 0) == 0);
  ::close(master);
}

TEST_CASE("a real UART is opened through libserialport") {
  // Machines with an 8250 UART have /dev/ttyS0 (CI's do); elsewhere there is nothing to open.
  if (::access("/dev/ttyS0", R_OK | W_OK) != 0) {
    MESSAGE("no usable /dev/ttyS0 here; the libserialport path is not exercised");
    return;
  }
  auto device = SerialDevice::open("/dev/ttyS0", 115200);
  REQUIRE_MESSAGE(device, (device ? "" : device.error().message));
  CHECK_FALSE(device.value().is_pseudo_terminal());
  CHECK((::fcntl(device.value().fd(), F_GETFL) & O_NONBLOCK) != 0);
}

TEST_CASE("a device that is not there gives the reason") {
  auto device = SerialDevice::open("/dev/flockbot-not-here", 115200);
  REQUIRE_FALSE(device);
  CHECK(device.error().message == "cannot open /dev/flockbot-not-here: No such file or directory");
}

namespace {

using flockbridge::testing::PtyPair;

struct CountingListener : flockbridge::bridge::SerialPort::Listener {
  void transport_opened() override { ++opened; }
  void transport_received(flockbridge::protocol::ByteView bytes) override {
    received.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  void transport_closed(std::string_view why) override {
    ++closed;
    reason = why;
  }
  void transport_open_failed(const flockbridge::bridge::OpenFailure& failure) override {
    ++failed;
    failure_ = failure;
  }
  int failed = 0;
  flockbridge::bridge::OpenFailure failure_;
  int opened = 0;
  int closed = 0;
  std::string received;
  std::string reason;
};

using flockbridge::testing::run_until;

/// A SerialPort on a loop of its own, open on a PtyPair's slave end. The
/// loop must close cleanly when the port is gone.
struct PortOnPty {
  PortOnPty() {
    REQUIRE(uv_loop_init(&loop) == 0);
    port.emplace(&loop, flockbridge::bridge::SerialPort::Settings{.path = pty.slave}, listener);
    port->start();
    REQUIRE(port->is_open());
    REQUIRE(listener.opened == 1);
  }
  PortOnPty(const PortOnPty&) = delete;
  PortOnPty& operator=(const PortOnPty&) = delete;
  ~PortOnPty() {
    port.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
  }
  PtyPair pty;
  uv_loop_t loop{};
  CountingListener listener;
  std::optional<flockbridge::bridge::SerialPort> port;
};

}  // namespace

TEST_CASE("a pseudo-terminal is opened in libserialport's state: VMIN 0, VTIME 0, 8N1, no flow control") {
  PtyPair pty;
  auto device = SerialDevice::open(pty.slave, 115200);
  REQUIRE_MESSAGE(device, (device ? "" : device.error().message));
  termios settings{};
  REQUIRE(::tcgetattr(device.value().fd(), &settings) == 0);
  CHECK(settings.c_cc[VMIN] == 0);
  CHECK(settings.c_cc[VTIME] == 0);
  CHECK((settings.c_cflag & CSIZE) == CS8);
  CHECK((settings.c_cflag & (PARENB | CSTOPB | CRTSCTS)) == 0);
  CHECK((settings.c_iflag & (IXON | IXOFF)) == 0);
  CHECK((settings.c_lflag & (ICANON | ECHO | ISIG)) == 0);
  CHECK(flockbridge::bridge::describe_terminal(settings) ==
        "115200 baud, 8N1, -crtscts -ixon -ixoff, clocal cread hupcl, -icanon -echo -isig -icrnl -opost, min 0 time 0");
  // With these settings a read with nothing waiting returns 0 bytes, not EAGAIN.
  char byte = 0;
  CHECK(::read(device.value().fd(), &byte, 1) == 0);
}

TEST_CASE("a real UART opened through libserialport has the terminal settings the pseudo-terminal is given") {
  if (::access("/dev/ttyS0", R_OK | W_OK) != 0) {
    MESSAGE("no usable /dev/ttyS0 here; libserialport's settings are not compared");
    return;
  }
  auto uart = SerialDevice::open("/dev/ttyS0", 115200);
  REQUIRE_MESSAGE(uart, (uart ? "" : uart.error().message));
  termios real{};
  REQUIRE(::tcgetattr(uart.value().fd(), &real) == 0);
  termios modelled = real;
  flockbridge::bridge::apply_serial_mode(modelled);
  CHECK(flockbridge::bridge::describe_terminal(real) == flockbridge::bridge::describe_terminal(modelled));
  CHECK(real.c_iflag == modelled.c_iflag);
  CHECK(real.c_oflag == modelled.c_oflag);
  CHECK(real.c_lflag == modelled.c_lflag);
  CHECK(real.c_cflag == modelled.c_cflag);
  CHECK(real.c_cc[VMIN] == 0);
  CHECK(real.c_cc[VTIME] == 0);
}

TEST_CASE_FIXTURE(PortOnPty,
                  "a serial port that has read everything waiting keeps the device open - only a real loss closes it") {
  {
    // Each burst is drained until read() returns 0 ("nothing yet" with VMIN 0).
    std::string sent;
    for (int burst = 0; burst < 20; ++burst) {
      const std::string bytes = "burst " + std::to_string(burst) + ";";
      REQUIRE(::write(pty.master, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
      sent += bytes;
      REQUIRE(run_until(&loop, [&] { return listener.received.size() == sent.size() || listener.closed > 0; }));
      REQUIRE(listener.closed == 0);
    }
    CHECK(listener.received == sent);
    CHECK(listener.opened == 1);
    CHECK(port->is_open());

    // The other end goes away: now it is a loss.
    pty.close();
    REQUIRE(run_until(&loop, [&] { return listener.closed > 0; }));
    CHECK(listener.reason.find(pty.slave) == 0);
  }
}

TEST_CASE_FIXTURE(PortOnPty,
                  "the last Stop at shutdown finishes the frame the line has half taken, so the Uno reads it whole") {
  {
    // Frames of 12 bytes until the pseudo-terminal holds no more and the
    // port keeps the rest: the line then has taken part of a frame, most
    // likely, and the rest of it waits in the port.
    const auto command = flockbridge::protocol::flockbot::encode_frame(flockbridge::protocol::as_bytes("DLSabcdef\0"));
    int frames = 0;
    while (port->pending_bytes() == 0 && frames < 4000) {
      port->write(command);
      ++frames;
    }
    REQUIRE(port->pending_bytes() > 0);
    const auto stop = flockbridge::protocol::flockbot::encode_frame(flockbridge::protocol::as_bytes("DST"));

    // The Uno's side reads while the port writes its last frame.
    std::string line;
    std::thread uno([&] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      const std::string tail(stop.begin(), stop.end());
      while (std::chrono::steady_clock::now() < deadline &&
             (line.size() < tail.size() || line.compare(line.size() - tail.size(), tail.size(), tail) != 0)) {
        pollfd readable{pty.master, POLLIN, 0};
        if (::poll(&readable, 1, 100) <= 0) continue;
        char buffer[4096];
        const ssize_t n = ::read(pty.master, buffer, sizeof(buffer));
        if (n > 0) line.append(buffer, static_cast<std::size_t>(n));
      }
    });
    port->write_now(stop);
    uno.join();

    flockbridge::protocol::flockbot::FrameDecoder decoder;
    decoder.feed(flockbridge::protocol::as_bytes(line));
    std::string last;
    while (auto event = decoder.next()) {
      REQUIRE(event->kind == flockbridge::protocol::flockbot::FrameDecoder::EventKind::Frame);
      last.assign(event->payload.begin(), event->payload.end());
    }
    CHECK(last == "DST");
    CHECK(decoder.stats().bad_checksum == 0);
    CHECK(decoder.stats().discarded_bytes == 0);
    CHECK(decoder.state() == flockbridge::protocol::flockbot::FrameDecoder::State::Sync1);
  }
}
