// flockbridge: parse the command line, run the bridge on one loop, exit
// non-zero on a fatal error.
#include <uv.h>

#include <cstdio>
#include <exception>
#include <string_view>

#include "flockbridge/bridge/bridge.hpp"
#include "flockbridge/bridge/cli.hpp"
#include "flockbridge/bridge/doctor/doctor.hpp"
#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/log.hpp"

static int run(int argc, char** argv) {
  using namespace flockbridge::bridge;
  // flockbridge doctor: what is wrong on this computer, and how to mend it.
  if (argc > 1 && std::string_view(argv[1]) == "doctor") return doctor::run(argc - 1, argv + 1);
  const SettingsTable& settings = settings_table();
  auto parsed = parse_bridge_command_line(argc, argv, settings, robot_family_list());
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const BridgeCommandLine& line = std::get<BridgeCommandLine>(parsed);
  const ConfigSources& sources = line.sources;
  const Config& config = line.config;
  set_log_level(config.log_level);

  uv_loop_t loop;
  uv_loop_init(&loop);
  int status = 0;
  {
    Bridge bridge(&loop, config, driver_factory(config), settings);
    bridge.set_config_loader([&sources, &settings] { return load_config(settings, sources); });
    if (auto started = bridge.start(); !started) {
      log_error(started.error().message);
      status = 1;
    } else {
      uv_run(&loop, UV_RUN_DEFAULT);
    }
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // let the handles finish closing
  if (uv_loop_close(&loop) != 0) log_warning("the loop still had handles at exit");
  return status;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", "flockbridge", error.what());
    return 1;
  }
}
