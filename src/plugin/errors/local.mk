# SPDX-License-Identifier: Apache-2.0
# src/plugin/errors: sources and tests of the errors plugin
src_plugin_libplugins_a_SOURCES += src/plugin/errors/errors.c src/plugin/errors/errors.h
EXTRA_DIST += src/plugin/errors/README.md
TESTS += tests/integration/errors.sh
EXTRA_DIST += tests/integration/errors.sh
