# Warnings for pocket's own targets (not for third-party code).
add_library(pocket_warnings INTERFACE)
target_compile_options(pocket_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wno-unused-parameter>)
