// One main for every test program. ctest runs each test case on its own,
// selected by name; a name that selects nothing (a test renamed, or cut at a
// ';' by CMake) must fail, not pass with nothing run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "support/listener.hpp"

namespace {

/// How many test cases the filters let through in the last run.
int g_selected = -1;

struct SelectedCount : flockbridge::testing::Listener {
  explicit SelectedCount(const doctest::ContextOptions&) {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    g_selected = static_cast<int>(stats.numTestCasesPassingFilters);
  }
};
REGISTER_LISTENER("selected-count", 0, SelectedCount);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;  // --help, --list-test-cases and other queries
  if (result == 0 && g_selected == 0) {
    std::fputs("no test case matched the filters: nothing ran\n", stderr);
    return 1;
  }
  return result;
}
