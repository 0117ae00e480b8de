# SPDX-License-Identifier: GPL-2.0-only
# OTF2 ships otf2-config rather than a CMake package.
find_program(OTF2_CONFIG otf2-config REQUIRED)
execute_process(COMMAND ${OTF2_CONFIG} --cflags OUTPUT_VARIABLE _otf2_cflags OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${OTF2_CONFIG} --ldflags OUTPUT_VARIABLE _otf2_ldflags OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${OTF2_CONFIG} --libs OUTPUT_VARIABLE _otf2_libs OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(_otf2_cflags)
separate_arguments(_otf2_ldflags)
separate_arguments(_otf2_libs)
add_library(otf2::otf2 INTERFACE IMPORTED)
target_compile_options(otf2::otf2 INTERFACE ${_otf2_cflags})
target_link_options(otf2::otf2 INTERFACE ${_otf2_ldflags})
# The static archive where it is installed (it needs nothing but libc): one shared library less to
# load at each start of eziotrace, which is on the way to every recorded application's start.
find_library(EZIO_OTF2_A libotf2.a)
if(EZIO_OTF2_A)
  target_link_libraries(otf2::otf2 INTERFACE ${EZIO_OTF2_A})
else()
  target_link_libraries(otf2::otf2 INTERFACE ${_otf2_libs})
endif()
