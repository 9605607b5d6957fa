// The serial devices a robot may be on, for plug and play: each device once,
// by its most lasting name. First the names that do not change, the names
// the families' udev rules give their robots and systemd's /dev/serial/by-id, then
// the USB serial nodes no such name leads to (ttyACM*, ttyUSB*), then, where
// the configuration allows it, the board's own UARTs (ttyS*, ttyAMA*), on
// which a login console may run.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace flockbridge::bridge {

struct CandidateScan {
  std::filesystem::path dev = "/dev";
  /// The names udev gives a family's robot (each family's default device), first where they exist.
  std::vector<std::filesystem::path> named;
  bool uarts = false;  ///< the board's own UARTs too
};

/// The devices to probe, in that order.
[[nodiscard]] std::vector<std::string> serial_candidates(const CandidateScan& scan = {});

}  // namespace flockbridge::bridge
