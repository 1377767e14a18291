# install_unit.cmake - runs at install time (dist/CMakeLists.txt): the
# unit's ExecStart names perfrec where it is installed, with the prefix
# given to `cmake --install --prefix` (and DESTDIR) taken into account.
foreach(v PERFREC_BINDIR PERFREC_UNITDIR)
  if(IS_ABSOLUTE "${${v}}")
    set(${v}_FULL "${${v}}")
  else()
    set(${v}_FULL "${CMAKE_INSTALL_PREFIX}/${${v}}")
  endif()
endforeach()
file(READ "${PERFREC_UNIT_SRC}" unit)
string(REPLACE "/usr/local/bin/perfrec" "${PERFREC_BINDIR_FULL}/perfrec" unit "${unit}")
set(dest "$ENV{DESTDIR}${PERFREC_UNITDIR_FULL}")
message(STATUS "Installing: ${dest}/perfrec.service")
file(MAKE_DIRECTORY "${dest}")
file(WRITE "${dest}/perfrec.service" "${unit}")
