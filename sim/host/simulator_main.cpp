// flockbridge-sim: a simulated robot of any family on a
// pseudo-terminal, controlled by lines on standard input and reporting
// events on standard output.
#include <uv.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

#include "flockbridge/sim/host/sim_console.hpp"
#include "flockbridge/sim/host/simulator_cli.hpp"

static int run(int argc, char** argv) {
  using namespace flockbridge::sim;
  auto parsed = parse_simulator_command_line(argc, argv, simulated_families());
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  uv_loop_t loop;
  uv_loop_init(&loop);
  int status = 0;
  {
    SimConsole console(&loop, std::get<SimulatorSettings>(parsed));
    if (auto started = console.start(); !started) {
      std::fprintf(stderr, "flockbridge-sim: %s\n", started.error().message.c_str());
      status = 1;
    } else {
      uv_run(&loop, UV_RUN_DEFAULT);
    }
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return status;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", "flockbridge-sim", error.what());
    return 1;
  }
}
