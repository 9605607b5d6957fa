# Cross-building for arm64 (64-bit Raspberry Pi OS) with Debian's cross
# toolchain (crossbuild-essential-arm64) against Debian's multiarch arm64
# -dev packages; scripts/arm64.sh installs both and uses this file:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Tests run under qemu-user (qemu-aarch64), ctest's emulator.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: arm64 libraries live beside the build machine's, in
# /usr/lib/aarch64-linux-gnu, and headers in /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config reads the arm64 .pc files only (and, from scripts/arm64.sh,
# those of the unpacked libwebsockets-dev:arm64).
# CMake reads this file again for each try_compile, where only the variables
# listed here are set; the environment is shared, so all must agree.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FLOCKBRIDGE_ARM64_LWS_ROOT)
set(arm64_pkg_config_dirs /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
if(FLOCKBRIDGE_ARM64_LWS_ROOT)
  string(PREPEND arm64_pkg_config_dirs "${FLOCKBRIDGE_ARM64_LWS_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:")
endif()
set(ENV{PKG_CONFIG_LIBDIR} ${arm64_pkg_config_dirs})
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 CACHE STRING "Runs arm64 programs on the build machine")
