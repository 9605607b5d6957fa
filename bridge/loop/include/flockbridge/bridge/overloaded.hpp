// std::visit over a variant with one lambda per alternative.
#pragma once

namespace flockbridge::bridge {

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
// Clang 14 does not deduce an aggregate's template arguments by itself.
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace flockbridge::bridge
