# -DPOCKET_SANITIZE=ON: ASan + UBSan on the C and C++ built after this point (not on CUDA
# kernels, whose compiler takes no such flags).
if(POCKET_SANITIZE)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined;-fno-omit-frame-pointer;-fno-sanitize-recover=undefined>")
  add_link_options(-fsanitize=address,undefined)
endif()

# -DPOCKET_BUILD_FUZZ=ON (clang): coverage instrumentation for the whole library, so that
# libFuzzer sees inside the code under test; the fuzz targets add -fsanitize=fuzzer.
if(POCKET_BUILD_FUZZ)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link,address,undefined;-fno-omit-frame-pointer>")
  add_link_options(-fsanitize=address,undefined)
endif()
