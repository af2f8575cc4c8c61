# The simulator proper (owned by the simulator layer's lead); included from CMakeLists.txt.
add_library(l2s_sim simulator.cc)
target_include_directories(l2s_sim PUBLIC ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(l2s_sim PUBLIC l2s_sim_kernels l2s_strategy l2s_model l2s_common fmt::fmt)
if(L2S_BUILD_TESTS)
  l2s_test(simulator_test simulator_test.cc LIBS l2s_sim)
endif()
