#include "flockbridge/bridge/control_lease.hpp"

namespace flockbridge::bridge {

ControlLease::Verdict ControlLease::check(std::uint64_t client, bool motion, bool one_driver_port,
                                          protocol::SteadyTime now) {
  if (held_by(client)) {
    holder_->renewed = now;
    return Verdict::Allowed;
  }
  // Programs that do not drive send their settings too (speeds, the motors
  // enabled at connect and disabled as they leave); none of it reaches the
  // robot.
  if (one_driver_port && !motion) return Verdict::Ignored;
  if (holder_) return Verdict::Busy;
  // Nobody drives: a claw or a display is anyone's; a motion command that
  // reaches the robot makes its client the driver.
  return motion ? Verdict::Takes : Verdict::Allowed;
}

void ControlLease::take(std::uint64_t client, double unix_seconds, protocol::SteadyTime now) {
  holder_ = Holder{client, unix_seconds, now};
}

bool ControlLease::end(std::uint64_t client) {
  if (!held_by(client)) return false;
  holder_.reset();
  return true;
}

std::optional<std::string> ControlLease::expired(protocol::SteadyTime now, protocol::SteadyTime last_input,
                                                 bool one_driver_port, std::chrono::milliseconds lease_idle,
                                                 std::chrono::milliseconds control_silence) const {
  if (!holder_) return std::nullopt;
  // A program of a one-driver port that falls silent has gone;
  // anyone else's lease lasts until it has sent no command for a while.
  if (one_driver_port && now - last_input >= control_silence) {
    return "sent nothing for " + std::to_string(control_silence.count()) + " ms";
  }
  if (now - holder_->renewed >= lease_idle) {
    return "sent no command for " + std::to_string(lease_idle.count()) + " ms";
  }
  return std::nullopt;
}

}  // namespace flockbridge::bridge
