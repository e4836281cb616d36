# SPDX-License-Identifier: Apache-2.0
# src/plugin/reload: sources and tests of the reload plugin
src_plugin_libplugins_a_SOURCES += src/plugin/reload/reload.c src/plugin/reload/reload.h
EXTRA_DIST += src/plugin/reload/README.md
TESTS += tests/integration/reload.sh
EXTRA_DIST += tests/integration/reload.sh
