# checknohttpserver.cmake: the licence boundary of Qt HttpServer (GPL-3 in Debian). Run by the CTest test
# httpserver_not_in_product as
#   cmake -DBINARIES="<coreflow>|<coreflow-console>" -DPROBE=<coreflow-loopback-corestore> -P checknohttpserver.cmake
# Fails when any of BINARIES names libQt6HttpServer among its NEEDED entries (readelf -d) or resolves it
# through another library (ldd). PROBE is a binary that must show it: it proves the check can see the
# library at all (a check that never matches could not fail).
find_program(READELF readelf REQUIRED)
find_program(LDD ldd)
string(REPLACE "|" ";" binaries "${BINARIES}")

function(needed_libraries binary out)
  execute_process(COMMAND ${READELF} -d ${binary} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${binary} failed (${rc})")
  endif()
  set(text "${dynamic}")
  if(LDD)
    execute_process(COMMAND ${LDD} ${binary} OUTPUT_VARIABLE resolved RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      string(APPEND text "\n${resolved}")
    endif()
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

needed_libraries("${PROBE}" probe)
if(NOT probe MATCHES "libQt6HttpServer")
  message(FATAL_ERROR "the probe ${PROBE} does not show libQt6HttpServer: the check cannot see it")
endif()

foreach(binary IN LISTS binaries)
  needed_libraries("${binary}" text)
  if(text MATCHES "libQt6HttpServer")
    message(FATAL_ERROR "${binary} links libQt6HttpServer (GPL-3): only test peers may")
  endif()
  message(STATUS "${binary}: no libQt6HttpServer")
endforeach()
