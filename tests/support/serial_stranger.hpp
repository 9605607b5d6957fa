// A serial device that is no robot, for plug and play's tests: a
// pseudo-terminal in a real device's state, linked at a path the bridge
// searches, that either echoes what it gets (a loopback plug, a modem with
// echo on) or babbles bytes of its own (a GPS receiver, a sensor that
// streams). A thread of the test plays it.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "support/pty_pair.hpp"

namespace flockbridge::testing {

class SerialStranger {
 public:
  enum class Kind { Echo, Babble };

  SerialStranger(Kind kind, std::filesystem::path link) : link_(std::move(link)) {
    std::filesystem::create_symlink(pty_.slave, link_);
    thread_ = std::thread([this, kind] { play(kind); });
  }
  SerialStranger(const SerialStranger&) = delete;
  SerialStranger& operator=(const SerialStranger&) = delete;
  ~SerialStranger() {
    stop_ = true;
    thread_.join();
    std::error_code ignored;
    std::filesystem::remove(link_, ignored);
  }

  /// How many bytes it was sent.
  [[nodiscard]] std::uint64_t received() const noexcept { return received_; }

 private:
  void play(Kind kind) {
    std::minstd_rand random(7);
    char buffer[256];
    while (!stop_) {
      pollfd fd{pty_.master, POLLIN, 0};
      const int ready = ::poll(&fd, 1, 20);
      if (ready > 0 && (fd.revents & POLLIN) != 0) {
        const ssize_t n = ::read(pty_.master, buffer, sizeof buffer);
        if (n > 0) {
          received_ += static_cast<std::uint64_t>(n);
          if (kind == Kind::Echo) (void)!::write(pty_.master, buffer, static_cast<std::size_t>(n));
        }
      } else if (ready != 0) {
        ::usleep(20'000);  // no one has the device open: the master reports a hang-up
      }
      if (kind == Kind::Babble) {
        for (char& byte : buffer) byte = static_cast<char>(random());
        (void)!::write(pty_.master, buffer, 24);  // about what 9600 baud carries in 20 ms
      }
    }
  }

  PtyPair pty_;
  std::filesystem::path link_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> received_{0};
  std::thread thread_;
};

}  // namespace flockbridge::testing
