# Where `cmake --install` puts handoff, and the Debian package CPack builds from the same rules:
#   bin/handoffd, bin/handoff
#   lib/systemd/user/handoffd.{socket,service}   (systemd's user unit path under the prefix)
#   share/handoff/pi/                             the TypeScript client and Pi extension, sources
#   share/doc/handoff/                            README.md and docs/
# Package: `cpack -G DEB` in the build directory -> handoff_<version>_<arch>.deb, which
# installs under /usr: `apt install ./handoff_*.deb`.
include(GNUInstallDirs)

set(HANDOFF_USER_UNIT_DIR "lib/systemd/user" CACHE STRING "systemd user units, relative to the prefix")
set(HANDOFF_PACKAGE_MAINTAINER "handoff developers <handoff@localhost>" CACHE STRING
    "Maintainer field of the Debian package")

install(TARGETS handoffd handoff RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# handoffd.service names the installed daemon in ExecStart=, and where that is depends on the
# prefix chosen when installing (`cmake --install --prefix P`; CPack installs under /usr), not
# when configuring. So the unit is configured by the install step itself.
set(handoff_service_template "${PROJECT_SOURCE_DIR}/systemd/handoffd.service.in")
set(handoff_service_staged "${PROJECT_BINARY_DIR}/systemd/install/handoffd.service")
install(CODE "
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_BINDIR}\")
    set(CMAKE_INSTALL_FULL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  else()
    set(CMAKE_INSTALL_FULL_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  endif()
  configure_file(\"${handoff_service_template}\" \"${handoff_service_staged}\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${HANDOFF_USER_UNIT_DIR}\" TYPE FILE
       FILES \"${handoff_service_staged}\")
")
install(FILES systemd/handoffd.socket DESTINATION ${HANDOFF_USER_UNIT_DIR})

# The Pi package as a user needs it: sources, package.json, and dist/ when it was built; not
# its dependencies (npm install brings them), its tests or its build state.
install(DIRECTORY client/pi/ DESTINATION ${CMAKE_INSTALL_DATADIR}/handoff/pi
        PATTERN node_modules EXCLUDE
        PATTERN test EXCLUDE
        PATTERN .gitignore EXCLUDE
        PATTERN "*.tsbuildinfo" EXCLUDE)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The same units for the build tree, with ExecStart= naming the handoffd just built, so tests
# can check them with `systemd-analyze verify` (which requires the binary to exist).
function(handoff_build_tree_units)
  set(CMAKE_INSTALL_FULL_BINDIR "$<TARGET_FILE_DIR:handoffd>")  # local to this function
  configure_file(${handoff_service_template} ${PROJECT_BINARY_DIR}/systemd/handoffd.service.genex @ONLY)
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/systemd/handoffd.service
       INPUT ${PROJECT_BINARY_DIR}/systemd/handoffd.service.genex)
  configure_file(${PROJECT_SOURCE_DIR}/systemd/handoffd.socket ${PROJECT_BINARY_DIR}/systemd/handoffd.socket
                 COPYONLY)
endfunction()
handoff_build_tree_units()

# The Debian package.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME handoff)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${HANDOFF_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "bounded head+tail handoff of long subagent results to a parent agent")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${HANDOFF_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "bounded head+tail handoff of long subagent results to a parent agent
 handoffd is a local per-user daemon on a Unix socket (JSON-RPC 2.0) between a
 parent coding agent and its subagents. It turns arbitrarily long final answers
 into bounded projections that keep both the head and the tail, saves the exact
 full text as a private content-addressed file the parent can page through, and
 shares one budget across a batch. Completions survive a daemon crash.
 .
 Includes the handoff command line, systemd user units (socket activation:
 systemctl --user enable --now handoffd.socket) and the TypeScript client and
 Pi extension sources.")
# Runtime libraries (libspdlog, libfmt, libssl, libstdc++...) from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nodejs")
include(CPack)
