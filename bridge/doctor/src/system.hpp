// What doctor reads of the machine: programs' answers, /proc, the file
// system. Each function says what it found, or nothing when it could not
// look; none changes anything.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace flockbridge::bridge::doctor {

/// What a program printed on its standard output, and whether it ended
/// well; nothing when it could not be run (not installed).
struct Printed {
  std::string out;
  bool succeeded = false;
};
[[nodiscard]] std::optional<Printed> run_program(const std::vector<std::string>& argv);

/// `systemctl show`'s properties of the unit (KEY=value lines; a key given
/// more than once keeps every value, separated by '\n'); nothing when
/// systemd does not run here.
[[nodiscard]] std::optional<std::map<std::string, std::string>> unit_properties(const std::string& unit);

/// A process: its number and its name (/proc/PID/comm).
struct Process {
  pid_t pid = 0;
  std::string name;
};

/// The processes that have `node` (a device node, canonical) open.
[[nodiscard]] std::vector<Process> holders_of(const std::filesystem::path& node);

/// The process that listens on TCP `port` (any address), when one does and /proc says which.
[[nodiscard]] std::optional<Process> listener_of(std::uint16_t port);

/// The driver's name of a character device's major number (/proc/devices: 188 "ttyUSB").
[[nodiscard]] std::string char_driver_name(unsigned major);

/// The groups' names a user is in (its own and its supplementary ones).
[[nodiscard]] std::vector<std::string> groups_of(const std::string& user);

/// "rw-rw----".
[[nodiscard]] std::string mode_text(mode_t mode);

}  // namespace flockbridge::bridge::doctor
