// Which robot is on a serial device nobody named: the device is opened once
// and each family's probe (protocol/serial_probe.hpp) has its turn, those
// that only listen first (an Arduino resets when its port opens, and nothing
// may be sent while its bootloader listens), each at its speeds, each speed
// for its wait or until the probe finds its robot or rules it out. The
// device is closed again whatever was found: the driver that serves the
// robot opens it anew. On the loop; one device a prober.
#pragma once

#include <uv.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/bridge/serial_port.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/serial_probe.hpp"

namespace flockbridge::bridge {

/// The USB identity of the device behind a serial device's path (a
/// /dev/serial/by-id name is followed), from sysfs under `sys` (the USB
/// device's idVendor and idProduct above the tty's device); none when the
/// tty is not on USB (a board's UART, a pseudo-terminal) or sysfs does not say.
[[nodiscard]] std::optional<protocol::UsbIdentity> usb_identity(const std::string& device,
                                                                const std::filesystem::path& sys = "/sys");

class SerialProber {
 public:
  /// What is known of a device before it is opened: its USB identity.
  using Identify = std::function<std::optional<protocol::UsbIdentity>(const std::string& device)>;

  /// What the device turned out to be.
  struct Outcome {
    std::string device;
    std::string family;  ///< "": no family's robot answered
    protocol::ProbeFinding finding;
    int baud = 0;                                       ///< the speed it answered at
    std::chrono::duration<double, std::milli> took{0};  ///< from the opening to the answer (or to the last wait's end)
    std::string why_not;                                ///< when none answered: what each family made of the device
    /// When none answered: whether the device sent anything at all (a
    /// device that talks, but as no robot does, is something else: a GPS
    /// receiver, a modem); a silent one may be a robot not yet switched on.
    bool heard = false;
    /// When the family's probe only listens (its robot resets at each opening
    /// of its port: an Arduino), the device still open, and what the robot
    /// said on it: for hand_over_device(), so that serving it does not
    /// start it over. Null otherwise, the device closed.
    std::shared_ptr<SerialDevice> open_device;
    protocol::Bytes said;
    std::optional<protocol::UsbIdentity> usb;  ///< the device's, when it is on USB

    /// "a FAMILY robot (MODEL)": the family's robot found, for a person.
    [[nodiscard]] std::string robot_text() const;
    /// "2.50 s": how long it took, for a person.
    [[nodiscard]] std::string took_text() const;
  };

  /// `probes`: one of each family that can be recognised; `done` is called once a start().
  /// `identify`: how a device's USB identity is learnt (sysfs, unless a test says otherwise).
  SerialProber(uv_loop_t* loop, std::vector<std::unique_ptr<protocol::SerialProbe>> probes,
               std::function<void(const Outcome&)> done, Identify identify = {});
  SerialProber(const SerialProber&) = delete;
  SerialProber& operator=(const SerialProber&) = delete;
  ~SerialProber() { cancel(); }

  /// Opens `device` and starts probing; an error when it cannot be opened (nothing is called then).
  [[nodiscard]] protocol::Result<protocol::Done> start(const std::string& device);
  /// Stops probing and closes the device; `done` is not called.
  void cancel() noexcept;
  [[nodiscard]] bool probing() const noexcept { return device_.is_open(); }

 private:
  void begin_speed();
  void next_speed(std::string_view note);
  void on_readable();
  void on_wait_over();
  void finish(const protocol::ProbeFinding* finding);
  void send(const protocol::Bytes& bytes);

  uv_loop_t* loop_;
  std::vector<std::unique_ptr<protocol::SerialProbe>> probes_;
  std::function<void(const Outcome&)> done_;
  Identify identify_;
  std::optional<protocol::UsbIdentity> usb_;
  std::vector<protocol::SerialProbe*> turns_;  ///< the probes that may find their robot on this device, in order
  SerialDevice device_;
  std::string path_;
  UvHandle<uv_poll_t> poll_;
  UvHandle<uv_timer_t> timer_;
  std::size_t probe_ = 0;  ///< whose turn, in turns_
  std::size_t speed_ = 0;  ///< which of its speeds
  std::chrono::steady_clock::time_point opened_;
  std::vector<std::string> notes_;  ///< what each family made of it so far
  std::string heard_;               ///< the current speed's: nothing, or what came
  protocol::Bytes said_;            ///< the current speed's bytes, as they came
  bool heard_any_ = false;          ///< bytes came at some speed
};

/// Probes `device` on a loop of its own and waits for the outcome: for a
/// program that waits for the answer (flockbridge doctor); the daemon probes
/// on its own loop. Nothing when the device cannot be opened.
[[nodiscard]] std::optional<SerialProber::Outcome> probe_device(
    const std::string& device, std::vector<std::unique_ptr<protocol::SerialProbe>> probes,
    SerialProber::Identify identify = {});

}  // namespace flockbridge::bridge
