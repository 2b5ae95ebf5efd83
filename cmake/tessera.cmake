# Build helpers: every library and test in the tree is declared with one of these,
# with its dependencies spelled out.
#
#   tessera_cc_library(NAME name SRCS a.cc b.cc DEPS dep1 dep2)
#   tessera_cc_test(NAME name SRCS a_test.cc DEPS dep1 [LABELS unit|scenario|slow])

function(tessera_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PUBLIC
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
endfunction()

function(tessera_cc_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}"
    ENVIRONMENT "TESSERA_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
