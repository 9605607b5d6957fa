// The serial devices a robot may be on, for plug and play: each device once,
// by its most lasting name. First the names the families' udev rules give
// their robots (a family's usual device, where it is a link udev made), then
// what the search patterns find, in their order: by default systemd's
// /dev/serial/by-id names, then the USB serial nodes no such name leads to
// (ttyACM*, ttyUSB*). The board's own UARTs (ttyS*, ttyAMA*), on which a login
// console may run, only when the configuration's patterns name them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace flockbridge::bridge {

/// serial.search's default: where a robot on USB appears.
inline constexpr std::string_view kDefaultSerialSearch = "/dev/serial/by-id/* /dev/ttyACM* /dev/ttyUSB*";

struct CandidateScan {
  /// The names udev gives a family's robot (each family's usual device),
  /// first where they exist and are links.
  std::vector<std::filesystem::path> named;
  /// Glob patterns ("/dev/ttyUSB*"), in the order their devices are tried.
  std::vector<std::string> patterns;
};

/// serial.search's text split into its patterns (separated by spaces or commas).
[[nodiscard]] std::vector<std::string> search_patterns(std::string_view text);

/// The devices to probe, in that order.
[[nodiscard]] std::vector<std::string> serial_candidates(const CandidateScan& scan);

/// The folders whose entries a device appears in or leaves (each
/// pattern's and each name's folder, or the nearest one that exists, where
/// the folder is still to be made: /dev/serial/by-id before the first USB
/// serial device).
[[nodiscard]] std::vector<std::filesystem::path> candidate_folders(const CandidateScan& scan);

/// Whether an entry called `name` in `folder` is one the scan may find (a
/// name that matches a pattern's last part there, a name of `named`, or a
/// folder on the way to a pattern's).
[[nodiscard]] bool concerns_scan(const CandidateScan& scan, const std::filesystem::path& folder,
                                 std::string_view name);

}  // namespace flockbridge::bridge
