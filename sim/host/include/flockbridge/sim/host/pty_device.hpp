// The device end of a serial cable, as a pseudo-terminal: what a simulated
// robot (PtyUno, PtyRobot) is plugged into, for the simulators,
// `flockbridge --simulate` and the tests.
//
// Conditions of the problem: a robot's controller may reset whenever its
// port is opened (DTR), so a simulated robot must notice the bridge opening the pty's slave
// end. Linux reports POLLHUP on the master while no process has the slave
// open, but only after the slave has been opened once, so the master opens
// and closes its own slave once at creation and then watches for the hang-up
// to clear. While hung up, poll() on the master is always ready, so it is
// checked by a short timer instead of a uv_poll_t.
#pragma once

#include <uv.h>

#include <functional>
#include <string>
#include <string_view>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::sim {

// The loop's helpers of the bridge, which the simulators share.
using bridge::DeadlineTimer;
using bridge::owner_of;
using bridge::steady_now;
using bridge::uv_error_text;
using bridge::UvHandle;

/// Where a simulated robot is plugged in: the device end of its cable.
class SimDevice {
 public:
  class Listener {
   public:
    Listener() = default;
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    virtual ~Listener() = default;
    /// The host opened the port (or connected).
    virtual void device_opened() = 0;
    /// Bytes the host wrote.
    virtual void device_received(protocol::ByteView bytes) = 0;
    /// The host closed the port, or the device was unplugged.
    virtual void device_closed() = 0;
  };
  using Log = std::function<void(std::string_view)>;

  SimDevice() = default;
  SimDevice(const SimDevice&) = delete;
  SimDevice& operator=(const SimDevice&) = delete;
  virtual ~SimDevice() = default;

  /// Makes the device appear; for a pseudo-terminal with a non-empty
  /// `link_path`, that path becomes a symlink to it.
  [[nodiscard]] virtual protocol::Result<protocol::Done> plug_in(const std::string& link_path) = 0;
  /// The device vanishes.
  virtual void unplug() = 0;
  /// Stops everything; the loop can then finish.
  virtual void close() = 0;
  /// Writes what the robot sends; what the host does not take is lost, as
  /// on a real line.
  virtual void write(protocol::ByteView bytes) = 0;
  /// What the host opens: a path, or tcp:HOST:PORT.
  [[nodiscard]] virtual std::string device_path() const = 0;
  [[nodiscard]] virtual const std::string& link_path() const noexcept = 0;
  /// The host has the port open.
  [[nodiscard]] virtual bool connected() const noexcept = 0;
};

class PtyDevice final : public SimDevice {
 public:
  PtyDevice(uv_loop_t* loop, Listener& listener, Log log);
  PtyDevice(const PtyDevice&) = delete;
  PtyDevice& operator=(const PtyDevice&) = delete;
  PtyDevice(PtyDevice&&) = delete;
  PtyDevice& operator=(PtyDevice&&) = delete;
  ~PtyDevice() override;

  /// Creates a new pseudo-terminal. With a non-empty `link_path`, that path
  /// becomes a symlink to the slave end (replacing an old link atomically).
  [[nodiscard]] protocol::Result<protocol::Done> plug_in(const std::string& link_path) override;
  /// Closes the pseudo-terminal and removes the link: the device vanishes.
  void unplug() override;
  /// Stops everything; the loop can then finish.
  void close() override;
  /// Writes what the robot sends. A real UART does not wait for a reader
  /// either: what does not fit in the pseudo-terminal's buffer is lost
  /// (said once in the log per episode).
  void write(protocol::ByteView bytes) override;

  /// The link path if there is one, else the slave's /dev/pts path.
  [[nodiscard]] std::string device_path() const override { return link_path_.empty() ? slave_path_ : link_path_; }
  [[nodiscard]] const std::string& link_path() const noexcept override { return link_path_; }
  [[nodiscard]] bool plugged_in() const noexcept { return master_ >= 0; }
  [[nodiscard]] bool connected() const noexcept override { return connected_; }

 private:
  void check_open();
  void on_readable();
  void disconnect();

  uv_loop_t* loop_;
  Listener& listener_;
  Log log_;
  int master_ = -1;
  std::string slave_path_;
  std::string link_path_;
  bool connected_ = false;
  bool overrun_ = false;
  UvHandle<uv_poll_t> poll_;
  DeadlineTimer watch_;
};

}  // namespace flockbridge::sim
