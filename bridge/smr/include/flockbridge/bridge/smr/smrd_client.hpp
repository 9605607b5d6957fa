// Port 24901: an SMR client program (the SMR library's smr_connect,
// smr_read, smr_write) as it would talk to SMRD, sharing the robot with
// the others.
//
// Conditions of the problem (smrd.c, smr.c, smr.md):
// - the client says READY (E1 02) to bank one period, at most two; a client
//   with none banked gets, at its READY, the current period so far at once
//   (its START and what followed), then the rest as it comes;
// - at each period's end a client with a period banked gets END and uses it
//   up; the new period (START, the client messages echoed, the bus's
//   replies) goes only to clients that still have one banked. A client that
//   stops saying READY gets nothing more and holds nobody up;
// - what else a client sends is for the robot: bus messages (speeds to
//   0x11 and 0x12, anything else SMRD puts on the bus), and the RS232 and
//   simulator types, which SMRD drops when it has no place for them. The
//   messages of one read go to the robot as one command;
// - a message of a type with no meaning (2, 4, 5, 6) means the stream is
//   not SMRD's protocol, which has no way to find the next message: the
//   client is disconnected; another control message is ignored and logged;
// - the bridge's own messages (link state, errors) never reach it.
//
// The client follows the driver's stream through admit(): every message of
// the stream comes there in order, admitted or not, so that it knows the
// period so far; it starts from the period as far as the clients had it
// when it connected.
#pragma once

#include <deque>

#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/protocol/smr/messages.hpp"

namespace flockbridge::bridge::smr {

/// The current period so far, as SMRD's stream showed it: from its START,
/// every message after it; END empties it.
class PeriodSoFar {
 public:
  /// Takes in the next message of the stream (a StreamMessage's bytes).
  void follow(std::string_view message);
  [[nodiscard]] const std::string& bytes() const noexcept { return bytes_; }
  [[nodiscard]] static bool is_end(std::string_view message) noexcept;

 private:
  std::string bytes_;
};

class SmrdClient final : public NativeClient {
 public:
  /// `period`: the period so far when the client connected.
  explicit SmrdClient(PeriodSoFar period) : period_(std::move(period)) {}

  void feed(protocol::ByteView bytes, SteadyTime now) override;
  [[nodiscard]] std::optional<NativeInput> next() override;
  [[nodiscard]] std::size_t expire(SteadyTime now, std::chrono::milliseconds timeout) override;
  [[nodiscard]] bool admit(std::string_view message, MessageOrigin origin) override;
  [[nodiscard]] bool exclusive_control() const noexcept override { return false; }

  /// Periods banked: 0 to 2.
  [[nodiscard]] int ready() const noexcept { return ready_; }

 private:
  /// Hands the messages for the robot gathered so far to the core, as one command.
  void flush_command();
  /// Gives up on the client's bytes: `what` came, which SMRD's protocol has no place for.
  void disconnect(const std::string& what);

  protocol::smr::MessageDecoder decoder_;
  SteadyTime last_bytes_{};
  int ready_ = 0;
  bool unreadable_ = false;  ///< a message of no known type came: nothing more is read
  PeriodSoFar period_;
  protocol::Bytes command_;  ///< messages for the robot, not yet handed on
  std::deque<NativeInput> inputs_;
};

}  // namespace flockbridge::bridge::smr
