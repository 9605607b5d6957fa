// The room every simulated robot shares: rays, collisions and contacts.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "flockbridge/sim/world.hpp"

using flockbridge::sim::Rect;
using flockbridge::sim::World;

TEST_CASE("the shared room: 4 by 3 m about the robots' start, with a box") {
  const World world = World::classroom();
  CHECK(world.room().x1 - world.room().x0 == 4000);
  CHECK(world.room().y1 - world.room().y0 == 3000);
  CHECK(world.boxes().size() == 1);
  CHECK_FALSE(world.collides(0, 0, 300));              // every robot starts free
  CHECK(world.ray(0, 0, 0) == doctest::Approx(2000));  // the far wall, 2 m ahead
  CHECK(world.ray(0, 0, std::numbers::pi / 2) == doctest::Approx(1500));
}

TEST_CASE("a ray meets the nearest of the walls and the box") {
  const World world(Rect{-2000, -1500, 2000, 1500}, {Rect{500, -100, 700, 100}});
  CHECK(world.ray(0, 0, 0) == doctest::Approx(500));                  // the box's near face
  CHECK(world.ray(0, 0, std::numbers::pi) == doctest::Approx(2000));  // behind: the wall
  CHECK(world.ray(0, 200, 0) == doctest::Approx(2000));               // beside the box
  // Slanted: 45 degrees up from (0, -600) meets the box's lower face at x = 500.
  CHECK(world.ray(0, -600, std::numbers::pi / 4) == doctest::Approx(500 * std::sqrt(2.0)));
  CHECK(world.ray(600, 0, 0) == 0);  // from inside the box
}

TEST_CASE("a round robot collides with a wall or the box, and says where it touches") {
  const World world(Rect{-2000, -1500, 2000, 1500}, {Rect{500, -100, 700, 100}});
  CHECK(world.collides(1850, 0, 200));
  CHECK_FALSE(world.collides(1750, 0, 200));
  CHECK(world.collides(350, 0, 200));  // the box ahead
  const auto ahead = world.contact(350, 0, 200);
  REQUIRE(ahead);
  CHECK(*ahead == doctest::Approx(0));
  const auto below = world.contact(0, -1400, 200);
  REQUIRE(below);
  CHECK(*below == doctest::Approx(-std::numbers::pi / 2));
  CHECK_FALSE(world.contact(0, 0, 200));
}
