// The robot's control lease: one client drives at a time, on every port
// (docs/clients.md, "Who may drive"). The first client whose motion command
// reaches the robot holds it; its commands renew it; it ends when its holder
// releases it, goes away, is taken over by the teacher, or sends no command
// for access.lease_idle (a program of a one-driver port: sends nothing at all
// for control_silence). The rules only: the Bridge tells clients and stops
// the robot when a lease ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "flockbridge/protocol/clock.hpp"

namespace flockbridge::bridge {

class ControlLease {
 public:
  struct Holder {
    std::uint64_t client = 0;
    double since = 0;                   ///< Unix seconds, for clients
    protocol::SteadyTime renewed{};     ///< its holder's last command
  };
  /// What may happen to a command of a client that is not stopping the robot.
  enum class Verdict : std::uint8_t {
    Allowed,  ///< it goes to the robot (the holder's renews the lease)
    Takes,    ///< it goes to the robot, and its client drives from then on
    Ignored,  ///< a setting from a program of a one-driver port that does not drive: dropped without a word
    Busy,     ///< another client drives: refused
  };

  [[nodiscard]] const std::optional<Holder>& holder() const noexcept { return holder_; }
  [[nodiscard]] bool held_by(std::uint64_t client) const noexcept { return holder_ && holder_->client == client; }

  /// The verdict on a command of `client`; renews the lease when `client` holds it.
  /// `motion`: the command sets the robot moving; `one_driver_port`: it came
  /// through a port where programs of the original software drive one at a time.
  [[nodiscard]] Verdict check(std::uint64_t client, bool motion, bool one_driver_port, protocol::SteadyTime now);
  /// `client` drives from now on.
  void take(std::uint64_t client, double unix_seconds, protocol::SteadyTime now);
  /// Ends the lease when `client` holds it; true when it did.
  bool end(std::uint64_t client);

  /// Why the holder's lease has run out at `now`, when it has: `last_input`
  /// is when its client last sent anything at all.
  [[nodiscard]] std::optional<std::string> expired(protocol::SteadyTime now, protocol::SteadyTime last_input,
                                                   bool one_driver_port, std::chrono::milliseconds lease_idle,
                                                   std::chrono::milliseconds control_silence) const;

 private:
  std::optional<Holder> holder_;
};

}  // namespace flockbridge::bridge
