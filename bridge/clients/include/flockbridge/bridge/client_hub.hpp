// Every client of the bridge, on every port: the sessions (by number, and
// oldest first in a flat list for the loops that visit each at the robot's
// rate), what goes to all of them (a notice, a sensor message), the output
// held for writing in a loop turn's share, the departures ended a share at
// a time, and the closed sessions forgotten once the callbacks that closed
// them are done.
//
// The hub decides nothing about who may connect or drive: the Bridge admits
// a session (its port's limit, its computer's slots, its role) and says
// which departures come first (the robot's own programs, whoever drives).
// It sends nothing of its own and reads no clock but the turn's share.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flockbridge/bridge/client_kind.hpp"
#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/bridge/send_batch.hpp"
#include "flockbridge/bridge/session.hpp"
#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge {

class ClientHub {
 public:
  /// Each message encoded once for each encoding (encoding_index).
  using Encoded = std::array<SharedBuffer, 2>;

  /// `turns` counts the loop's turns that the writing and ending shares are
  /// counted in; `ring`: write through io_uring where the kernel allows.
  ClientHub(const LoopTurns& turns, std::chrono::nanoseconds share, bool ring);
  ClientHub(const ClientHub&) = delete;
  ClientHub& operator=(const ClientHub&) = delete;
  ~ClientHub() = default;

  /// Creates the handle that ends the rest of a burst of departures.
  [[nodiscard]] int init(uv_loop_t* loop);
  /// Closes every session (`reason`, for the log) and forgets them all.
  void close_all(std::string_view reason);

  /// The number the next session takes: 1, 2, 3 ... for the run.
  [[nodiscard]] std::uint64_t next_id() noexcept { return next_id_++; }
  /// Takes a session in (the caller then starts or refuses it).
  Session& add(std::unique_ptr<Session> session);
  /// The session numbered `id`, closing or not; null once forgotten.
  [[nodiscard]] Session* find(std::uint64_t id) const;
  /// The same, null when it is closing.
  [[nodiscard]] Session* live(std::uint64_t id) const;
  /// Every session not yet forgotten, oldest first.
  [[nodiscard]] const std::vector<Session*>& sessions() const noexcept { return list_; }
  [[nodiscard]] std::size_t size() const noexcept { return by_id_.size(); }
  /// Sessions of `kind` that are in: not closing, refused or knocking.
  [[nodiscard]] std::size_t active(ClientKind kind) const;
  /// Sessions of `kind` in the teacher's room (Session::knock()).
  [[nodiscard]] std::size_t knocking(ClientKind kind) const;

  /// Sends one message to every session that is in, encoded once per encoding.
  template <typename Encode>
  void broadcast(Encode&& encode, MessageOrigin origin = MessageOrigin::Bridge);
  /// Sends one message to every session for which `wants(session)` holds,
  /// encoded (`encode(session)`) once per encoding.
  template <typename Wants, typename Encode>
  void send_to(Wants&& wants, Encode&& encode, MessageOrigin origin = MessageOrigin::Bridge);
  /// Gives a sensor message to every session that wants it now, encoded
  /// once per encoding into `encoded` (by `encode(encoding)`), and holds
  /// their output for flush(): the robot's own programs are written first.
  template <typename Encode>
  void publish_sensor(Encode&& encode, SteadyTime now, Encoded& encoded);
  /// Writes the held sessions' output for at most the turn's share; true
  /// when some is left for a later turn (the caller asks for one).
  [[nodiscard]] bool flush();
  /// Whether writes go through io_uring, and how: for the log.
  [[nodiscard]] const SendBatch& writes() const noexcept { return writes_; }

  /// A session's client has gone (Session::Host::session_input_over): ended
  /// now while the turn's share lasts, else in a later turn; `first` (the
  /// robot's own programs, whoever drives) ahead of the others.
  void depart(Session& session, bool first);
  /// A session has started closing (Session::Host::session_closed): forget()
  /// drops it once the current callbacks are done.
  void closed(const Session& session) { closed_.push_back(session.id()); }
  /// Drops the sessions that closed.
  void forget_closed();

  /// Each session's own timeouts; a few times a second.
  void housekeeping(SteadyTime now);

 private:
  void end_departed();
  void hold(Session& session);

  std::map<std::uint64_t, std::unique_ptr<Session>> by_id_;
  /// The same sessions, oldest first, in a flat list for the loops that
  /// visit every one at the sensor rate (a map's nodes are a cache miss each).
  std::vector<Session*> list_;
  /// Sessions holding sensor messages to write, native programs first.
  std::deque<Session*> held_;
  /// Their writes, several a system call where the kernel allows.
  SendBatch writes_;
  TurnShare writing_share_;
  /// Sessions whose clients have gone, waiting to be ended.
  std::deque<Session*> departed_;
  TurnShare ending_share_;
  /// Ends the rest of a burst of departures after the loop has polled.
  AfterPoll ender_;
  std::vector<std::uint64_t> closed_;
  std::uint64_t next_id_ = 1;
};

template <typename Encode>
void ClientHub::broadcast(Encode&& encode, MessageOrigin origin) {
  send_to([](const Session& session) { return !session.closing() && !session.refusing() && !session.knocking(); },
          std::forward<Encode>(encode), origin);
}

template <typename Wants, typename Encode>
void ClientHub::send_to(Wants&& wants, Encode&& encode, MessageOrigin origin) {
  Encoded encoded;
  std::array<bool, 2> done{};
  for (Session* session : list_) {
    if (!wants(*session)) continue;
    const std::size_t k = encoding_index(session->encoding());
    if (!done[k]) {
      encoded[k] = encode(*session);
      done[k] = true;
    }
    session->send(encoded[k], origin);
  }
}

template <typename Encode>
void ClientHub::publish_sensor(Encode&& encode, SteadyTime now, Encoded& encoded) {
  for (Session* session : list_) {
    if (!session->wants_sensor(now)) continue;
    SharedBuffer& buffer = encoded[encoding_index(session->encoding())];
    if (!buffer) buffer = encode(session->encoding());
    if (session->send_sensor(buffer, now, true)) hold(*session);
  }
}

}  // namespace flockbridge::bridge
