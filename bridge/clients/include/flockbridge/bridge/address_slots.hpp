// How many connections each address holds, over every listener: one
// classmate's computer cannot take every client slot of the robot, however
// many connections it opens (native, JSON, dashboard, WebSocket, Foxglove).
//
// An address is a computer: an IPv4 address, or an IPv6 /64 (a computer on
// Wi-Fi makes itself new IPv6 addresses within its network's /64 at will).
// The robot's own programs, which connect to localhost (from 127.0.0.1 or
// ::1), are never limited. Loopback's other addresses (127.0.x.y) count as
// computers of their own: the tests play a class with them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace flockbridge::bridge {

class AddressSlots {
 public:
  explicit AddressSlots(std::size_t per_address) : per_address_(per_address) {}

  /// The computer an address ("10.0.3.17", "[2001:db8::5]", "::ffff:10.0.3.17")
  /// stands for: "10.0.3.17", "2001:db8::/64"; nothing for localhost
  /// (127.0.0.1, ::1), which is never limited, or for what is not an address.
  [[nodiscard]] static std::optional<std::string> computer_of(std::string_view address);

  /// Takes a slot for a connection from `computer`; false when it holds its
  /// share already.
  [[nodiscard]] bool take(const std::string& computer);
  void give_back(const std::string& computer);
  [[nodiscard]] std::size_t held(const std::string& computer) const;
  [[nodiscard]] std::size_t per_address() const noexcept { return per_address_; }

 private:
  std::size_t per_address_;
  std::unordered_map<std::string, std::size_t> held_;
};

}  // namespace flockbridge::bridge
