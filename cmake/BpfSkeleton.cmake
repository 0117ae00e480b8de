# SPDX-License-Identifier: GPL-2.0-only
# Compiles bpf/<name>.bpf.c to BPF bytecode (CO-RE) and generates <name>.skel.h with bpftool.
find_program(BPF_CLANG clang REQUIRED)
find_program(BPFTOOL bpftool PATHS /usr/sbin /sbin REQUIRED)

set(EZIO_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "Kernel BTF used to generate vmlinux.h")
set(EZIO_BPF_GEN_DIR ${CMAKE_BINARY_DIR}/bpf-gen)
file(MAKE_DIRECTORY ${EZIO_BPF_GEN_DIR})

if(NOT EXISTS ${EZIO_VMLINUX_BTF})
  message(FATAL_ERROR "eziotrace needs kernel BTF to build its BPF programs, and ${EZIO_VMLINUX_BTF} "
                      "does not exist: this kernel was built without CONFIG_DEBUG_INFO_BTF.")
endif()

add_custom_command(
  OUTPUT ${EZIO_BPF_GEN_DIR}/vmlinux.h
  COMMAND ${BPFTOOL} btf dump file ${EZIO_VMLINUX_BTF} format c > ${EZIO_BPF_GEN_DIR}/vmlinux.h
  COMMENT "Generating vmlinux.h from ${EZIO_VMLINUX_BTF}"
  VERBATIM)

# Callable from any directory (bench/ builds one too); vmlinux.h is generated once, here.
function(ezio_bpf_skeleton name)
  set(EZIO_BPF_GEN_DIR ${CMAKE_BINARY_DIR}/bpf-gen)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/${name}.bpf.c)
  set(obj ${EZIO_BPF_GEN_DIR}/${name}.bpf.o)
  set(skel ${EZIO_BPF_GEN_DIR}/${name}.skel.h)
  # CONFIGURE_DEPENDS: a header added later (bpf/syscall_functions.bpf.h) is a dependency too.
  file(GLOB _hdrs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror
            -I${EZIO_BPF_GEN_DIR} -I${CMAKE_CURRENT_SOURCE_DIR} -c ${src} -o ${obj}
    DEPENDS ${src} ${_hdrs} ${EZIO_BPF_GEN_DIR}/vmlinux.h
    COMMENT "Compiling BPF program ${name}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}
    DEPENDS ${obj}
    COMMENT "Generating BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${name}_skel DEPENDS ${skel})
endfunction()
