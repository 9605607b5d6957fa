// The clients' hub alone (client_hub.hpp): the sessions by number and in
// order, what goes to everyone, the held output written a turn's share at a
// time (the robot's own programs first), departures ended a share at a time
// (the first ones ahead), and closed sessions forgotten when the Bridge asks.
// Sessions with no socket (what they are sent is kept in a list) on a loop
// that the test turns by hand; no process, no network.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "flockbridge/bridge/client_hub.hpp"
#include "support/turning_loop.hpp"

using namespace flockbridge;
using namespace flockbridge::bridge;
using namespace std::chrono_literals;
using flockbridge::testing::TurningLoop;

namespace {

/// What every session of a test did, in order: whose output was written,
/// and why each closed (kept here, since a session is gone once forgotten).
struct Record {
  std::vector<std::uint64_t> flushes;
  std::vector<std::string> closes;
};

/// A session whose transport writes into `written`, or holds everything
/// while `stalled`.
class FakeSession final : public Session {
 public:
  FakeSession(Host& host, std::uint64_t id, ClientKind kind, const Config& config, protocol::BridgeCounters& counters,
              Record& record)
      : Session(host, id, kind, config, counters), record_(record) {
    peer_ = "10.0.0." + std::to_string(id) + ":5000";
  }

  /// The client has finished sending (its side of the connection closed).
  void client_left() { input_over(); }

  std::vector<std::string> written;
  bool stalled = false;

 private:
  void start_transport() override {}
  void flush() override {
    if (stalled) return;
    record_.flushes.push_back(id());
    for (const SharedBuffer& message : take_output(64)) written.push_back(*message);
    after_write();
  }
  void close_transport(std::string_view reason, CloseKind /*kind*/) override {
    record_.closes.push_back(std::to_string(id()) + ": " + std::string(reason));
  }

  Record& record_;
};

/// A hub with what the Bridge gives it, and the Bridge's two calls back
/// from the sessions (a departure, a close).
struct Hub : Session::Host {
  explicit Hub(std::chrono::nanoseconds share) : hub(turns, share, false) {
    REQUIRE(turns.init(&turning.loop) == 0);
    REQUIRE(hub.init(&turning.loop) == 0);
  }
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;
  Hub(Hub&&) = delete;
  Hub& operator=(Hub&&) = delete;
  ~Hub() override {
    hub.close_all("the test is over");
    turns.reset();
  }

  FakeSession& add(ClientKind kind) {
    auto session = std::make_unique<FakeSession>(*this, hub.next_id(), kind, config, counters, record);
    auto& added = static_cast<FakeSession&>(hub.add(std::move(session)));
    added.start(nullptr);
    return added;
  }

  void session_request(Session& /*session*/, protocol::ClientRequest /*request*/,
                       const nlohmann::json& /*id*/) override {}
  void session_robot_command(Session& /*session*/, std::string_view /*cmd*/, const nlohmann::json& /*object*/,
                             const nlohmann::json& /*id*/) override {}
  void session_released(Session& /*session*/) override {}
  void session_input_over(Session& session) override { hub.depart(session, session.kind() == ClientKind::Native); }
  void session_closed(Session& session) override {
    ended.push_back(session.id());
    hub.closed(session);
  }

  TurningLoop turning;
  LoopTurns turns;
  Config config;
  protocol::BridgeCounters counters;
  Record record;
  std::vector<std::uint64_t> ended;  ///< whose session_closed came, in order
  ClientHub hub;
};

SharedBuffer text(std::string bytes) {
  return make_buffer(std::move(bytes));
}

}  // namespace

TEST_CASE("client hub: sessions by number, oldest first, and who is in or waits in the teacher's room") {
  Hub h{1s};
  FakeSession& native = h.add(ClientKind::Native);
  FakeSession& reader = h.add(ClientKind::Json);
  FakeSession& web = h.add(ClientKind::WebSocket);
  FakeSession& knocking = h.add(ClientKind::Json);
  knocking.knock(text("full"), steady_now() + 1min);

  CHECK(native.id() == 1);
  CHECK(knocking.id() == 4);
  CHECK(h.hub.size() == 4);
  REQUIRE(h.hub.sessions().size() == 4);
  CHECK(h.hub.sessions().front() == &native);
  CHECK(h.hub.sessions().back() == &knocking);
  CHECK(h.hub.find(2) == &reader);
  CHECK(h.hub.find(9) == nullptr);
  CHECK(h.hub.active(ClientKind::Json) == 1);
  CHECK(h.hub.active(ClientKind::WebSocket) == 1);
  CHECK(h.hub.knocking(ClientKind::Json) == 1);
  CHECK(h.hub.knocking(ClientKind::WebSocket) == 0);

  // A closing session is still found by number until it is forgotten, but
  // is neither live nor counted.
  web.close("left");
  CHECK(h.hub.find(3) == &web);
  CHECK(h.hub.live(3) == nullptr);
  CHECK(h.hub.active(ClientKind::WebSocket) == 0);
  CHECK(h.hub.live(2) == &reader);
  h.hub.forget_closed();
  CHECK(h.hub.find(3) == nullptr);
  CHECK(h.hub.size() == 3);
  CHECK(h.hub.next_id() == 5);
}

TEST_CASE("client hub: a message to everyone is made once per encoding and skips the closing and the knocking") {
  Hub h{1s};
  FakeSession& native = h.add(ClientKind::Native);
  FakeSession& reader = h.add(ClientKind::Json);
  FakeSession& web = h.add(ClientKind::WebSocket);
  FakeSession& knocking = h.add(ClientKind::Json);
  FakeSession& gone = h.add(ClientKind::Json);
  knocking.knock(text("full"), steady_now() + 1min);
  knocking.written.clear();
  gone.close("left");

  std::vector<Encoding> made;
  h.hub.broadcast([&](const Session& session) {
    made.push_back(session.encoding());
    return text(session.encoding() == Encoding::Json ? "{\"type\":\"link\"}\n" : "LINK");
  });
  CHECK(made.size() == 2);
  CHECK(native.written == std::vector<std::string>{"LINK"});
  CHECK(reader.written == std::vector<std::string>{"{\"type\":\"link\"}\n"});
  CHECK(web.written == reader.written);
  CHECK(knocking.written.empty());
  CHECK(gone.written.empty());

  // To some only (those who follow the fleet, say): the same, for those `wants` picks.
  made.clear();
  reader.written.clear();
  web.written.clear();
  h.hub.send_to([&](const Session& session) { return &session == &web; },
                [&](const Session& session) {
                  made.push_back(session.encoding());
                  return text("{\"type\":\"fleet\"}\n");
                });
  CHECK(made.size() == 1);
  CHECK(web.written == std::vector<std::string>{"{\"type\":\"fleet\"}\n"});
  CHECK(reader.written.empty());
}

TEST_CASE("client hub: a sensor message is held for whoever wants it, and the robot's own programs are written first") {
  Hub h{1s};
  FakeSession& reader = h.add(ClientKind::Json);
  FakeSession& native = h.add(ClientKind::Native);
  native.subscribe(0);
  FakeSession& slow = h.add(ClientKind::Json);
  slow.subscribe(1000);  // at most one a second
  FakeSession& knocking = h.add(ClientKind::Json);
  knocking.knock(text("full"), steady_now() + 1min);
  knocking.written.clear();
  h.record.flushes.clear();

  const SteadyTime now = steady_now();
  ClientHub::Encoded encoded;
  int made = 0;
  const auto encode = [&](Encoding encoding) {
    ++made;
    return text(encoding == Encoding::Json ? "json 1" : "native 1");
  };
  h.hub.publish_sensor(encode, now, encoded);
  CHECK(made == 2);
  REQUIRE(encoded[encoding_index(Encoding::Json)]);
  CHECK(*encoded[encoding_index(Encoding::Native)] == "native 1");
  // Held, not written, until the hub flushes.
  CHECK(reader.written.empty());
  CHECK(h.record.flushes.empty());
  CHECK_FALSE(h.hub.flush());
  CHECK(h.record.flushes == std::vector<std::uint64_t>{native.id(), reader.id(), slow.id()});
  CHECK(reader.written == std::vector<std::string>{"json 1"});
  CHECK(native.written == std::vector<std::string>{"native 1"});
  CHECK(knocking.written.empty());

  // 100 ms later: the slow reader's second has not passed; the encodings
  // given are used as they are.
  ClientHub::Encoded again{text("native 2"), text("json 2")};
  h.hub.publish_sensor(encode, now + 100ms, again);
  CHECK(made == 2);
  CHECK_FALSE(h.hub.flush());
  CHECK(reader.written.back() == "json 2");
  CHECK(slow.written == std::vector<std::string>{"json 1"});
}

TEST_CASE("client hub: a turn writes held output for its share, and the rest in the turns after") {
  // A share of no time: each turn writes one batch (eight sessions) between
  // two readings of the clock, then leaves the rest.
  Hub h{0ns};
  std::vector<FakeSession*> sessions;
  for (int i = 0; i < 20; ++i) sessions.push_back(&h.add(ClientKind::Json));
  h.record.flushes.clear();
  ClientHub::Encoded encoded;
  h.hub.publish_sensor([](Encoding /*encoding*/) { return text("reading"); }, steady_now(), encoded);

  h.turning.turn();
  CHECK(h.hub.flush());
  CHECK(h.record.flushes.size() == SendBatch::kCapacity);
  CHECK(h.hub.flush());  // the same turn: nothing more
  CHECK(h.record.flushes.size() == SendBatch::kCapacity);
  h.turning.turn();
  CHECK(h.hub.flush());
  CHECK(h.record.flushes.size() == 2 * SendBatch::kCapacity);
  h.turning.turn();
  CHECK_FALSE(h.hub.flush());
  CHECK(h.record.flushes.size() == 20);
  for (const FakeSession* session : sessions) CHECK(session->written == std::vector<std::string>{"reading"});
}

TEST_CASE("client hub: departures beyond a turn's share end in the turns after, the first ones ahead") {
  Hub h{0ns};
  FakeSession& a = h.add(ClientKind::Json);
  FakeSession& b = h.add(ClientKind::Json);
  FakeSession& c = h.add(ClientKind::Json);
  FakeSession& program = h.add(ClientKind::Native);

  h.turning.turn();
  a.client_left();  // the turn's first: ended at once
  CHECK(h.ended == std::vector<std::uint64_t>{a.id()});
  b.client_left();
  c.client_left();
  program.client_left();  // a program of the robot's own port: ahead of the others
  CHECK(h.ended.size() == 1);
  // One a turn, in the check phase after the loop has polled.
  h.turning.turn();
  CHECK(h.ended == std::vector<std::uint64_t>{a.id(), program.id()});
  h.turning.turn();
  h.turning.turn();
  CHECK(h.ended == std::vector<std::uint64_t>{a.id(), program.id(), b.id(), c.id()});
  CHECK(h.record.closes.front() == "1: disconnected");

  // Forgotten once the Bridge asks, and never ended twice.
  h.hub.forget_closed();
  CHECK(h.hub.size() == 0);
  h.turning.turn();
  CHECK(h.ended.size() == 4);
}

TEST_CASE("client hub: a closed session is not written or ended after, and closing them all closes each once") {
  Hub h{0ns};
  FakeSession& first = h.add(ClientKind::Json);
  FakeSession& closed = h.add(ClientKind::Json);
  FakeSession& leaving = h.add(ClientKind::Json);
  FakeSession& staying = h.add(ClientKind::Native);
  staying.subscribe(0);
  staying.stalled = true;  // its writes wait for its client
  const std::uint64_t staying_id = staying.id();

  h.turning.turn();
  first.client_left();    // the turn's first departure: ended at once
  leaving.client_left();  // waits for a later turn
  ClientHub::Encoded encoded;
  h.hub.publish_sensor([](Encoding /*encoding*/) { return text("reading"); }, steady_now(), encoded);
  // Both closed before their turn came (their connections failed).
  closed.close("its connection failed", Session::CloseKind::Dead);
  leaving.close("its connection failed", Session::CloseKind::Dead);
  CHECK(closed.written.empty());
  CHECK(h.ended == std::vector<std::uint64_t>{1, 2, 3});
  h.hub.forget_closed();
  CHECK(h.hub.size() == 1);

  // The next turn neither writes to them nor ends them again (the sanitizer
  // build would see a session used after it was forgotten).
  h.record.flushes.clear();
  h.turning.turn();
  CHECK_FALSE(h.hub.flush());
  CHECK(h.record.flushes.empty());  // the stalled one's write waits
  CHECK(h.ended == std::vector<std::uint64_t>{1, 2, 3});

  h.hub.close_all("the bridge is stopping");
  CHECK(h.ended == std::vector<std::uint64_t>{1, 2, 3, staying_id});
  CHECK(h.record.closes.back() == "4: the bridge is stopping");
  CHECK(h.record.closes.size() == 4);
  CHECK(h.hub.size() == 0);
  CHECK(h.hub.sessions().empty());
}
