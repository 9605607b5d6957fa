// How a robot family recognises its robot on a serial line nobody named
// (plug and play), as gpsd's drivers each recognise their receiver: a short
// conversation of harmless messages at each of the family's speeds. Each
// family writes its own (protocol/<family>/probe.hpp); the bridge opens the
// device, sets the speed, times the waits and passes the bytes. A probe never
// sends a motion command. Pure: no clock, no I/O.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol {

/// A speed a probe tries, and how long it waits there for the robot.
struct ProbeSpeed {
  int baud = 0;
  std::chrono::milliseconds wait{0};
};

/// The USB identity of the device a serial line is on (its vendor and
/// product ids), when it is on USB: what the kernel knows before a byte is sent.
struct UsbIdentity {
  std::uint16_t vendor = 0;
  std::uint16_t product = 0;

  friend bool operator==(const UsbIdentity&, const UsbIdentity&) = default;
};

/// "0403:6001".
[[nodiscard]] std::string usb_id_text(const UsbIdentity& usb);

/// What answered: the family's robot.
struct ProbeFinding {
  std::string model;     ///< when the answer names it ("p3dx-sh"); "" when it does not
  std::string evidence;  ///< what answered, and at which speed, in words
};

/// What a probe makes of the bytes that came.
struct ProbeStep {
  Bytes send;                         ///< the conversation's next message, to send now (often none)
  std::optional<ProbeFinding> found;  ///< the robot is recognised
  bool refuted = false;               ///< not this family at this speed: no need to wait on

  /// The robot is recognised (`evidence`: what answered, `model` when the answer names it).
  [[nodiscard]] static ProbeStep recognised(std::string evidence, std::string model = {}) {
    ProbeStep step;
    step.found = ProbeFinding{std::move(model), std::move(evidence)};
    return step;
  }
  /// Not this family: the answer is one no robot of it gives.
  [[nodiscard]] static ProbeStep ruled_out() {
    ProbeStep step;
    step.refuted = true;
    return step;
  }
  /// The conversation goes on with `message`.
  [[nodiscard]] static ProbeStep reply(Bytes message) {
    ProbeStep step;
    step.send = std::move(message);
    return step;
  }
};

class SerialProbe {
 public:
  SerialProbe() = default;
  SerialProbe(const SerialProbe&) = delete;
  SerialProbe& operator=(const SerialProbe&) = delete;
  virtual ~SerialProbe() = default;

  /// The family's name, as the families table has it.
  [[nodiscard]] virtual std::string_view family() const noexcept = 0;
  /// The speeds to try, in order.
  [[nodiscard]] virtual std::span<const ProbeSpeed> speeds() const noexcept = 0;
  /// Whether the probe only listens: it sends nothing, so it goes first on a
  /// device (an Arduino resets when its port is opened, and nothing may be
  /// sent to it while its bootloader listens).
  [[nodiscard]] virtual bool listens_only() const noexcept { return false; }
  /// Whether the family's robot may be on a device of this USB identity
  /// (none: not on USB, or not known). A probe that says no is not run
  /// there, and its wait is saved.
  [[nodiscard]] virtual bool may_be_on(const std::optional<UsbIdentity>& /*usb*/) const noexcept { return true; }
  /// Starts over at speeds()[index]: what to send first (empty: nothing).
  [[nodiscard]] virtual Bytes start(std::size_t index) = 0;
  /// Bytes that came at that speed, in order.
  [[nodiscard]] virtual ProbeStep feed(ByteView bytes) = 0;
};

}  // namespace flockbridge::protocol
