// Opening serial devices: pseudo-terminals as plain terminals in raw mode,
// real UARTs through libserialport, and a clear reason when there is none.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "flockbridge/bridge/serial_port.hpp"

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
