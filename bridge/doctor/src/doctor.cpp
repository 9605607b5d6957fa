#include "flockbridge/bridge/doctor/doctor.hpp"

#include <arpa/inet.h>
#include <grp.h>
#include <mosquitto.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/timex.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/autodetect/driver.hpp"
#include "flockbridge/bridge/cli.hpp"
#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/fleet.hpp"
#include "flockbridge/bridge/serial_candidates.hpp"
#include "flockbridge/bridge/serial_prober.hpp"
#include "system.hpp"

namespace flockbridge::bridge::doctor {

namespace fs = std::filesystem;

namespace {

/// The service as systemd has it.
struct Service {
  bool systemd = false;    ///< systemd answered
  bool installed = false;  ///< the unit is known
  bool running = false;
  pid_t pid = 0;
  std::string user;                 ///< User=; empty: root, or a DynamicUser
  std::vector<std::string> groups;  ///< what the service's user may open as: its groups and SupplementaryGroups
  bool devices_closed = false;      ///< DevicePolicy=closed or strict: only DeviceAllow='s devices
  std::vector<std::string> device_allow;
};

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

class Checkup {
 public:
  explicit Checkup(const BridgeCommandLine& line) : line_(line), config_(line.config) {}

  std::vector<Finding> run() {
    configuration();
    const Service service = this->service();
    serial(service);
    ports();
    clock();
    disk();
    broker();
    udev();
    return std::move(findings_);
  }

 private:
  void well(std::string topic, std::string said) {
    findings_.push_back({Verdict::Well, std::move(topic), std::move(said), {}});
  }
  void note(std::string topic, std::string said) {
    findings_.push_back({Verdict::Note, std::move(topic), std::move(said), {}});
  }
  void problem(std::string topic, std::string said, std::string fix) {
    findings_.push_back({Verdict::Problem, std::move(topic), std::move(said), std::move(fix)});
  }

  void configuration() {
    const std::string& file = line_.sources.file;
    if (line_.config_error) {
      problem("configuration",
              (file.empty() ? "the options" : file) + " cannot be used:\n" + line_.config_error->message,
              "mend what each line says" + (file.empty() ? std::string{} : " in " + file) +
                  "; `flockbridge --print-config` shows what is in force once it loads");
    } else if (file.empty()) {
      well("configuration", "no configuration file: every setting is its default or the options'");
    } else if (!fs::exists(file)) {
      well("configuration", "no " + file + ": every setting is its default");
    } else {
      well("configuration", file + " reads without errors");
    }
  }

  Service service() {
    Service service;
    const auto properties = unit_properties("flockbridge.service");
    if (!properties) {
      note("the service", "systemd does not answer here: the flockbridge service is not checked");
      return service;
    }
    service.systemd = true;
    const auto value = [&](const std::string& key) {
      const auto found = properties->find(key);
      return found == properties->end() ? std::string{} : found->second;
    };
    if (value("LoadState") == "not-found" || value("LoadState").empty()) {
      problem("the service", "the flockbridge service is not installed",
              "install the package (docs/deployment.md); by hand: sudo dpkg -i flockbridge_*.deb");
      return service;
    }
    service.installed = true;
    service.user = value("User");
    service.groups = words(value("SupplementaryGroups"));
    if (!service.user.empty()) {
      for (std::string& group : groups_of(service.user)) service.groups.push_back(std::move(group));
    }
    const std::string policy = value("DevicePolicy");
    service.devices_closed = policy == "closed" || policy == "strict";
    std::istringstream allowed(value("DeviceAllow"));
    for (std::string line; std::getline(allowed, line);) {
      if (!line.empty()) service.device_allow.push_back(line);
    }
    const std::string state = value("ActiveState");
    const std::string sub = value("SubState");
    if (state == "active") {
      service.running = true;
      service.pid = static_cast<pid_t>(std::stol("0" + value("MainPID")));
      well("the service", "running (pid " + std::to_string(service.pid) + ")");
    } else if (state == "failed" || sub == "auto-restart") {
      problem(
          "the service",
          std::string(state == "failed" ? "failed" : "restarting after a failure, again and again") + " (result " +
              value("Result") + ", exit status " + value("ExecMainStatus") + ")",
          "`journalctl -u flockbridge -n 50 --no-pager` says why; mend it, then: sudo systemctl restart flockbridge");
    } else {
      problem("the service", "not running (" + state + (sub.empty() ? "" : ", " + sub) + ")",
              "sudo systemctl enable --now flockbridge");
    }
    return service;
  }

  /// Whether the service may open a device of this mode and owner; the reason when not.
  std::optional<std::string> refused_by_permissions(const Service& service, const struct stat& info) {
    const bool world = (info.st_mode & S_IROTH) != 0 && (info.st_mode & S_IWOTH) != 0;
    const group* owner_group = ::getgrgid(info.st_gid);
    const std::string group_name = owner_group != nullptr ? owner_group->gr_name : std::to_string(info.st_gid);
    const bool by_group = (info.st_mode & S_IRGRP) != 0 && (info.st_mode & S_IWGRP) != 0 &&
                          std::find(service.groups.begin(), service.groups.end(), group_name) != service.groups.end();
    const passwd* user = service.user.empty() ? nullptr : ::getpwnam(service.user.c_str());
    const bool by_owner = user != nullptr && user->pw_uid == info.st_uid && (info.st_mode & S_IRUSR) != 0 &&
                          (info.st_mode & S_IWUSR) != 0;
    if (world || by_group || by_owner) return std::nullopt;
    const passwd* owner = ::getpwuid(info.st_uid);
    std::string groups;
    for (const std::string& g : service.groups) groups += (groups.empty() ? "" : ", ") + g;
    return "the service may not open it: it is " + std::string(owner != nullptr ? owner->pw_name : "?") + ":" +
           group_name + " " + mode_text(info.st_mode) + ", and the service's groups are " +
           (groups.empty() ? "none" : groups);
  }

  std::optional<std::string> refused_by_device_policy(const Service& service, const struct stat& info,
                                                      const std::string& device, std::string& driver) {
    driver = char_driver_name(major(info.st_rdev));
    if (!service.devices_closed) return std::nullopt;
    for (const std::string& entry : service.device_allow) {
      const std::vector<std::string> parts = words(entry);
      const std::string first = parts.empty() ? std::string{} : parts.front();
      if (first == "char-" + driver || first == device) return std::nullopt;
    }
    return "the unit's DeviceAllow= lets the service open no char-" + driver + " device";
  }

  void serial(const Service& service) {
    if (config_.simulate) {
      well("serial devices", "the robot is simulated (simulator.enabled): no serial device is needed");
      return;
    }
    if (config_.device.starts_with("tcp:")) {
      well("serial devices", "the robot is reached at " + config_.device + ": no serial device is needed");
      return;
    }
    const CandidateScan scan = autodetect::search_scan(config_, robot_families());
    if (config_.device != kAnyDevice) {
      if (!fs::exists(config_.device)) {
        problem("serial device " + config_.device, "it does not exist (serial.device)",
                "plug the robot in; `dmesg | tail` says what the kernel made of its adapter; or let the bridge find "
                "it: --device auto");
        return;
      }
    }
    const std::vector<std::string> devices = serial_candidates(scan);
    if (devices.empty()) {
      problem("serial devices", "none on " + config_.serial_search,
              "plug the robot in; `dmesg | tail` says what the kernel made of its adapter; a board's own UART is "
              "looked at only when serial.search names it (/dev/ttyAMA* /dev/ttyS*)");
      return;
    }
    struct Unanswered {
      std::string device;
      std::string said;
    };
    std::vector<Unanswered> unanswered;
    bool robot = false;
    for (const std::string& device : devices) {
      const std::string topic = "serial device " + device;
      std::error_code error;
      const fs::path node = fs::canonical(device, error);
      struct stat info {};
      if (error || ::stat(node.c_str(), &info) != 0) continue;  // gone meanwhile
      std::string driver;
      if (service.installed) {
        if (auto refused = refused_by_permissions(service, info)) {
          problem(topic, *refused,
                  "install the package's udev rules (deploy/98-flockbridge-serial.rules gives USB serial adapters "
                  "the group dialout), or add the device's group to the unit: sudo systemctl edit flockbridge, "
                  "[Service] SupplementaryGroups=GROUP");
        }
        if (auto refused = refused_by_device_policy(service, info, device, driver)) {
          problem(topic, *refused,
                  "sudo systemctl edit flockbridge, and add: [Service] DeviceAllow=char-" + driver + " rw");
        }
      }
      const std::vector<Process> holders = holders_of(node);
      // The running bridge: the service's, or (with no service to ask) any flockbridge.
      const auto bridge = std::find_if(holders.begin(), holders.end(), [&](const Process& p) {
        return service.running ? p.pid == service.pid : p.name == "flockbridge";
      });
      if (bridge != holders.end()) {
        well(topic, "served by the running bridge (pid " + std::to_string(bridge->pid) + ")");
        robot = true;
        continue;
      }
      if (!holders.empty()) {
        for (const Process& holder : holders) {
          problem(topic,
                  "held by " + (holder.name == "flockbridge" ? std::string("a second bridge") : holder.name) +
                      " (pid " + std::to_string(holder.pid) + ")",
                  fix_for(holder, node));
        }
        continue;
      }
      const auto outcome = probe_device(device, make_probes(robot_families()));
      if (!outcome) {
        unanswered.push_back({device, "it cannot be looked at"});
      } else if (!outcome->family.empty()) {
        robot = true;
        well(topic, outcome->robot_text() + " answered at " + std::to_string(outcome->baud) + " baud in " +
                        outcome->took_text() + ": " + outcome->finding.evidence);
        if (config_.family != kAnyFamily && config_.family != outcome->family) {
          problem(topic, "robot.family is " + config_.family + ", but a " + outcome->family + " robot answered here",
                  "--robot " + outcome->family + " (robot.family = \"" + outcome->family +
                      "\"), or let the bridge find out: --robot auto");
        }
      } else {
        unanswered.push_back(
            {device, std::string(outcome->heard ? "it talks, but as no robot does" : "no robot answered") + " (" +
                         outcome->why_not + ")"});
      }
    }
    for (const Unanswered& each : unanswered) {
      if (robot) {
        note("serial device " + each.device, each.said);
      } else {
        problem("serial device " + each.device, each.said,
                "check that the robot is switched on and its cable plugged in; a device that is no robot (a GPS "
                "receiver) can be left out of serial.search");
      }
    }
  }

  std::string fix_for(const Process& holder, const fs::path& node) {
    if (holder.name == "ModemManager") {
      return "install deploy/98-flockbridge-serial.rules (it tells ModemManager to leave robots' adapters alone), "
             "or: sudo systemctl disable --now ModemManager";
    }
    if (holder.name.find("getty") != std::string::npos) {
      return "a login console runs on it: sudo systemctl disable --now serial-getty@" + node.filename().string() +
             ".service (on a Raspberry Pi: raspi-config, Interface Options, Serial Port: no login shell)";
    }
    if (holder.name == "flockbridge") {
      return "a second bridge, beside the service's: stop it (sudo kill " + std::to_string(holder.pid) +
             "); one bridge serves a robot";
    }
    return "stop " + holder.name + " (pid " + std::to_string(holder.pid) +
           "), or leave this device out of serial.search";
  }

  void ports() {
    struct Port {
      std::uint16_t number;
      std::string setting;
      std::string option;
    };
    std::vector<Port> ports;
    if (config_.native_port_follows_family) {
      for (const RobotFamily* family : robot_families()) {
        if (family->native_port != 0) {
          ports.push_back({family->native_port, "native.port (a " + std::string(family->name) + "'s)", "--port"});
        }
      }
    } else {
      ports.push_back({config_.native_port, "native.port", "--port"});
    }
    ports.push_back({config_.json_port, "json.port", "--json-port"});
    if (config_.http) ports.push_back({config_.http_port, "http.port", "--http-port"});
    for (const Port& port : ports) {
      if (port.number == 0) continue;
      const std::string topic = "port " + std::to_string(port.number);
      const auto holder = listener_of(port.number);
      if (!holder) {
        well(topic, "free for the bridge (" + port.setting + ")");
      } else if (holder->name == "flockbridge") {
        well(topic, "the bridge listens there (pid " + std::to_string(holder->pid) + ", " + port.setting + ")");
        if (port.setting == "json.port") running_bridge(port.number);
      } else {
        problem(topic,
                "taken by " + (holder->name.empty() ? std::string("another program") : holder->name) +
                    (holder->pid != 0 ? " (pid " + std::to_string(holder->pid) + ")" : "") +
                    ": the bridge cannot listen there (" + port.setting + ")",
                "stop that program, or move the bridge: " + port.option + " PORT");
      }
    }
  }

  /// What the running bridge says of its robot, in its hello.
  void running_bridge(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string line;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      std::array<char, 4096> buffer{};
      while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
        pollfd ready{fd, POLLIN, 0};
        if (::poll(&ready, 1, 200) <= 0) continue;
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n <= 0) break;
        line.append(buffer.data(), static_cast<std::size_t>(n));
      }
    }
    ::close(fd);
    const auto hello = nlohmann::json::parse(line.substr(0, line.find('\n')), nullptr, false);
    if (!hello.is_object() || hello.value("type", "") != "hello") return;
    const std::string robot = hello.value("robot", "?");
    const std::string link = hello.value("link", "?");
    if (link == "up") {
      well("the robot",
           "the running bridge serves a " + robot + " robot (" + hello.value("model", "") + "), its link up");
    } else {
      problem("the robot", "the running bridge's robot link is " + link + ": " + hello.value("reason", ""),
              "the reason says what to do; the serial devices' findings say what is on each");
    }
  }

  void clock() {
    if (const auto shown = run_program({"timedatectl", "show", "--property=NTPSynchronized", "--value"});
        shown && shown->succeeded && !shown->out.empty()) {
      if (shown->out.starts_with("yes")) {
        well("the clock", "synchronised (timedatectl)");
      } else {
        problem("the clock", "not synchronised: recordings and the log carry times that may be wrong",
                "sudo timedatectl set-ntp true; a classroom network that blocks NTP needs a server of its own: "
                "NTP= in /etc/systemd/timesyncd.conf");
      }
      return;
    }
    timex state{};
    const int result = ::adjtimex(&state);
    if (result == TIME_ERROR || (state.status & STA_UNSYNC) != 0) {
      problem("the clock", "not synchronised (the kernel says so): recordings carry times that may be wrong",
              "run a time service: sudo apt-get install systemd-timesyncd, then sudo timedatectl set-ntp true");
    } else {
      well("the clock", "synchronised (the kernel says so)");
    }
  }

  void disk() {
    const fs::path directory = config_.record.directory;
    const std::string topic = "recordings " + directory.string();
    fs::path existing = directory;
    std::error_code error;
    while (!existing.empty() && !fs::exists(existing, error) && existing != existing.root_path()) {
      existing = existing.parent_path();
    }
    if (!fs::is_directory(existing, error)) {
      problem(topic, existing.string() + " is no folder: the bridge cannot record there",
              "set record.directory to a folder on a disk with room (--record DIR)");
      return;
    }
    if (::access(existing.c_str(), W_OK) != 0) {
      problem(topic, existing.string() + " cannot be written to",
              "set record.directory to a folder the service may write");
      return;
    }
    struct statvfs space {};
    if (::statvfs(existing.c_str(), &space) != 0) return;
    const std::uint64_t free_mb =
        static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize / (std::uint64_t{1024} * 1024);
    const std::uint64_t wanted_mb = std::min<std::uint64_t>(config_.record.total_mb, 512);
    if (free_mb < wanted_mb) {
      problem(topic,
              "only " + std::to_string(free_mb) + " MB free (recordings may hold record.total_mb, " +
                  std::to_string(config_.record.total_mb) + " MB)",
              "free space there, lower record.total_mb, or set record.directory on a bigger disk");
    } else {
      well(topic, std::to_string(free_mb) + " MB free");
    }
  }

  void broker() {
    const FleetMqttSettings& mqtt = config_.mqtt;
    if (!mqtt.enabled) {
      well("the class's broker", "MQTT is off (mqtt.enabled): the robot joins no class hub");
      return;
    }
    const std::string where = mqtt.host + ":" + std::to_string(mqtt.port);
    std::string username = mqtt.username;
    std::string password;
    if (!mqtt.password_file.empty()) {
      auto read = read_password(mqtt.password_file);
      if (!read) {
        problem("the class's broker", read.error().message, "make the file, readable by the service (mode 0640)");
        return;
      }
      password = std::move(read).value();
      if (username.empty()) username = mqtt.robot_name.empty() ? default_robot_name() : mqtt.robot_name;
    }
    mosquitto_lib_init();
    struct Answer {
      bool came = false;
      int code = -1;
    } answer;
    mosquitto* client = mosquitto_new(nullptr, true, &answer);
    if (!username.empty())
      mosquitto_username_pw_set(client, username.c_str(), password.empty() ? nullptr : password.c_str());
    mosquitto_connect_callback_set(client, [](mosquitto*, void* data, int code) {
      auto* told = static_cast<Answer*>(data);
      told->came = true;
      told->code = code;
    });
    const int connected = mosquitto_connect(client, mqtt.host.c_str(), mqtt.port, 10);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (connected == MOSQ_ERR_SUCCESS && !answer.came && std::chrono::steady_clock::now() < deadline) {
      if (mosquitto_loop(client, 100, 1) != MOSQ_ERR_SUCCESS) break;
    }
    mosquitto_disconnect(client);
    mosquitto_destroy(client);
    mosquitto_lib_cleanup();
    const std::string account = username.empty() ? "no account" : "the account " + username;
    if (connected != MOSQ_ERR_SUCCESS || !answer.came) {
      problem(
          "the class's broker", "cannot reach " + where,
          "is the broker running there (sudo systemctl status mosquitto on the hub)? Check mqtt.host and mqtt.port");
    } else if (answer.code != 0) {
      problem("the class's broker", where + " refused " + account + ": " + mosquitto_connack_string(answer.code),
              "check mqtt.username and mqtt.password_file against the broker's password file (docs/fleet.md)");
    } else {
      well("the class's broker", where + " takes " + account);
    }
  }

  void udev() {
    const std::array<std::string, 2> rules{"98-flockbridge-serial.rules", "99-flockbot.rules"};
    const std::array<std::string, 3> folders{"/etc/udev/rules.d/", "/lib/udev/rules.d/", "/usr/lib/udev/rules.d/"};
    std::vector<std::string> missing;
    for (const std::string& rule : rules) {
      const bool installed = std::any_of(folders.begin(), folders.end(),
                                         [&](const std::string& folder) { return fs::exists(folder + rule); });
      if (!installed) missing.push_back(rule);
    }
    if (missing.empty()) {
      well("udev rules", "installed: robots' adapters get their names and group, and ModemManager leaves them alone");
      return;
    }
    std::string names;
    for (const std::string& rule : missing) names += (names.empty() ? "" : " and ") + rule;
    const bool udev_runs = fs::exists("/run/udev/control");
    const std::string said = names +
                             " not installed: a robot's adapter gets no lasting name, and ModemManager may "
                             "open it";
    const std::string fix =
        "install the package, or: sudo install -m 644 deploy/98-flockbridge-serial.rules "
        "deploy/99-flockbot.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo "
        "udevadm trigger --subsystem-match=tty";
    if (udev_runs) {
      problem("udev rules", said, fix);
    } else {
      note("udev rules", said + " (udev does not run here)");
    }
  }

  const BridgeCommandLine& line_;
  const Config& config_;
  std::vector<Finding> findings_;
};

}  // namespace

std::string report(const std::vector<Finding>& findings) {
  std::string text = "flockbridge doctor\n";
  std::size_t problems = 0;
  for (const Finding& finding : findings) {
    const char* mark = finding.verdict == Verdict::Well   ? "ok     "
                       : finding.verdict == Verdict::Note ? "note   "
                                                          : "PROBLEM";
    std::string said = finding.said;
    for (std::size_t at = said.find('\n'); at != std::string::npos; at = said.find('\n', at + 1)) {
      said.insert(at + 1, std::string(10, ' '));
    }
    text += "  " + std::string(mark) + " " + finding.topic + ": " + said + "\n";
    if (finding.verdict == Verdict::Problem) {
      ++problems;
      text += "          fix: " + finding.fix + "\n";
    }
  }
  text += problems == 0 ? "Everything is well.\n"
                        : std::to_string(problems) + (problems == 1 ? " problem" : " problems") + " found.\n";
  return text;
}

int run(int argc, const char* const* argv) {
  auto parsed = parse_bridge_command_line(argc, argv, settings_table(), robot_family_list(), BadConfiguration::Report,
                                          "flockbridge doctor");
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const std::vector<Finding> findings = Checkup(std::get<BridgeCommandLine>(parsed)).run();
  std::fputs(report(findings).c_str(), stdout);
  const bool well = std::none_of(findings.begin(), findings.end(),
                                 [](const Finding& finding) { return finding.verdict == Verdict::Problem; });
  return well ? 0 : 1;
}

}  // namespace flockbridge::bridge::doctor
