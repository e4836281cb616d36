# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/template/template.c src/plugin/template/tmpl.c \
	src/plugin/template/tmpl.h
TESTS += tests/integration/template.sh
EXTRA_DIST += tests/integration/template.sh src/plugin/template/README.md
check_PROGRAMS += tests/unit/test_template
TESTS += tests/unit/test_template
tests_unit_test_template_SOURCES = tests/unit/test_template.c tests/unit/testenv.c tests/unit/testenv.h \
	src/plugins.c
tests_unit_test_template_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_template_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)

# The evaluator's fuzz harness: a libFuzzer target when built with
# -DFUZZING_LIBFUZZER (see its top comment); here its main() runs a fixed
# set of generated texts as a test.
check_PROGRAMS += tests/fuzz/fuzz_template
TESTS += tests/fuzz/fuzz_template
tests_fuzz_fuzz_template_SOURCES = tests/fuzz/fuzz_template.c src/plugin/template/tmpl.c \
	src/plugin/template/tmpl.h
tests_fuzz_fuzz_template_CFLAGS = $(AM_CFLAGS) $(FUZZ_DEFS)
tests_fuzz_fuzz_template_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_template_LDADD = $(LIBCOMMON)
