# handoff as systemd runs it and as Debian installs it: shell tests around the real tools
# (systemd-analyze, cpack, dpkg-deb). Both need the built binaries, as every test does.
set(HANDOFF_MAX_EXPOSURE 2.0 CACHE STRING
    "Highest `systemd-analyze security` exposure accepted for handoffd.service (docs/configuration.md records the figure)")

add_test(NAME systemd_units
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/units_test.sh ${PROJECT_BINARY_DIR}/systemd ${HANDOFF_MAX_EXPOSURE})
add_test(NAME debian_package COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/package_test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(systemd_units PROPERTIES TIMEOUT 60)
set_tests_properties(debian_package PROPERTIES TIMEOUT 120 RESOURCE_LOCK handoff_install)
