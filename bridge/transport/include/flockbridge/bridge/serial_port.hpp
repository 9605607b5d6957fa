// The serial device on the loop: opened, configured, watched with one
// uv_poll_t, and reopened with backoff when it vanishes, for as long as the
// daemon runs. It knows nothing of the protocol: it reports bytes, opening
// and closing to its Listener.
//
// Real devices are opened with libserialport. libserialport 0.1 refuses
// pseudo-terminals (it looks for a sysfs entry and asks for modem lines), so
// a pty slave (a simulated robot) is opened as a plain terminal and given, by
// hand, the settings libserialport gives a real device (terminal_mode.hpp).
// Either way the result is a configured, non-blocking fd on which a read of
// 0 bytes means "nothing yet".
#pragma once

#include <uv.h>

#include <deque>
#include <string>
#include <string_view>

#include "flockbridge/bridge/transport.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"

struct sp_port;

namespace flockbridge::bridge {

/// An open, configured, non-blocking serial device.
class SerialDevice {
 public:
  [[nodiscard]] static protocol::Result<SerialDevice> open(const std::string& path, int baud);

  SerialDevice() = default;
  SerialDevice(const SerialDevice&) = delete;
  SerialDevice& operator=(const SerialDevice&) = delete;
  SerialDevice(SerialDevice&& other) noexcept;
  SerialDevice& operator=(SerialDevice&& other) noexcept;
  ~SerialDevice() { close(); }

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  [[nodiscard]] bool is_pseudo_terminal() const noexcept { return port_ == nullptr && fd_ >= 0; }
  /// Another speed, the line's other settings kept; what waits unread is dropped.
  [[nodiscard]] protocol::Result<protocol::Done> set_baud(int baud);
  void close() noexcept;

 private:
  /// Takes the device for this bridge alone (flock); closes it and says who
  /// has it when another bridge does.
  protocol::Result<protocol::Done> lock(const std::string& path);

  sp_port* port_ = nullptr;  ///< set for devices opened through libserialport
  int fd_ = -1;
};

/// A device plug and play has open already, with what the robot said on it:
/// the serial port that opens `path` next takes it as it is, instead of
/// opening it again (an Arduino resets at each opening of its port, and
/// would start over), and is told the robot's words as if they had just
/// come. On the loop's thread only.
void hand_over_device(const std::string& path, SerialDevice device, protocol::Bytes said);
/// Closes the device handed over for `path`, if nobody took it.
void drop_handed_over_device(const std::string& path) noexcept;

class SerialPort final : public Transport {
 public:
  using Listener = Transport::Listener;
  using Settings = Transport::Settings;

  SerialPort(uv_loop_t* loop, Settings settings, Listener& listener);
  SerialPort(const SerialPort&) = delete;
  SerialPort& operator=(const SerialPort&) = delete;
  ~SerialPort() override { close(); }

  /// Tries to open the device now, and keeps trying until close().
  void start() override;
  /// Queues bytes for the device; dropped while it is not open.
  void write(protocol::ByteView bytes) override;
  /// Writes one frame now, for the last Stop at shutdown: a frame of which
  /// the line has taken only part is finished first (so that the robot sees a
  /// whole, valid frame), what was queued behind it is dropped, and the
  /// line is waited for briefly.
  void write_now(protocol::ByteView bytes) override;
  /// Closes the device and stops trying.
  void close() override;

  [[nodiscard]] bool is_open() const noexcept override { return device_.is_open(); }
  /// Bytes written but not yet taken by the device.
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return pending_output_.size(); }
  [[nodiscard]] const std::string& path() const noexcept { return settings_.path; }
  void set_path(std::string path) override { settings_.path = std::move(path); }

 private:
  void try_open();
  void on_poll(int status, int events);
  void read_available();
  /// Whether the device still answers terminal requests and its node is there.
  [[nodiscard]] bool device_alive() const;
  void flush_output();
  /// Writes all of `bytes`, waiting briefly for the line; false when it would not take them.
  [[nodiscard]] bool write_fully(protocol::ByteView bytes);
  void discard_output() noexcept;
  void update_poll();
  void lose_device(const std::string& reason);
  void fail_soon(std::string reason);
  void on_failure();
  /// Watches the device's folder, so that the device is opened the moment
  /// it (or its link) appears there, not at the next retry.
  void watch_for_device();
  void on_folder_changed(const char* name);

  uv_loop_t* loop_;
  Settings settings_;
  Listener& listener_;
  SerialDevice device_;
  UvHandle<uv_poll_t> poll_;
  int poll_events_ = 0;  ///< what poll_ watches for now (0: not started)
  UvHandle<uv_fs_event_t> folder_watch_;
  DeadlineTimer reopen_;
  DeadlineTimer failure_timer_;
  std::string failure_;  ///< a write failure waiting to be reported
  std::chrono::milliseconds backoff_{0};
  std::string last_failure_;
  protocol::Bytes pending_output_;
  /// The length of each frame in pending_output_, oldest first; the line has
  /// taken front_written_ bytes of the first.
  std::deque<std::size_t> pending_frames_;
  std::size_t front_written_ = 0;
  bool running_ = false;
};

}  // namespace flockbridge::bridge
