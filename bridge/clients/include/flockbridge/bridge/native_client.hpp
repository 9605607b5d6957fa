// A client of the robot family's own port: the programs written for the
// original robot software, which speak its protocol unchanged. The family's
// driver reads their bytes (RobotDriver::make_native_client) and writes the
// bridge's notices in the family's dialect; the core's session carries
// them, queues what goes back and applies the safety rules.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/client_request.hpp"
#include "flockbridge/protocol/clock.hpp"
#include "flockbridge/protocol/robot_link.hpp"

namespace flockbridge::bridge {

using protocol::SteadyTime;

namespace native_input {

/// Bytes for this client alone, sent at once whatever its dialect: the
/// answer to its handshake, a reply it waits for.
struct Reply {
  SharedBuffer message;
};

/// The client gives up the robot and stops listening, and stays connected
/// (a close of its protocol's): the end of its control, if it held it.
struct Release {};

/// The client asks for the bridge's own messages from now on (`wanted`), or
/// for its protocol's original messages only: `answer` is what its dialect
/// says back (sent at once; null: nothing), `asked` how its request reads
/// in the log, in its protocol's words.
struct BridgeMessages {
  bool wanted = false;
  SharedBuffer answer;
  std::string asked;
};

/// The client's bytes cannot be read any further (its protocol has no way
/// to find the next message after a bad one): the connection is closed.
struct Disconnect {
  std::string reason;
};

}  // namespace native_input

/// The bridge's own messages to a client, in words every dialect may or may
/// not have: JSON has them all; a family's own port, those its protocol
/// can say (NativeClient::encode).
namespace notice {

/// The robot link changed.
struct Link {
  protocol::LinkState state = protocol::LinkState::Down;
  std::string_view reason;
};
/// Sensor messages were replaced before the client took them.
struct Dropped {
  std::uint64_t count = 0;
};
/// A request succeeded; for a command that went to the robot, whether the
/// robot confirmed it.
struct Done {
  std::optional<bool> confirmed;
};
/// A request was refused or failed.
struct Failed {
  const protocol::Error& error;
};
/// The bridge stopped the robot on its own.
struct SafetyStop {
  std::string_view reason;
};

}  // namespace notice

using Notice = std::variant<notice::Link, notice::Dropped, notice::Done, notice::Failed, notice::SafetyStop>;

/// Who a message for a native client comes from: the robot (its driver's
/// messages), or the bridge itself (link state, errors, refusals).
enum class MessageOrigin : std::uint8_t { Robot, Bridge };

/// What a client's bytes held: a request of the bridge's (a command for the
/// robot in the family's form, subscribe, ...), a reply, a release, a choice
/// of messages, what was wrong with them, or that nothing more can be read
/// from them.
using NativeInput = std::variant<protocol::ClientRequest, native_input::Reply, native_input::Release,
                                 native_input::BridgeMessages, native_input::Disconnect, protocol::Error>;

class NativeClient {
 public:
  NativeClient() = default;
  NativeClient(const NativeClient&) = delete;
  NativeClient& operator=(const NativeClient&) = delete;
  virtual ~NativeClient() = default;

  /// Bytes from the client, as they came.
  virtual void feed(protocol::ByteView bytes, SteadyTime now) = 0;
  /// The next thing they held, or nothing until more bytes come.
  [[nodiscard]] virtual std::optional<NativeInput> next() = 0;
  /// Discards a message the client began and has not finished for
  /// `timeout`. Returns how many bytes were dropped (0: none).
  [[nodiscard]] virtual std::size_t expire(SteadyTime now, std::chrono::milliseconds timeout) = 0;
  /// Whether a message in the native encoding may go to this client: a
  /// program written for the original software gets only what it parses
  /// (unless it asked for the bridge's own messages). Every message meant
  /// for the clients of the port comes here in order, whether or not it is
  /// admitted, so that a client whose protocol has state (a READY and
  /// periods, say) can follow the stream.
  [[nodiscard]] virtual bool admit(std::string_view message, MessageOrigin origin) = 0;
  /// The bridge's notice in the family's dialect; null when the dialect has
  /// no words for it (it is then not sent). What the original software
  /// would not parse still goes through admit().
  [[nodiscard]] virtual SharedBuffer encode(const Notice& /*notice*/) const { return nullptr; }
  /// Whether one program at a time drives through this port: its motion
  /// commands need the robot's control, which the first one to move takes.
  [[nodiscard]] virtual bool exclusive_control() const noexcept = 0;
};

}  // namespace flockbridge::bridge
