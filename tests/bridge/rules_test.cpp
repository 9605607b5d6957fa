// Who may drive (docs/clients.md, "Who may drive" and "Safety"), through the
// real Bridge on a loop of its own in this process, with a fake driver in
// place of a robot: JSON clients and a program on the robot's own port on
// loopback, no child process, no sleeps.
// Each step waits for the answer it expects, as a client would, while the
// loop runs; the fake driver records what reached the "robot".
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/bridge.hpp"
#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/log.hpp"

using namespace flockbridge;
using nlohmann::json;

namespace {

/// A program on the fake robot's own port: it sends commands as lines of
/// text ("GO", "ST"), which go to the robot as they are.
class FakeNativeClient final : public bridge::NativeClient {
 public:
  void feed(protocol::ByteView bytes, protocol::SteadyTime /*now*/) override {
    partial_.append(bytes.begin(), bytes.end());
  }
  [[nodiscard]] std::optional<bridge::NativeInput> next() override {
    const std::size_t end = partial_.find('\n');
    if (end == std::string::npos) return std::nullopt;
    protocol::Bytes payload(partial_.begin(), partial_.begin() + static_cast<std::ptrdiff_t>(end));
    partial_.erase(0, end + 1);
    return bridge::NativeInput{protocol::ClientRequest{protocol::SendCommand{std::move(payload)}}};
  }
  [[nodiscard]] std::size_t expire(protocol::SteadyTime /*now*/, std::chrono::milliseconds /*timeout*/) override {
    return 0;
  }
  [[nodiscard]] bool admit(std::string_view /*message*/, bridge::MessageOrigin /*origin*/) override { return false; }
  [[nodiscard]] bool exclusive_control() const noexcept override { return false; }

 private:
  std::string partial_;
};

/// A robot that takes "drive", "stop" and "emergency", is always linked, and
/// remembers every command that reached it and every stop the bridge sent.
/// With a native port, its programs send the same commands as text lines.
class FakeDriver final : public bridge::RobotDriver {
 public:
  FakeDriver(uv_loop_t* /*loop*/, const bridge::Config& /*config*/, Host& host) : host_(host) { last = this; }
  ~FakeDriver() override {
    if (last == this) last = nullptr;
  }
  FakeDriver(const FakeDriver&) = delete;
  FakeDriver& operator=(const FakeDriver&) = delete;

  static std::unique_ptr<bridge::RobotDriver> make(uv_loop_t* loop, const bridge::Config& config, Host& host) {
    return std::make_unique<FakeDriver>(loop, config, host);
  }
  static std::unique_ptr<bridge::RobotDriver> make_with_native_port(uv_loop_t* loop, const bridge::Config& config,
                                                                    Host& host) {
    auto driver = std::make_unique<FakeDriver>(loop, config, host);
    driver->native_port_ = true;
    return driver;
  }
  /// The driver the last bridge made.
  static inline FakeDriver* last = nullptr;

  [[nodiscard]] std::string_view family() const noexcept override { return "fake"; }
  [[nodiscard]] std::string_view model() const noexcept override { return "fake"; }
  [[nodiscard]] std::span<const std::string> commands() const noexcept override { return commands_; }
  [[nodiscard]] protocol::Result<protocol::Done> start() override {
    push(bridge::driver_event::LinkChanged{protocol::LinkState::Up, {}});
    return protocol::Done{};
  }
  void stop() override {}
  [[nodiscard]] std::optional<bridge::DriverEvent> next_event() override {
    if (events_.empty()) return std::nullopt;
    bridge::DriverEvent event = std::move(events_.front());
    events_.pop_front();
    return event;
  }
  [[nodiscard]] std::unique_ptr<bridge::NativeClient> make_native_client() override {
    return std::make_unique<FakeNativeClient>();
  }
  /// Without a native port, no programs of its own.
  [[nodiscard]] std::size_t native_client_limit() const noexcept override { return native_port_ ? 4 : 0; }
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& /*object*/) const override {
    if (cmd == "drive") return protocol::Bytes{'G', 'O'};
    if (cmd == "stop") return protocol::Bytes{'S', 'T'};
    if (cmd == "emergency") return protocol::Bytes{'E', 'M'};
    return protocol::Error{"unknown command '" + std::string(cmd) + "'"};
  }
  [[nodiscard]] bridge::MotionEffect motion_effect(protocol::ByteView command) const override {
    const std::string text(command.begin(), command.end());
    if (text == "GO") return {.stops = false, .motion = true, .keeps_moving = true, .emergency = false};
    return {.stops = true, .motion = false, .keeps_moving = false, .emergency = text == "EM"};
  }
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override {
    received.emplace_back(command.begin(), command.end());
    push(bridge::driver_event::CommandDone{token, std::nullopt, true});
    return protocol::Done{};
  }
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override {
    received.emplace_back("reset pose");
    push(bridge::driver_event::CommandDone{token, std::nullopt, std::nullopt});
    return protocol::Done{};
  }
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override { return geometry_; }
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override { return nlohmann::ordered_json::object(); }
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken /*token*/) override {
    received.emplace_back("safety stop");
    return protocol::Done{};
  }
  [[nodiscard]] protocol::LinkState link_state() const noexcept override { return protocol::LinkState::Up; }
  [[nodiscard]] const std::string& link_reason() const noexcept override { return reason_; }
  void add_stats(protocol::StatsSnapshot& snapshot) const override { snapshot.link_state = protocol::LinkState::Up; }
  void reload(const bridge::Config& /*config*/) override {}

  /// What reached the robot, oldest first: "GO", "ST", "EM", "safety stop".
  std::vector<std::string> received;

 private:
  void push(bridge::DriverEvent event) {
    events_.push_back(std::move(event));
    host_.driver_has_events();
  }

  Host& host_;
  std::deque<bridge::DriverEvent> events_;
  std::vector<std::string> commands_{"drive", "stop", "emergency"};
  protocol::RobotGeometry geometry_;
  std::string reason_;
  bool native_port_ = false;
};

/// Starts connecting `fd` to 127.0.0.1:`port` (it completes as the loop runs).
void connect_to(int fd, std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
}

/// The bridge with the fake robot, on a loop of its own.
class Classroom {
 public:
  explicit Classroom(const bridge::AccessSettings& access = {}, bridge::DriverFactory make = &FakeDriver::make) {
    bridge::set_log_level(bridge::LogLevel::Error);
    REQUIRE(uv_loop_init(&loop_) == 0);
    bridge::Config config = bridge::settings_table().defaults();
    config.bind = "127.0.0.1";
    config.json_port = 0;
    config.native_port = 0;
    config.http = false;
    config.mdns_service_file.clear();
    config.access = access;
    bridge_ = std::make_unique<bridge::Bridge>(&loop_, config, make, bridge::settings_table());
    REQUIRE(bridge_->start());
    REQUIRE(FakeDriver::last != nullptr);
  }
  Classroom(const Classroom&) = delete;
  Classroom& operator=(const Classroom&) = delete;
  ~Classroom() {
    bridge_->stop();
    uv_run(&loop_, UV_RUN_DEFAULT);
    bridge_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop_) == 0);
  }

  /// What reached the robot so far.
  [[nodiscard]] const std::vector<std::string>& robot() const { return FakeDriver::last->received; }

  /// Runs the loop until `done` holds: each turn waits for the loop's or
  /// `client`'s next event (poll on both descriptors), never for a time.
  template <typename Done>
  bool run_until(int client, Done done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      uv_run(&loop_, UV_RUN_NOWAIT);
      if (done()) return true;
      std::array<pollfd, 2> fds{pollfd{uv_backend_fd(&loop_), POLLIN, 0}, pollfd{client, POLLIN, 0}};
      const int timeout = uv_backend_timeout(&loop_);
      ::poll(fds.data(), client >= 0 ? 2 : 1, timeout < 0 ? 1000 : std::min(timeout, 1000));
    }
    return true;
  }

  /// A program on the robot's own port: it writes, and reads nothing.
  class Program {
   public:
    explicit Program(Classroom& room) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) {
      const std::size_t before = room.bridge_->client_count();
      connect_to(fd_, room.bridge_->native_port());
      REQUIRE(room.run_until(-1, [&] { return room.bridge_->client_count() > before; }));
    }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    ~Program() { ::close(fd_); }
    void send(const std::string& line) {
      const std::string bytes = line + "\n";
      REQUIRE(::write(fd_, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    }

   private:
    int fd_;
  };

  /// A JSON client of this bridge.
  class Client {
   public:
    explicit Client(Classroom& room) : room_(room), fd_(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) {
      connect_to(fd_, room.bridge_->json_port());
      hello = next("hello");
    }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client() { leave(); }

    /// Sends a command with an id and returns the answer to it (ok, error, or the command's own reply).
    json ask(json command) {
      command["id"] = ++last_id_;
      const std::string line = command.dump() + "\n";
      REQUIRE(::write(fd_, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
      const int id = last_id_;
      return take([&](const json& m) { return m.contains("id") && m["id"] == id; });
    }
    /// The next message of `type`, skipping others.
    json next(const std::string& type) {
      return take([&](const json& m) { return m["type"] == type; });
    }
    /// The next message of `type` whose `key` is `value`, skipping others.
    json next(const std::string& type, const std::string& key, const json& value) {
      return take([&](const json& m) { return m["type"] == type && m.contains(key) && m[key] == value; });
    }
    /// Closes the connection and waits until the bridge has seen it go.
    void leave() {
      if (fd_ < 0) return;
      const std::size_t before = room_.bridge_->client_count();
      ::close(fd_);
      fd_ = -1;
      REQUIRE(room_.run_until(-1, [&] { return room_.bridge_->client_count() < before; }));
    }
    json hello;

   private:
    template <typename Match>
    json take(Match match) {
      json found;
      const bool got = room_.run_until(fd_, [&] {
        read_some();
        for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
          if (match(*it)) {
            found = *it;
            inbox_.erase(it);
            return true;
          }
        }
        return false;
      });
      REQUIRE_MESSAGE(got, "no such message came");
      return found;
    }
    void read_some() {
      char buffer[4096];
      for (ssize_t n; (n = ::read(fd_, buffer, sizeof buffer)) > 0;)
        partial_.append(buffer, static_cast<std::size_t>(n));
      for (std::size_t end; (end = partial_.find('\n')) != std::string::npos; partial_.erase(0, end + 1)) {
        inbox_.push_back(json::parse(partial_.substr(0, end)));
      }
    }

    Classroom& room_;
    int fd_;
    int last_id_ = 0;
    std::string partial_;
    std::deque<json> inbox_;
  };

 private:
  uv_loop_t loop_{};
  std::unique_ptr<bridge::Bridge> bridge_;
};

using Client = Classroom::Client;
using Program = Classroom::Program;

bool ok(const json& answer) {
  return answer["type"] == "ok";
}
std::string code(const json& answer) {
  return answer.value("code", std::string("(no error)"));
}

bridge::AccessSettings with_pin(bool teacher = true) {
  bridge::AccessSettings access;
  access.driver_pin = "4711";
  if (teacher) access.teacher_secret = "chalk";
  return access;
}

using RobotNames = std::vector<std::string>;

}  // namespace

TEST_CASE("without a PIN anyone drives, one at a time: the first to move holds the lease") {
  Classroom room;
  Client alice(room);
  Client bob(room);
  CHECK(alice.hello["role"] == "driver");
  CHECK(ok(alice.ask({{"cmd", "drive"}})));
  CHECK(alice.next("lease")["holder"]["client"] == alice.hello["client"]);
  const json refused = bob.ask({{"cmd", "drive"}});
  CHECK(code(refused) == "busy");
  CHECK(refused["error"].get<std::string>().find("drives the robot") != std::string::npos);
  CHECK(ok(bob.ask({{"cmd", "stop"}})));  // stopping is anyone's
  CHECK(ok(alice.ask({{"cmd", "drive"}})));
  CHECK(room.robot() == RobotNames{"GO", "ST", "GO"});
}

TEST_CASE("the holder releases control or leaves: the robot is stopped and the next may drive") {
  Classroom room;
  Client alice(room);
  Client bob(room);
  REQUIRE(ok(alice.ask({{"cmd", "drive"}})));
  CHECK(ok(alice.ask({{"cmd", "release"}})));
  CHECK(bob.next("lease", "holder", nullptr)["reason"].get<std::string>().find("gave up control") != std::string::npos);
  CHECK(room.robot() == RobotNames{"GO", "safety stop"});
  REQUIRE(ok(bob.ask({{"cmd", "drive"}})));
  bob.leave();
  CHECK(alice.next("safety_stop")["reason"].get<std::string>().find("which drove the robot") != std::string::npos);
  CHECK(room.robot() == RobotNames{"GO", "safety stop", "GO", "safety stop"});
  CHECK(ok(alice.ask({{"cmd", "drive"}})));
}

TEST_CASE("with a PIN a client watches and stops until it signs in, and a wrong PIN changes nothing") {
  Classroom room(with_pin());
  Client viewer(room);
  CHECK(viewer.hello["role"] == "viewer");
  CHECK(code(viewer.ask({{"cmd", "drive"}})) == "denied");
  CHECK(ok(viewer.ask({{"cmd", "stop"}})));
  CHECK(code(viewer.ask({{"cmd", "auth"}, {"pin", "1234"}})) == "denied");
  CHECK(code(viewer.ask({{"cmd", "drive"}})) == "denied");
  CHECK(viewer.ask({{"cmd", "auth"}, {"pin", "4711"}})["role"] == "driver");
  CHECK(ok(viewer.ask({{"cmd", "drive"}})));
  CHECK(room.robot() == RobotNames{"ST", "GO"});
}

TEST_CASE("the teacher takes control at once, the robot stopped first, and a driver can only ask") {
  Classroom room(with_pin());
  Client alice(room);
  Client bob(room);
  Client teacher(room);
  REQUIRE(alice.ask({{"cmd", "auth"}, {"pin", "4711"}})["role"] == "driver");
  REQUIRE(bob.ask({{"cmd", "auth"}, {"pin", "4711"}})["role"] == "driver");
  REQUIRE(teacher.ask({{"cmd", "auth"}, {"teacher", "chalk"}})["role"] == "teacher");
  REQUIRE(ok(alice.ask({{"cmd", "drive"}})));
  // A driver asks the holder to hand over; nothing changes until it does.
  CHECK(ok(bob.ask({{"cmd", "take"}})));
  CHECK(alice.next("lease_request")["client"] == bob.hello["client"]);
  CHECK(code(bob.ask({{"cmd", "drive"}})) == "busy");
  // The teacher takes it.
  CHECK(ok(teacher.ask({{"cmd", "take"}})));
  const json taken = alice.next("safety_stop");
  CHECK(taken["reason"].get<std::string>().find("taken over by the teacher") != std::string::npos);
  CHECK(code(alice.ask({{"cmd", "drive"}})) == "busy");
  CHECK(ok(teacher.ask({{"cmd", "drive"}})));
  CHECK(room.robot() == RobotNames{"GO", "safety stop", "GO"});
}

TEST_CASE("an emergency stop latches: no motion from anyone until the teacher clears it") {
  Classroom room(with_pin());
  Client driver(room);
  Client teacher(room);
  REQUIRE(driver.ask({{"cmd", "auth"}, {"pin", "4711"}})["role"] == "driver");
  REQUIRE(teacher.ask({{"cmd", "auth"}, {"teacher", "chalk"}})["role"] == "teacher");
  REQUIRE(ok(driver.ask({{"cmd", "drive"}})));
  CHECK(ok(driver.ask({{"cmd", "emergency"}})));
  const json latch = teacher.next("emergency_latch");
  CHECK(latch["latched"] == true);
  CHECK(latch["may_clear"] == json::array({"teacher"}));
  CHECK(code(driver.ask({{"cmd", "drive"}})) == "latched");
  CHECK(code(teacher.ask({{"cmd", "drive"}})) == "latched");
  CHECK(code(driver.ask({{"cmd", "clear_emergency"}})) == "denied");  // a teacher is set: theirs to clear
  CHECK(ok(driver.ask({{"cmd", "stop"}})));                           // stops always go
  CHECK(ok(teacher.ask({{"cmd", "clear_emergency"}})));
  CHECK(driver.next("emergency_latch", "latched", false)["by"]["client"] == teacher.hello["client"]);
  CHECK(ok(driver.ask({{"cmd", "drive"}})));
  CHECK(room.robot() == RobotNames{"GO", "EM", "ST", "GO"});
}

TEST_CASE("with no teacher secret set a driver clears the latch, and a viewer never does") {
  Classroom room(with_pin(false));
  Client driver(room);
  Client viewer(room);
  REQUIRE(driver.ask({{"cmd", "auth"}, {"pin", "4711"}})["role"] == "driver");
  CHECK(ok(viewer.ask({{"cmd", "emergency"}})));  // anyone may stop the robot
  CHECK(code(viewer.ask({{"cmd", "clear_emergency"}})) == "denied");
  CHECK(code(driver.ask({{"cmd", "drive"}})) == "latched");
  CHECK(ok(driver.ask({{"cmd", "clear_emergency"}})));
  CHECK(ok(driver.ask({{"cmd", "drive"}})));
  CHECK(room.robot() == RobotNames{"EM", "GO"});
}

TEST_CASE(
    "with a PIN a program on the robot's own port waits to be approved: it may stop, and only a driver approves") {
  Classroom room(with_pin(), &FakeDriver::make_with_native_port);
  Program program(room);
  // Waiting, its motion is withheld and its stop goes: in order, so the stop's
  // arrival shows the motion was dealt with first.
  program.send("GO");
  program.send("ST");
  REQUIRE(room.run_until(-1, [&] { return !room.robot().empty(); }));
  CHECK(room.robot() == RobotNames{"ST"});

  // Whoever connects is told who waits; a viewer cannot approve.
  Client viewer(room);
  const json waiting = viewer.next("pairing");
  REQUIRE(waiting["waiting"].size() == 1);
  const std::uint64_t id = waiting["waiting"][0]["client"];
  CHECK(code(viewer.ask({{"cmd", "approve"}, {"client", id}})) == "denied");

  Client driver(room);
  REQUIRE(ok(driver.ask({{"cmd", "auth"}, {"pin", "4711"}})));
  REQUIRE(ok(driver.ask({{"cmd", "approve"}, {"client", id}})));
  CHECK(viewer.next("pairing")["waiting"].empty());
  CHECK(code(driver.ask({{"cmd", "approve"}, {"client", id}})) != "(no error)");  // once

  // Approved, it drives as on an open port.
  program.send("GO");
  REQUIRE(room.run_until(-1, [&] { return room.robot().size() == 2; }));
  CHECK(room.robot() == RobotNames{"ST", "GO"});
}
