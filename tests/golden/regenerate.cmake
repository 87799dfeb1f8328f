# Regenerate-and-compare golden test (the golden_test() function of tests/CMakeLists.txt), run by ctest as
#   cmake -DDDLSIM=BINARY -DCOMPARE_REPORTS=BINARY -DBUILD=DIR -P regenerate.cmake --
#         [RUN [STDOUT FILE] ARGS...]... COMPARE MODE PRODUCED EXPECTED [FROM TO]
# In every word @DDLSIM@ is the ddlsim binary and @BUILD@ the directory for outputs. Each RUN executes ARGS
# and must exit 0; its stdout is discarded, or written to FILE. Then PRODUCED is compared with EXPECTED:
#   BYTES      byte-identical files;
#   REPORT     ddlsim JSON reports equal to 1e-9 relative (compare_reports), after FROM is replaced by TO in
#              PRODUCED (the report records the platform file name, which differs from the golden one);
#   ITERATION  every "iteration_time_s" field of the two reports is textually identical (and there is one);
#   COPIED     PRODUCED says "iterations_simulated": 1, EXPECTED simulated every iteration ("iterations_simulated"
#              equal to "iterations"), and the two are equal reports (as REPORT) once those two fields and
#              "simulated_activities" (the work done, which copying divides) are left out of both;
#   DRIVEN     PRODUCED ran one actor per communication stream (PhaseSpec::drive_streams), EXPECTED one per rank
#              (--per-rank-actors): equal reports (as REPORT) once "simulated_activities" is left out of both, and
#              PRODUCED started fewer SimGrid activities (so the shortcut was taken);
#   COMPUTED   as DRIVEN, where PRODUCED's lanes ran in ddlsim's own network (mirrored lanes: CommWorld::run_fluid;
#              its "computed_flows" not 0) and
#              EXPECTED per rank in SimGrid with --cfg network/optim:Full (the model's update; its default lazy one may
#              leave links out, docs/network-model.md), that entry of its simgrid_cfg left out; simulated times equal
#              to 1e-9 relative or 100 ns, one aggregation's or layer's durations 5 ns (SimGrid's full and lazy updates
#              differ by up to 28 ns per iteration on these platforms: each keeps events to its 1 ns resolution its own
#              way; measured here at most 56 ns over two iterations, 3.2 ns on one aggregation; docs/performance.md).
#   STEPS      PRODUCED ran --fidelity steps, EXPECTED --fidelity message: as DRIVEN once PRODUCED's fidelity ("steps")
#              and fidelity_used (": steps") read as the message level's.
#   EXACT      PRODUCED ran --fidelity auto and took a flow form because it equals the message level there
#              (fidelity_used ": flow (equal to the message level here)"), EXPECTED --fidelity message: as STEPS.
#   EXACT_COMPUTED  as EXACT, where PRODUCED's lanes ran in ddlsim's own network and EXPECTED with --cfg
#              network/optim:Full, compared as COMPUTED (several streams whose flow form auto takes as exact).
#   EXACT_SHARED as EXACT_COMPUTED, simulated times to 1 us (one aggregation's durations to 50 ns): a whole stream
#              computed in one network (TreeStream) where aggregations in flight together share links (a DGX-1 node's
#              NIC): rounding a few picoseconds apart in a transfer's start moves the max-min shares of the transfers
#              it meets, and those of the ones they meet, to 44 ns on an aggregation and 180 ns on a link's busy time
#              (measured, docs/collectives.md), where SimGrid's own 1 ps clock moves the message level by microseconds.
#   TIES       as EXACT_SHARED, where PRODUCED's fidelity_used says the program computed the message level's transfers
#              together (collectives::kComputedTogether): only the iteration time and the communication's total and
#              exposed time, to 1e-3 relative. Many DGX-1 nodes' NICs, each shared by eight GPUs' tree edges: ties of
#              a nanosecond grow through the max-min shares to 5e-4 of the iteration, where SimGrid's lazy and full
#              updates part by 3e-4 (docs/collectives.md, "Equality, and what it means"); one aggregation's time or
#              one link's busy time moves by percents, in SimGrid's settings as between the forms.
#   EXACT_NS   as EXACT, simulated times to 20 ns as well (one aggregation's or layer's durations to 1 ns): a plan
#              that computes its transfers and sleeps itself follows SimGrid's 1 ns clock (analytical::SimClock), not
#              the order in which SimGrid's update takes the events of one nanosecond, which moves a link's busy time
#              by a nanosecond or two where many transfers end together (NCCL's trees on DGX-1 nodes: 1.9 ns).
#   EXACT_FINE as EXACT, where EXPECTED ran with --cfg surf/precision:1e-12 (that entry of its simgrid_cfg left out):
#              SimGrid's clock to 1 ps, not its default 1 ns, where many transfers of overlapping aggregations run at
#              once (the priority policy's partitions) and the default's rounding moves ends by nanoseconds
#              (docs/performance.md).
cmake_minimum_required(VERSION 3.19)

set(tokens)
set(seen_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(seen_dashes)
    string(REPLACE "@BUILD@" "${BUILD}" word "${CMAKE_ARGV${i}}")
    string(REPLACE "@DDLSIM@" "${DDLSIM}" word "${word}")
    list(APPEND tokens "${word}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(seen_dashes TRUE)
  endif()
endforeach()

# Split the tokens into RUN commands (kept as ';'-joined lists with '|' between words) and the COMPARE clause.
set(commands)
set(current)
set(compare)
set(in_compare FALSE)
foreach(t IN LISTS tokens)
  if(in_compare)
    list(APPEND compare "${t}")
  elseif(t STREQUAL "RUN" OR t STREQUAL "COMPARE")
    if(current)
      list(JOIN current "|" joined)
      list(APPEND commands "${joined}")
    endif()
    set(current)
    if(t STREQUAL "COMPARE")
      set(in_compare TRUE)
    endif()
  else()
    list(APPEND current "${t}")
  endif()
endforeach()
list(LENGTH compare n)
if(n LESS 3)
  message(FATAL_ERROR "regenerate.cmake: expected COMPARE MODE PRODUCED EXPECTED")
endif()

foreach(joined IN LISTS commands)
  string(REPLACE "|" ";" command "${joined}")
  set(stdout_file "")
  list(GET command 0 first)
  if(first STREQUAL "STDOUT")
    list(GET command 1 stdout_file)
    list(REMOVE_AT command 0 1)
  endif()
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(stdout_file)
    file(WRITE "${stdout_file}" "${out}")
  endif()
  if(NOT rc EQUAL 0)
    list(JOIN command " " shown)
    message(FATAL_ERROR "exit ${rc} from: ${shown}\n--- stdout:\n${out}\n--- stderr:\n${err}")
  endif()
endforeach()

list(GET compare 0 mode)
list(GET compare 1 produced)
list(GET compare 2 expected)
# The reports PRODUCED and EXPECTED as the texts `a` and `b` (some fields left out) are equal to 1e-9 relative.
function(compare_texts a b)
  file(WRITE "${produced}.cmp" "${a}")
  file(WRITE "${expected}.cmp" "${b}")
  set(floor)
  if(mode STREQUAL "EXACT_SHARED")
    set(floor 1e-6)
  elseif(mode MATCHES "COMPUTED")
    set(floor 1e-7)
  elseif(mode STREQUAL "EXACT_NS")
    set(floor 2e-8)
  endif()
  execute_process(COMMAND "${COMPARE_REPORTS}" "${expected}.cmp" "${produced}.cmp" 1e-9 ${floor} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${produced} differs from ${expected}")
  endif()
endfunction()

if(mode STREQUAL "BYTES")
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${produced}" "${expected}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    execute_process(COMMAND diff "${expected}" "${produced}" COMMAND head -n 40) # to ctest's log
    message(FATAL_ERROR "${produced} differs from ${expected} (diff above)")
  endif()
elseif(mode STREQUAL "REPORT")
  if(n EQUAL 5)
    list(GET compare 3 from)
    list(GET compare 4 to)
    file(READ "${produced}" text)
    string(REPLACE "${from}" "${to}" text "${text}")
    file(WRITE "${produced}" "${text}")
  endif()
  execute_process(COMMAND "${COMPARE_REPORTS}" "${expected}" "${produced}" 1e-9 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${produced} differs from ${expected}")
  endif()
elseif(mode STREQUAL "ITERATION")
  file(READ "${produced}" a)
  file(READ "${expected}" b)
  string(REGEX MATCHALL "\"iteration_time_s\"[^,]*" a "${a}")
  string(REGEX MATCHALL "\"iteration_time_s\"[^,]*" b "${b}")
  if(NOT a OR NOT a STREQUAL b)
    message(FATAL_ERROR "iteration times differ: ${produced}: '${a}', ${expected}: '${b}'")
  endif()
  message(STATUS "same iteration time: ${a}")
elseif(mode STREQUAL "COPIED")
  file(READ "${produced}" a)
  file(READ "${expected}" b)
  string(REGEX MATCH "\"iterations\": ([0-9]+)" _ "${b}")
  set(iterations "${CMAKE_MATCH_1}")
  if(NOT a MATCHES "\"iterations_simulated\": 1," OR NOT b MATCHES "\"iterations_simulated\": ${iterations},")
    message(FATAL_ERROR "${produced} must copy iterations (iterations_simulated 1) and ${expected} simulate all "
                        "${iterations}")
  endif()
  foreach(f a b)
    string(REGEX REPLACE "\n \"iterations_simulated\": [0-9]+,\n \"simulated_activities\": [^\n]*" "" ${f} "${${f}}")
    string(REGEX REPLACE ",\n$" "\n" ${f} "${${f}}")
  endforeach()
  compare_texts("${a}" "${b}")
elseif(mode MATCHES "^(DRIVEN|COMPUTED|STEPS|EXACT|EXACT_COMPUTED|EXACT_SHARED|EXACT_FINE|EXACT_NS|TIES)$")
  file(READ "${produced}" a)
  file(READ "${expected}" b)
  if(mode STREQUAL "EXACT_FINE")
    if(NOT b MATCHES ",\n *\"surf/precision:1e-12\"")
      message(FATAL_ERROR "${expected} did not run with --cfg surf/precision:1e-12")
    endif()
    string(REGEX REPLACE ",\n *\"surf/precision:1e-12\"" "" b "${b}")
  endif()
  if(mode MATCHES "COMPUTED|SHARED|TIES")
    if(NOT b MATCHES ",\n *\"network/optim:Full\"")
      message(FATAL_ERROR "${expected} did not run with --cfg network/optim:Full")
    endif()
    if(NOT a MATCHES "\"computed_flows\": \"?[1-9]")
      message(FATAL_ERROR "${produced}: no flow computed by ddlsim's own network (computed_flows): not mirrored")
    endif()
    string(REGEX REPLACE ",\n *\"network/optim:Full\"" "" b "${b}")
  endif()
  if(mode MATCHES "^(EXACT|TIES)")
    set(equal " (equal to the message level here)")
    set(together " (the message level's transfers, computed together; equal to it but for ties on shared links)")
    if(NOT a MATCHES "\"fidelity\": \"auto\"" OR NOT a MATCHES "(\"fidelity_used\": \"[^\"]*\")")
      message(FATAL_ERROR "${produced} did not run --fidelity auto")
    endif()
    set(used "${CMAKE_MATCH_1}")
    string(FIND "${used}" ": flow${together}" at)
    if(at EQUAL -1 AND NOT mode STREQUAL "TIES")
      string(FIND "${used}" ": flow${equal}" at)
    else()
      set(equal "${together}")
    endif()
    if(at EQUAL -1)
      message(FATAL_ERROR "${produced}: ${used}: --fidelity auto did not take an exact flow form (or, TIES, one "
                          "computed together)")
    endif()
    string(REPLACE ": flow${equal}" ": message" message_used "${used}")
    string(REPLACE "${used}" "${message_used}" a "${a}")
    string(REPLACE "\"fidelity\": \"auto\"" "\"fidelity\": \"message\"" a "${a}")
  endif()
  if(mode STREQUAL "STEPS")
    if(NOT a MATCHES "\"fidelity\": \"steps\"" OR NOT a MATCHES "(\"fidelity_used\": \"[^\"]*\")")
      message(FATAL_ERROR "${produced} did not run --fidelity steps")
    endif()
    set(used "${CMAKE_MATCH_1}")
    string(REPLACE ": steps" ": message" message_used "${used}")
    string(REPLACE "${used}" "${message_used}" a "${a}")
    string(REPLACE "\"fidelity\": \"steps\"" "\"fidelity\": \"message\"" a "${a}")
  endif()
  foreach(f a b)
    if(NOT ${f} MATCHES "\n \"simulated_activities\": ([0-9]+)")
      message(FATAL_ERROR "no simulated_activities in the report (${produced} or ${expected})")
    endif()
    set(${f}_activities "${CMAKE_MATCH_1}")
    string(REGEX REPLACE ",\n \"simulated_activities\": [0-9]+" "" ${f} "${${f}}")
    string(REGEX REPLACE "\n \"simulated_activities\": [0-9]+,?" "" ${f} "${${f}}")
  endforeach()
  if(NOT a_activities LESS b_activities)
    message(FATAL_ERROR "${produced} started ${a_activities} activities, not fewer than the ${b_activities} of "
                        "${expected}: one actor per communication stream was not used")
  endif()
  if(mode STREQUAL "TIES")
    # The iteration's time and its communication, total and exposed, to 1e-3 relative; nothing else.
    foreach(f a b)
      set(kept "{")
      foreach(field iteration_time_s communication_s exposed_communication_s)
        if(NOT ${f} MATCHES "\"${field}\": ([-0-9.eE+]+)")
          message(FATAL_ERROR "no ${field} in the report (${produced} or ${expected})")
        endif()
        if(field STREQUAL "iteration_time_s")
          string(APPEND kept "\"${field}\": ${CMAKE_MATCH_1}, \"breakdown\": {")
        else()
          string(APPEND kept "\"${field}\": ${CMAKE_MATCH_1},")
        endif()
      endforeach()
      string(REGEX REPLACE ",$" "}}" ${f} "${kept}")
    endforeach()
    file(WRITE "${produced}.cmp" "${a}")
    file(WRITE "${expected}.cmp" "${b}")
    execute_process(COMMAND "${COMPARE_REPORTS}" "${expected}.cmp" "${produced}.cmp" 1e-3 RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${produced}'s iteration or communication is more than 1e-3 from ${expected}'s")
    endif()
    message(STATUS "iteration and communication within 1e-3: ${a} against ${b}")
    return()
  endif()
  compare_texts("${a}" "${b}")
  message(STATUS "equal reports; activities ${a_activities} (one actor per stream) < ${b_activities} (per rank)")
else()
  message(FATAL_ERROR "regenerate.cmake: unknown COMPARE mode '${mode}'")
endif()
