# ddlsim_layer(FOLDER SOURCES ... [DEPENDS layer ...] [SIMGRID] [BOOST]): the library target of one src/ folder.
# It links exactly its declared layers, and the build fails when one of its files includes any other folder
# (or SimGrid / Boost.Program_options without the flag): scripts/check_layers.py runs before it compiles.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

function(ddlsim_layer folder)
  cmake_parse_arguments(L "SIMGRID;BOOST" "" "SOURCES;DEPENDS" ${ARGN})
  set(target ddlsim_${folder})
  add_library(${target} STATIC ${L_SOURCES})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC ddlsim_proto)
  foreach(dep IN LISTS L_DEPENDS)
    target_link_libraries(${target} PUBLIC ddlsim_${dep})
  endforeach()
  set(flags)
  if(L_SIMGRID)
    target_link_libraries(${target} PUBLIC PkgConfig::SimGrid)
    list(APPEND flags --simgrid)
  endif()
  if(L_BOOST)
    target_link_libraries(${target} PUBLIC Boost::program_options)
    list(APPEND flags --boost)
  endif()
  target_compile_options(${target} PRIVATE ${DDLSIM_WARNINGS})
  file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${folder}/*.hpp ${PROJECT_SOURCE_DIR}/src/${folder}/*.cpp)
  set(stamp ${CMAKE_BINARY_DIR}/layers/${folder}.ok)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/layers)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_layers.py ${folder} ${flags}
            --allowed ${L_DEPENDS} -- ${files}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/scripts/check_layers.py
    COMMENT "Checking the includes of src/${folder}/ against its layer"
    VERBATIM)
  add_custom_target(${target}_layer DEPENDS ${stamp})
  add_dependencies(${target} ${target}_layer)
endfunction()
