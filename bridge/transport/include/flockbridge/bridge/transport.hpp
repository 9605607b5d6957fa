// How a driver reaches its robot: a byte stream that opens, delivers bytes,
// and closes, and that reconnects by itself with backoff for as long as the
// daemon runs. A serial device (SerialPort), or a TCP connection for robots
// and simulators reachable over the network (`--device tcp:HOST:PORT`:
// a robot's Wi-Fi serial bridge, MobileSim or AMRISim, flockbridge-sim
// --listen). Drivers know no more than this interface.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

/// Why the robot could not be reached, for the people who must act on it.
struct OpenFailure {
  std::string what;      ///< what was tried and what happened: "no robot at /dev/ttyUSB0 (no such device)"
  std::string advice;    ///< what to do first: "check that the robot is switched on and its cable plugged in"
  std::string or_else;   ///< what else may be done: "give its device with --device, or try --simulate"
  bool missing = false;  ///< there is no such device: where the family's device usually is helps
};

class Transport {
 public:
  class Listener {
   public:
    Listener() = default;
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    virtual ~Listener() = default;
    virtual void transport_opened() = 0;
    virtual void transport_received(protocol::ByteView bytes) = 0;
    virtual void transport_closed(std::string_view reason) = 0;
    /// It could not open, and tries again: told once for each new reason.
    virtual void transport_open_failed(const OpenFailure& failure) = 0;
  };

  struct Settings {
    std::string path;  ///< a device, or tcp:HOST:PORT
    int baud = 115200;
    std::chrono::milliseconds reopen_min{250};
    std::chrono::milliseconds reopen_max{5000};
    std::size_t max_pending_output = std::size_t{64} * 1024;
  };

  Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  virtual ~Transport() = default;

  /// Tries to open now, and keeps trying until close().
  virtual void start() = 0;
  /// Queues bytes; dropped while not open.
  virtual void write(protocol::ByteView bytes) = 0;
  /// Writes the last bytes at shutdown, now, waiting for the line briefly.
  virtual void write_now(protocol::ByteView bytes) = 0;
  /// Closes and stops trying.
  virtual void close() = 0;
  [[nodiscard]] virtual bool is_open() const noexcept = 0;
  /// Where it opens (for a simulator, set before start()).
  virtual void set_path(std::string path) = 0;
};

/// A TCP connection for `tcp:HOST:PORT`, else the serial device.
[[nodiscard]] std::unique_ptr<Transport> make_transport(uv_loop_t* loop, const Transport::Settings& settings,
                                                        Transport::Listener& listener);

}  // namespace flockbridge::bridge
