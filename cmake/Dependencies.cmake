# Every dependency comes from a Debian package (see README "Dependencies").
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)
# xxHash ships no CMake config: pkg-config it.
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)

if(POCKET_BUILD_TESTS)
  if(CMAKE_CROSSCOMPILING)
    # The cross build compiles GoogleTest from Debian's sources for the target.
    add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
    add_library(GTest::gtest_main ALIAS gtest_main)
    add_library(GTest::gtest ALIAS gtest)
  else()
    find_package(GTest REQUIRED)
  endif()
  include(GoogleTest)
endif()
if(POCKET_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
