// A pseudo-terminal pair whose slave end is in the state libserialport
// leaves a real device in (VMIN = 0, VTIME = 0): the test plays the device
// on the master end.
#pragma once

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "flockbridge/bridge/terminal_mode.hpp"

namespace flockbridge::testing {

/// A pseudo-terminal pair whose slave end is in the state libserialport
/// leaves a real device in (VMIN = 0, VTIME = 0).
struct PtyPair {
  PtyPair() : master(::posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK)) {
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    slave = ::ptsname(master);
    termios settings{};
    REQUIRE(::tcgetattr(master, &settings) == 0);
    bridge::apply_serial_mode(settings);
    REQUIRE(::tcsetattr(master, TCSANOW, &settings) == 0);
  }
  PtyPair(const PtyPair&) = delete;
  PtyPair& operator=(const PtyPair&) = delete;
  ~PtyPair() { close(); }
  void close() {
    if (master >= 0) ::close(master);
    master = -1;
  }
  int master;
  std::string slave;
};

}  // namespace flockbridge::testing
