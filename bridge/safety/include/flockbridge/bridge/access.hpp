// Who may do what: the roles a connection has, the comparison of secrets,
// the growing delay after wrong ones, per source address, and which web
// pages may open the dashboard's WebSocket.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flockbridge/protocol/clock.hpp"

namespace flockbridge::bridge {

using protocol::SteadyTime;

/// What a connection may do. A viewer receives and may stop the robot; a
/// driver may also drive it, under the control lease; the teacher may also
/// take the lease from anyone.
enum class Role : std::uint8_t { Viewer, Driver, Teacher };

/// "viewer", "driver", "teacher".
[[nodiscard]] std::string_view role_name(Role role) noexcept;

/// Whether two secrets are equal, in a time that depends on their lengths
/// only, never on where they first differ.
[[nodiscard]] bool same_secret(std::string_view given, std::string_view expected) noexcept;

/// The host of a browser's Origin header ("http://Robot7.local:8080" →
/// "robot7.local", "http://[::1]:80" → "::1"), lower case; nothing for
/// "null" or anything that is not scheme://host[:port].
[[nodiscard]] std::optional<std::string> origin_host(std::string_view origin);

/// The host names (or addresses) of a comma-separated list, as
/// access.allowed_origins holds them; a full origin in it counts by its host.
[[nodiscard]] std::vector<std::string> host_list(std::string_view list);

/// Whether a WebSocket upgrade with this Origin header may open: a request
/// without one comes from a program, not a web page, and may; a page may
/// when it comes from one of `own_names` (the bridge's host names and
/// addresses) or `allowed` (host names). The Host header plays no part: a
/// page on a name that resolves to the robot would choose it.
[[nodiscard]] bool origin_allowed(std::optional<std::string_view> origin, const std::vector<std::string>& own_names,
                                  const std::vector<std::string>& allowed);

/// Wrong driver PINs the robot evaluates from everyone together: a first
/// 20, then 10 a minute (one every 6 s). A 4-digit PIN then takes about
/// 8 hours of guessing on average, a 6-digit one about five weeks.
inline constexpr unsigned kSharedPinGuesses = 20;
inline constexpr std::chrono::milliseconds kSharedPinInterval{6000};
/// A teacher's secret at least this long is guarded per address only, so
/// that nobody's guessing of the PIN ever keeps the teacher out; a shorter
/// one is guarded as the PIN is.
inline constexpr std::size_t kLongSecret = 12;
/// Clients of a full JSON or WebSocket port that may still wait for the
/// teacher's secret (when one is set), and how long each waits.
inline constexpr std::size_t kTeacherRoom = 2;
inline constexpr std::chrono::seconds kTeacherWait{10};

/// Wrong secrets from one address make it wait, longer each time: a few
/// mistyped ones (`free_tries`) cost nothing, so a quick retry is taken;
/// after the n-th wrong one in a row beyond those, `first_delay` × 2^(n-1),
/// at most `longest`. A right one clears the address; an address left alone
/// for `forget_after` is forgotten. Nobody is ever banned for good.
///
/// A short secret (the driver PIN) is also guarded for everyone together,
/// since a classmate has many addresses (IPv6 alone gives a laptop several):
/// wrong guesses from all addresses draw on one budget of `shared_burst`,
/// refilled by one every `shared_interval`; while it is empty no guess of
/// anyone's is taken. `shared_burst` 0: no shared budget (a long secret).
class LoginGuard {
 public:
  struct Settings {
    unsigned free_tries = 3;
    std::chrono::milliseconds first_delay{1000};
    std::chrono::milliseconds longest{30000};
    std::chrono::milliseconds forget_after{600000};
    std::size_t most_addresses = 4096;  ///< beyond this the oldest are forgotten first
    unsigned shared_burst = 0;
    std::chrono::milliseconds shared_interval{6000};
  };
  /// Why a try must wait, and how long.
  struct Wait {
    std::chrono::milliseconds left{0};
    bool everyone = false;  ///< the shared budget is spent (else: this address waits)
  };

  LoginGuard() = default;
  explicit LoginGuard(Settings settings) : settings_(settings), shared_(settings.shared_burst) {}

  /// How long `address` must still wait before its next try (nothing: it may try now).
  [[nodiscard]] std::optional<Wait> wait(const std::string& address, SteadyTime now);
  /// A wrong secret from `address`: returns how long it must now wait (zero: it may try again at once).
  std::chrono::milliseconds failed(const std::string& address, SteadyTime now);
  /// A right one.
  void succeeded(const std::string& address);

  [[nodiscard]] std::size_t addresses() const noexcept { return failures_.size(); }

 private:
  struct Failures {
    unsigned count = 0;
    SteadyTime last{};
    SteadyTime until{};
  };
  void forget_old(SteadyTime now);
  /// Refills the shared budget for the time since it was last refilled.
  void refill(SteadyTime now);

  Settings settings_;
  std::unordered_map<std::string, Failures> failures_;
  double shared_ = 0;  ///< wrong guesses everyone may still make now
  SteadyTime refilled_{};
};

}  // namespace flockbridge::bridge
