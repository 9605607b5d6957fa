// The broker of the fleet's tests, made with the commands of docs/fleet.md.
#include "support/mqtt_broker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <stdexcept>

namespace flockbridge::testing {
namespace {

void require(bool holds, const std::string& what) {
  if (!holds) throw std::runtime_error(what);
}

/// A port nobody listens on now (the broker takes it a moment later).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  require(fd >= 0, "socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  require(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0, "bind failed");
  socklen_t size = sizeof address;
  require(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0, "getsockname failed");
  ::close(fd);
  return ntohs(address.sin_port);
}

int run(std::vector<std::string> argv) {
  ChildProcess process(std::move(argv), {}, ChildProcess::Program::System);
  return process.wait_exit(std::chrono::seconds(30));
}

}  // namespace

MqttBroker::MqttBroker(const std::vector<std::string>& robots) {
  // The broker as docs/fleet.md sets it up: the example configuration and
  // ACL of deploy/mosquitto/ (in a folder of the test's own instead of
  // /etc/mosquitto/), and flockbridge-mqtt-account for the teacher, the hub,
  // the class and each robot. A student's account of its own has no rights
  // at all.
  const std::string passwords = (directory_ / "passwd").string();
  std::filesystem::copy_file(std::filesystem::path(FLOCKBRIDGE_SOURCE_DIR) / "deploy/mosquitto/flockbridge.acl",
                             acl_file());
  std::vector<std::string> users{"teacher", "hub", "class", "student"};
  users.insert(users.end(), robots.begin(), robots.end());
  for (const std::string& user : users) {
    std::ofstream(password_file(user)) << password(user) << "\n";
    const std::vector<std::string> argv =
        user == "student" ? std::vector<std::string>{"mosquitto_passwd", "-b", passwords, user, password(user)}
                          : std::vector<std::string>{
                                "sh",
                                std::string(FLOCKBRIDGE_SOURCE_DIR) + "/deploy/mosquitto/flockbridge-mqtt-account",
                                "--acl",
                                acl_file().string(),
                                "--passwd",
                                passwords,
                                "--password-file",
                                password_file(user).string(),
                                user};
    require(run(argv) == 0, "cannot make the account " + user);
  }
  start();
}

std::filesystem::path MqttBroker::acl_file() const {
  return directory_ / "flockbridge.acl";
}

std::vector<std::string> MqttBroker::warnings() {
  std::vector<std::string> found;
  for (const std::string& line : process_->lines(ChildProcess::Stream::Stderr)) {
    // The tests run it as root, which it warns of: the robots' brokers do not.
    if (line.find("should not be run as root") != std::string::npos) continue;
    if (line.find("Warning") != std::string::npos || line.find("Error") != std::string::npos) found.push_back(line);
  }
  return found;
}

MqttBroker::~MqttBroker() {
  if (process_) {
    ::kill(process_->pid(), SIGCONT);
    process_->terminate();
  }
}

std::filesystem::path MqttBroker::password_file(const std::string& user) const {
  return directory_ / (user + ".password");
}

std::vector<std::string> MqttBroker::bridge_args(const std::string& robot, double telemetry_hz) const {
  return {"--mqtt",
          "--mqtt-host",
          "127.0.0.1",
          "--mqtt-port",
          std::to_string(port_),
          "--robot-name",
          robot,
          "--mqtt-password-file",
          password_file(robot).string(),
          "--mqtt-telemetry-hz",
          std::to_string(telemetry_hz),
          "--mqtt-reconnect-max-ms",
          "1000"};
}

void MqttBroker::start() {
  // A port taken between the look and the bind is tried again with another.
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (port_ == 0 || attempt > 0) port_ = free_port();
    const auto config = directory_ / "mosquitto.conf";
    std::ofstream out(config);
    // deploy/mosquitto/flockbridge.conf, its port and paths the test's.
    std::ifstream example(std::string(FLOCKBRIDGE_SOURCE_DIR) + "/deploy/mosquitto/flockbridge.conf");
    for (std::string line; std::getline(example, line);) {
      if (line == "listener 1883") line = "listener " + std::to_string(port_) + " 127.0.0.1";
      if (line.starts_with("password_file ")) line = "password_file " + (directory_ / "passwd").string();
      if (line.starts_with("acl_file ")) line = "acl_file " + acl_file().string();
      out << line << "\n";
    }
    out << "persistence false\n"
        << "log_type all\n"
        // Started as root, it would otherwise run as the mosquitto user, which cannot read the test's files.
        << "user root\n";
    out.close();
    process_ = std::make_unique<ChildProcess>(std::vector<std::string>{"mosquitto", "-c", config.string()},
                                              std::vector<std::string>{}, ChildProcess::Program::System);
    if (process_->wait_seen(ChildProcess::Stream::Stderr, " running")) return;
    process_->terminate();
    process_.reset();
  }
  throw std::runtime_error("mosquitto did not start");
}

void MqttBroker::kill() {
  require(process_ != nullptr, "no broker to kill");
  ::kill(process_->pid(), SIGKILL);
  process_->wait_exit();
  process_.reset();
}

void MqttBroker::pause(bool paused) {
  require(process_ != nullptr && ::kill(process_->pid(), paused ? SIGSTOP : SIGCONT) == 0, "cannot signal the broker");
}

std::unique_ptr<ChildProcess> MqttBroker::subscribe(const std::string& user, const std::string& topic) const {
  auto subscriber = std::make_unique<ChildProcess>(
      std::vector<std::string>{"mosquitto_sub", "-h", "127.0.0.1", "-p", std::to_string(port_), "-u", user, "-P",
                               password(user), "-q", "1", "-v", "-d", "-t", topic},
      std::vector<std::string>{}, ChildProcess::Program::System);
  // -d prints the broker's SUBACK: from then on nothing published is missed.
  // (mosquitto_sub writes it out with the first message it prints: a
  // subscription must match one, retained or to come.)
  if (!subscriber->wait_for(ChildProcess::Stream::Stdout, "SUBACK").has_value()) {
    std::string said;
    for (const auto stream : {ChildProcess::Stream::Stdout, ChildProcess::Stream::Stderr}) {
      for (const std::string& line : subscriber->lines(stream)) said += "\n  " + line;
    }
    throw std::runtime_error("mosquitto_sub did not subscribe as " + user + ":" + said);
  }
  return subscriber;
}

int MqttBroker::publish(const std::string& user, const std::string& topic, const std::string& payload,
                        bool retain) const {
  std::vector<std::string> argv{"mosquitto_pub",
                                "-h",
                                "127.0.0.1",
                                "-p",
                                std::to_string(port_),
                                "-u",
                                user,
                                "-P",
                                password(user),
                                "-q",
                                "1",
                                "-t",
                                topic,
                                "-m",
                                payload};
  if (retain) argv.emplace_back("-r");
  return run(argv);
}

}  // namespace flockbridge::testing
