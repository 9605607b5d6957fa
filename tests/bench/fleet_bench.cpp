// fleet_bench: the figures of the fleet (docs/fleet.md). A real mosquitto on
// 127.0.0.1 with the project's ACL, real bridges, each with its simulated
// robot; it prints figures and asserts nothing.
//
//  1. CPU: one SMR bridge (100 sensor periods a second, the busiest family)
//     with MQTT off, then on at 1 Hz and at 10 Hz telemetry, each measured
//     over --seconds: the bridge's own CPU time, as a share of one core.
//  2. The fleet's emergency stop: a Flockbot, a Pioneer and an SMR, each
//     with its simulator on a pseudo-terminal; the teacher publishes on
//     flockbridge/v1/_fleet/cmd/emergency (libmosquitto, QoS 1) and the time
//     runs until each simulator reports the stop, over --trials.
//  3. A broker that stops answering (SIGSTOP): an SMR bridge's sensor
//     latency at a local JSON client, broker answering and stopped.
//  4. Reconnection: the broker killed and started again at once; the time
//     from the new broker's start to each bridge's "mqtt: connected", over
//     --restarts.
//
//   fleet_bench [--seconds S] [--trials N] [--restarts N]
#include <mosquitto.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/bench.hpp"
#include "support/listening.hpp"
#include "support/measure.hpp"
#include "support/mqtt_broker.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"
#include "support/temp_dir.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  double seconds = 20;
  int trials = 50;
  int restarts = 10;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const double value = std::atof(argv[i + 1]);
    if (name == "--seconds") {
      o.seconds = value;
    } else if (name == "--trials") {
      o.trials = static_cast<int>(value);
    } else if (name == "--restarts") {
      o.restarts = static_cast<int>(value);
    }
  }
  return o;
}

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

void print_spread(const char* what, std::vector<double> values) {
  if (values.empty()) return;
  std::ranges::sort(values);
  std::printf("  %-34s p50 %7.2f ms   p99 %7.2f ms   max %7.2f ms   (n=%zu)\n", what, percentile(values, 0.5),
              percentile(values, 0.99), values.back(), values.size());
}

void require(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "fleet_bench: %s\n", what);
    std::exit(1);
  }
}

/// A bridge (with its simulator when `device` is set, else --simulate) on the broker as `robot`.
struct Member {
  std::string robot;
  std::string family;
  std::unique_ptr<ChildProcess> sim;
  std::unique_ptr<ChildProcess> bridge;
  std::uint16_t json_port = 0;
  TempDir folder;

  Member(std::string name, std::string robot_family, bool own_sim, const std::vector<std::string>& extra)
      : robot(std::move(name)), family(std::move(robot_family)) {
    std::vector<std::string> argv{
        FLOCKBRIDGE_BIN, "--robot",   family,        "--no-config", "--mdns-service-file", "",
        "--bind",        "127.0.0.1", "--port",      "0",           "--json-port",         "0",
        "--http-port",   "0",         "--log-level", "info"};
    if (own_sim) {
      const std::string device = (folder / "robot").string();
      sim = std::make_unique<ChildProcess>(
          std::vector<std::string>{FLOCKBRIDGE_SIM_BIN, "--robot", family, "--link", device});
      require(sim->wait_for(Stream::Stdout, "ready ").has_value(), "the simulator did not start");
      argv.insert(argv.end(), {"--device", device});
    } else {
      argv.emplace_back("--simulate");
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    bridge = std::make_unique<ChildProcess>(argv);
    const auto listening = bridge->wait_for(Stream::Stderr, "listening: ");
    require(listening.has_value(), "the bridge did not start");
    json_port = listening_ports(*listening)->json;
    require(bridge->wait_seen(Stream::Stderr, "robot link up", std::chrono::seconds(20)), "the link did not come up");
  }
};

void measure_cpu(const MqttBroker& broker, const Options& options) {
  std::printf("CPU of one SMR bridge (100 periods a second), over %.0f s each:\n", options.seconds);
  struct Case {
    const char* name;
    std::vector<std::string> args;
  };
  std::vector<Case> cases{{"MQTT off", {}}};
  cases.push_back({"MQTT on, telemetry 1 Hz", broker.bridge_args("smr-1", 1)});
  cases.push_back({"MQTT on, telemetry 10 Hz", broker.bridge_args("smr-1", 10)});
  double off = 0;
  for (const Case& each : cases) {
    Member member("smr-1", "smr", false, each.args);
    if (!each.args.empty()) {
      require(member.bridge->wait_seen(Stream::Stderr, "mqtt: connected"), "the bridge did not reach the broker");
    }
    const double before = bench::cpu_seconds(member.bridge->pid());
    std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
    const double share = (bench::cpu_seconds(member.bridge->pid()) - before) / options.seconds * 100;
    if (each.args.empty()) off = share;
    std::printf("  %-28s %6.2f %% of a core", each.name, share);
    if (!each.args.empty()) std::printf("   (+%.2f points)", share - off);
    std::printf("\n");
    member.bridge->terminate();
  }
}

void measure_emergency(const MqttBroker& broker, const Options& options, std::vector<std::unique_ptr<Member>>& fleet) {
  mosquitto* teacher = mosquitto_new("bench-teacher", true, nullptr);
  mosquitto_username_pw_set(teacher, "teacher", MqttBroker::password("teacher").c_str());
  require(mosquitto_connect(teacher, "127.0.0.1", broker.port(), 30) == MOSQ_ERR_SUCCESS, "cannot connect");
  require(mosquitto_loop_start(teacher) == MOSQ_ERR_SUCCESS, "cannot start libmosquitto's thread");

  std::vector<std::unique_ptr<TcpClient>> clients;
  for (auto& member : fleet) {
    clients.push_back(std::make_unique<TcpClient>(member->json_port));
    require(clients.back()->read_json_type("hello").has_value(), "no hello");
  }
  std::vector<double> all;
  std::vector<std::vector<double>> by_robot(fleet.size());
  for (int trial = 0; trial < options.trials; ++trial) {
    // The SMR's simulator reports changes of speed only: it drives first.
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      clients[i]->send("{\"cmd\":\"clear_emergency\",\"id\":\"c\"}\n");
      require(clients[i]->read_json_type("ok").has_value(), "the latch was not cleared");
    }
    Member& smr = *fleet[2];
    clients[2]->send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":\"d\"}\n");
    require(clients[2]->read_json_type("ok").has_value(), "the SMR did not drive");
    require(smr.sim->wait_for(Stream::Stdout, "rx left speed").has_value(), "the SMR's motors did not turn");

    const std::string payload = R"({"by":"bench","reason":"trial )" + std::to_string(trial) + "\"}";
    const auto published = Clock::now();
    require(mosquitto_publish(teacher, nullptr, "flockbridge/v1/_fleet/cmd/emergency", static_cast<int>(payload.size()),
                              payload.data(), 1, false) == MOSQ_ERR_SUCCESS,
            "cannot publish");
    const std::array<const char*, 3> stops{"rx 45 4D 47", "rx E_STOP", "rx left speed 0"};
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      const auto seen = fleet[i]->sim->wait_for_timed(Stream::Stdout, stops[i], std::chrono::seconds(5));
      require(seen.has_value(), "a robot did not stop");
      const double ms = ms_between(published, seen->second);
      all.push_back(ms);
      by_robot[i].push_back(ms);
    }
  }
  std::printf("The fleet's emergency stop, from the teacher's publish to each simulator's stop (%d trials):\n",
              options.trials);
  for (std::size_t i = 0; i < fleet.size(); ++i) print_spread(fleet[i]->family.c_str(), by_robot[i]);
  print_spread("all three", all);
  mosquitto_disconnect(teacher);
  mosquitto_loop_stop(teacher, false);
  mosquitto_destroy(teacher);
}

/// Sensor latency at a local JSON client: from the bridge's receipt of a
/// period (its `ts`) to the client's, over `seconds`.
std::vector<double> sensor_latency(TcpClient& client, double seconds) {
  std::vector<double> ms;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < until) {
    const auto sensor = client.read_json_type("sensor");
    require(sensor.has_value(), "no sensor message");
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    ms.push_back((now - (*sensor)["ts"].get<double>()) * 1000);
  }
  return ms;
}

void measure_stopped_broker(MqttBroker& broker, const Options& options) {
  Member member("smr-1", "smr", false, broker.bridge_args("smr-1", 10));
  require(member.bridge->wait_seen(Stream::Stderr, "mqtt: connected"), "the bridge did not reach the broker");
  TcpClient client(member.json_port);
  require(client.read_json_type("hello").has_value(), "no hello");
  const double half = options.seconds / 2;
  std::printf(
      "An SMR bridge's sensor latency at a local JSON client (every period), telemetry at 10 Hz, %.0f s each:\n", half);
  print_spread("broker answering", sensor_latency(client, half));
  broker.pause(true);
  print_spread("broker stopped (SIGSTOP)", sensor_latency(client, half));
  client.send("{\"cmd\":\"stats\"}\n");
  const auto stats = client.read_json_type("stats");
  require(stats.has_value(), "no stats");
  broker.pause(false);
  std::printf("  meanwhile the MQTT queue held %d messages (of %d at most), %d replaced by newer, %d dropped\n",
              (*stats)["mqtt"]["queued"].get<int>(), 64, (*stats)["mqtt"]["replaced"].get<int>(),
              (*stats)["mqtt"]["dropped"].get<int>());
  member.bridge->terminate();
}

void measure_reconnect(MqttBroker& broker, const Options& options, std::vector<std::unique_ptr<Member>>& fleet) {
  std::vector<double> times;
  for (int restart = 0; restart < options.restarts; ++restart) {
    for (auto& member : fleet) member->bridge->skip_to_end(Stream::Stderr);
    broker.kill();
    for (auto& member : fleet) {
      require(member->bridge->wait_for(Stream::Stderr, "mqtt: lost the connection").has_value(), "no loss seen");
    }
    const auto started = Clock::now();
    broker.start();
    // The new broker kept nothing: a robot is back for the fleet when its
    // status is online again (retained, or live if it comes later).
    std::vector<std::unique_ptr<ChildProcess>> viewers;
    viewers.reserve(fleet.size());
    for (auto& member : fleet)
      viewers.push_back(broker.subscribe("teacher", "flockbridge/v1/" + member->robot + "/status"));
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      auto& member = fleet[i];
      const auto back = viewers[i]->wait_for_timed(Stream::Stdout,
                                                   "flockbridge/v1/" + member->robot + "/status {\"state\":\"online\"",
                                                   std::chrono::seconds(30));
      require(back.has_value(), "a bridge did not come back");
      times.push_back(ms_between(started, back->second));
    }
  }
  std::printf("Reconnection after the broker was killed and started again (%d restarts, 3 bridges):\n",
              options.restarts);
  print_spread("broker start -> status online", times);
}

}  // namespace

int main(int argc, char** argv) try {
  const Options options = parse(argc, argv);
  mosquitto_lib_init();
  MqttBroker broker({"fb-1", "p3-1", "smr-1"});
  measure_cpu(broker, options);
  measure_stopped_broker(broker, options);

  std::vector<std::unique_ptr<Member>> fleet;
  fleet.push_back(std::make_unique<Member>("fb-1", "flockbot", true, broker.bridge_args("fb-1", 1)));
  fleet.push_back(std::make_unique<Member>("p3-1", "pioneer", true, broker.bridge_args("p3-1", 1)));
  fleet.push_back(std::make_unique<Member>("smr-1", "smr", true, broker.bridge_args("smr-1", 1)));
  for (auto& member : fleet) {
    require(member->bridge->wait_seen(Stream::Stderr, "mqtt: connected"), "a bridge did not reach the broker");
  }
  measure_emergency(broker, options, fleet);
  measure_reconnect(broker, options, fleet);
  for (auto& member : fleet) {
    member->bridge->terminate();
    if (member->sim) member->sim->terminate();
  }
  mosquitto_lib_cleanup();
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "fleet_bench: %s\n", error.what());
  return 1;
}
